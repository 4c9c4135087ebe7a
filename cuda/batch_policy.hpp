// When the CUDA engine's launcher sends the frames that are ready as a batch, and when it lets
// them wait for more pairs to join (docs/PERFORMANCE.md, "Batches that wait for their pairs").
// Host code only, without CUDA, so that the unit tests hold it.
//
// A free batch slot used to send whatever was ready at once. With several pairs each keeping
// frames in flight, frames arrive one pair at a time, so most batches held one to three pairs of
// the eight that could share them, and each paid the per-batch costs (a graph launch, the chain
// of latency-bound coarse kernels, the completion's notice) that batching is for. Now a batch
// goes at once while fewer than kEagerBatches are on their way (the GPU would otherwise run out of
// queued work), or when it is full: every pair that could join it has a frame ready.
//
// A pair could join when it has a frame ready, or a slot that is not on the GPU (free, being
// filled, or holding a result its caller has not taken yet) and it keeps sending frames: it sent
// one or had one back within the horizon (a few batch spans on the GPU, horizon_for_span). A pair
// whose frames are all on their way cannot join before a batch comes back, and no batch waits for
// it (with sixteen pairs of two frames in flight each, waiting for those cost 13 %); nor for a pair
// whose camera has stopped or runs far slower than the GPU. A lone pair's batches are always full,
// so it keeps all its frames in flight as before.
#pragma once

#include <cstddef>
#include <optional>
#include <vector>

namespace stereod::cuda {

// Batches sent at once however few pairs they hold, while fewer than this many are on their way:
// one computing and nothing queued behind it. Three (one more whose upload overlaps) split the
// batches: a batch's completion left two on their way, so the first pair to submit again went
// alone and the others followed in a second batch (4.4-4.8 pairs a batch of eight, session 22).
constexpr int kEagerBatches = 2;

// in_flight: batches on their way; ready: the pairs with a frame for this batch; joinable: the
// pairs that could join it now (same size and shape; pair_could_join), at most the batch's
// capacity.
inline bool launch_batch_now(int in_flight, int ready, int joinable) {
  if (ready <= 0) return false;
  return in_flight < kEagerBatches || ready >= joinable;
}

// Before a batch of a kind came back, no horizon is known.
constexpr double kNoHorizon = -1.0;

// The horizon for a kind whose batches take `span_ms` on the GPU: a few spans, and never less
// than a couple of milliseconds, so that a host that feeds its pairs in turn (one thread, a
// round over them slower than a small batch's span) is still waited for, while a stopped camera
// holds its kind's batches for a few spans at most. One span alone was too short: at 320x240 the
// GPU test's six pairs of four in flight fell to one pair a batch on a slower host.
constexpr double kHorizonSpans = 4.0, kMinHorizonMs = 2.0;
inline double horizon_for_span(double span_ms) {
  const double h = kHorizonSpans * span_ms;
  return h > kMinHorizonMs ? h : kMinHorizonMs;
}

// Whether a batch should count on a pair's next frame. frame_ready: it has one waiting;
// slot_off_gpu: one of its slots is not on the GPU (a frame can come into it once its caller has
// what it holds); since_ms: since it last sent a frame or had one back (infinite if never);
// horizon_ms: horizon_for_span of its kind's batches on the GPU, kNoHorizon before one came back
// (then a pair with a slot off the GPU counts, as a free slot did before the horizon existed).
inline bool pair_could_join(bool frame_ready, bool slot_off_gpu, double since_ms,
                            double horizon_ms) {
  if (frame_ready) return true;
  if (!slot_off_gpu) return false;
  return horizon_ms < 0.0 || since_ms <= horizon_ms;
}

// What the launcher knows of a pair when it picks a batch: its batch key (pairs of one key can
// share a batch), whether it has a frame ready, and whether it could join (pair_could_join).
struct PairOutlook {
  int key = 0;
  bool ready = false;
  bool could_join = false;
};

// The batch to send now, if any: its lead (the first pair with a frame ready, round robin from
// `next`) and the pairs of the lead's key with a frame ready, from the lead round, at most
// `capacity`. A lead whose batch must wait (launch_batch_now) does not hold up the next lead of
// another key, whose batch may be full.
struct BatchChoice {
  std::size_t lead = 0;
  std::vector<std::size_t> members;
};
inline std::optional<BatchChoice> choose_batch(const std::vector<PairOutlook>& pairs,
                                               std::size_t next, int in_flight, int capacity) {
  const std::size_t n = pairs.size();
  std::vector<int> waiting;  // keys whose batch must wait
  for (std::size_t i = 0; i < n; ++i) {
    const std::size_t lead = (next + i) % n;
    const int key = pairs[lead].key;
    if (!pairs[lead].ready) continue;
    bool seen = false;
    for (int k : waiting) seen = seen || k == key;
    if (seen) continue;
    BatchChoice c;
    c.lead = lead;
    int joinable = 0;
    for (std::size_t k = 0; k < n; ++k) {
      const std::size_t j = (lead + k) % n;
      if (pairs[j].key != key) continue;
      if (joinable < capacity && pairs[j].could_join) ++joinable;
      if (pairs[j].ready && static_cast<int>(c.members.size()) < capacity) c.members.push_back(j);
    }
    if (launch_batch_now(in_flight, static_cast<int>(c.members.size()), joinable)) return c;
    waiting.push_back(key);
  }
  return std::nullopt;
}

}  // namespace stereod::cuda
