// When the CUDA engine's launcher sends the frames that are ready as a batch, and when it lets
// them wait for more pairs to join (docs/PERFORMANCE.md, "Batches that wait for their pairs").
// Host code only, without CUDA, so that the unit tests hold it.
//
// A free batch slot used to send whatever was ready at once. With several pairs each keeping
// frames in flight, frames arrive one pair at a time, so most batches held one to three pairs of
// the eight that could share them, and each paid the per-batch costs (a graph launch, the chain
// of latency-bound coarse kernels, the completion's notice) that batching is for. Now a batch
// goes at once while fewer than kEagerBatches are on their way (one computing, the next uploaded
// behind it, one more whose upload overlaps them: the GPU never waits on the host for work), or
// when it is full: every pair that could join it has a frame ready. A pair could join when it has
// a frame ready or a slot free for one; a pair whose frames are all on their way cannot before a
// batch comes back, and no batch waits for it (with sixteen pairs of two frames in flight each,
// waiting for those cost 13 %). Otherwise a batch waits until a batch comes back or another frame
// arrives. A lone pair's batches are always full, so it keeps all its frames in flight as before.
#pragma once

namespace stereod::cuda {

// Batches sent at once however few pairs they hold, while fewer than this many are on their way.
constexpr int kEagerBatches = 3;

// in_flight: batches on their way; ready: the pairs with a frame for this batch; joinable: the
// pairs that could join it now (same size and shape; a frame ready or a slot free), at most the
// batch's capacity.
inline bool launch_batch_now(int in_flight, int ready, int joinable) {
  if (ready <= 0) return false;
  return in_flight < kEagerBatches || ready >= joinable;
}

}  // namespace stereod::cuda
