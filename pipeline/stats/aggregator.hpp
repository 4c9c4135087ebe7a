// Collects per-pair frame counts, drops and stage latencies as frames go by, and turns them into
// the once-a-second snapshot the stats topic carries. Thread-safe: ingest counts sync and
// engine-busy drops, the publisher records each frame it sends and its own drops, and
// snapshot() is called once per interval (by the Publisher).
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "publish/protocol.hpp"
#include "stats/stats.hpp"

namespace stereod::stats {

class StatsAggregator {
 public:
  using Clock = std::chrono::steady_clock;

  // Percentiles come from at most this many samples per stage and interval (a uniform reservoir
  // sample beyond that); count and max stay exact.
  explicit StatsAggregator(std::size_t samples_per_stage = 2048);

  // A pair appears in every snapshot from now on, with zeros while nothing happens to it (so a
  // stalled pair is visible). Recording for an unknown pair adds it too.
  void add_pair(std::string_view pair);
  void remove_pair(std::string_view pair);

  // One frame of `pair` was published; `stages` are its latencies (ms), each stage's samples go
  // into that stage's percentiles.
  void record_frame(std::string_view pair, const std::vector<publish::StageLatency>& stages);
  void record_drop(std::string_view pair, DropReason reason, std::uint64_t count = 1);
  // A failed frame or a source error; the message shows as the pair's last_error.
  void record_error(std::string_view pair, std::string message);

  // Closes the current interval: its counts and percentiles, and the totals so far. The
  // publisher part of the result is left zero (the Publisher fills it).
  StatsSnapshot snapshot();
  StatsSnapshot snapshot(Clock::time_point now, std::int64_t realtime_ns);
  // The latest snapshot taken, if any (e.g. for a status line).
  std::optional<StatsSnapshot> last_snapshot() const;

 private:
  struct StageSamples {
    std::vector<double> samples;  // reservoir
    std::uint64_t seen = 0;
    double max = 0;
  };
  struct PairState {
    std::uint64_t frames = 0;
    DropCounts drops{};
    std::uint64_t frames_total = 0;
    DropCounts drops_total{};
    std::uint64_t errors_total = 0;
    std::string last_error;
    std::vector<std::pair<std::string, StageSamples>> stages;  // first-seen order
  };

  PairState& pair_state(std::string_view pair);  // caller holds mutex_
  void add_sample(StageSamples& s, double ms);

  const std::size_t samples_per_stage_;
  mutable std::mutex mutex_;
  std::map<std::string, PairState, std::less<>> pairs_;
  Clock::time_point interval_start_;
  std::uint64_t rng_state_ = 0x9E3779B97F4A7C15ull;  // fixed seed: snapshots are reproducible
  std::optional<StatsSnapshot> last_;
};

// Nearest-rank percentiles of `samples` (reordered in place); all zero when empty.
LatencySummary summarize(std::vector<double>& samples);

}  // namespace stereod::stats
