// The finest level's aggregations shared by both views (the window path, s = 3, more than one
// level; off unless STEREOD_CUDA_SHARED_FINEST=1: DevicePipeline::shares_finest, where the
// measurements that set that default are named).
//
// Why: the right view's aggregated cost at (x, d) is the left view's at (x + d, d), the same
// windows over the same pixel costs (the cost is symmetric in its two pixels), wherever neither
// view's windows are clamped at the image's sides (the stage test
// AdaptiveWindow.RightViewAggregatesAreTheLeftViewsShifted). Matching both views tile by tile
// computed most of those twice. Here the left view's tiles compute, beside their
// own needs, the aggregations the right pixels need (mapped onto the left view's columns), write
// them into a per-pixel slot buffer, and a light kernel takes each right pixel's winner from its
// slots (shared_finest.cu). docs/PERFORMANCE.md, "One volume for both views at the finest level".
//
// A right pixel is shared when its needs [max(0, lo - 1), min(nd - 1, hi + 1, w - 1 - x)] (its
// candidates and one on each side for the parabola, never past the partner's image) fit
// kRightSlots slots and no window of it reads past a side of either image: x >= kWindowReach and
// x + need_hi + kWindowReach <= w - 1 (shared_cands_of). The other right pixels with candidates
// (wide ranges, the sides) are matched as before, in residual items of the right view that skip the
// shared ones.
#pragma once

#include <cstdint>
#include <cstring>

#include "stereo/pixel_ops.hpp"  // STEREOD_HD

namespace stereod::cuda {

constexpr int kRightSlots = 16;  // aggregations one shared right pixel may need
constexpr int kWindowReach = 4;  // sub-window centres at +-3, each sub-window +-1
// LevelBuffers::shared_cands per right pixel: a shared pixel's candidates packed as lo | hi << 16
// (16 bits each; pack_range), kSharedNone where it has none (no disparity), kNotShared where the
// residual items match it. Its needs follow from them (shared_needs_of).
constexpr std::uint32_t kNotShared = 0xFFFFFFFFu;
constexpr std::uint32_t kSharedNone = 0x0000FFFFu;  // lo 65535 > hi 0

STEREOD_HD std::uint32_t pack_range(int lo, int hi) {
  return static_cast<std::uint32_t>(lo) | (static_cast<std::uint32_t>(hi) << 16);
}
STEREOD_HD int range_lo_of(std::uint32_t packed) {
  return static_cast<int>(packed & 0xFFFFu);
}
STEREOD_HD int range_hi_of(std::uint32_t packed) {
  return static_cast<int>(packed >> 16);
}

// The needs of right pixel x (of a row of width w) whose candidates are [lo, hi] (hi at most
// w - 1 - x, as search_ranges.cu writes it for the window path), at a level of nd disparities:
// one more on each side for the parabola, never past the partner's image.
STEREOD_HD std::uint32_t shared_needs_of(int lo, int hi, int x, int w, int nd) {
  const int need_lo = lo > 0 ? lo - 1 : 0;
  int need_hi = hi + 1 < nd ? hi + 1 : nd - 1;
  if (need_hi > w - 1 - x) need_hi = w - 1 - x;
  return pack_range(need_lo, need_hi);
}

// What LevelBuffers::shared_cands holds for that pixel: kSharedNone, kNotShared (its needs do not
// fit kRightSlots slots, or a window of it reads past a side of either image) or its candidates.
STEREOD_HD std::uint32_t shared_cands_of(int lo, int hi, int x, int w, int nd) {
  if (lo > hi) return kSharedNone;
  const std::uint32_t needs = shared_needs_of(lo, hi, x, w, nd);
  const int need_lo = range_lo_of(needs), need_hi = range_hi_of(needs);
  if (need_hi - need_lo + 1 > kRightSlots || x < kWindowReach ||
      x + need_hi + kWindowReach > w - 1) {
    return kNotShared;
  }
  return pack_range(lo, hi);
}

// The slot of a shared right pixel's cost at d: its needs are at most kRightSlots consecutive d,
// so each has a slot of its own, whatever its first need.
static_assert((kRightSlots & (kRightSlots - 1)) == 0, "slots by the low bits of d");
STEREOD_HD int right_slot(int d) {
  return d & (kRightSlots - 1);
}

// LevelBuffers::shared_tiles per finest tile, three words, written by search_ranges.cu each frame:
// the left view's candidates' union (packed as above, kSharedNone when none), the union of the
// right view's shared needs there (kSharedNone when none), and the left columns those fall on
// (x + need, packed the same way). The list kernel reads them.
constexpr int kSharedTileWords = 3;

// STEREOD_CUDA_SHARED_FINEST, for comparisons and tests (read at each configure): "1" shares
// wherever the window path has levels, "0" never, unset (null) leaves the default (-1: off). Any
// other value is refused (-1, *refused set) rather than read as one of them: "off" must not turn
// the sharing on.
inline int shared_finest_override(const char* value, bool* refused) {
  *refused = false;
  if (value == nullptr) return -1;
  if (std::strcmp(value, "0") == 0) return 0;
  if (std::strcmp(value, "1") == 0) return 1;
  *refused = true;
  return -1;
}

}  // namespace stereod::cuda
