// Stage: the finest level's aggregations shared by both views (shared_finest.cuh), the two
// kernels around the matcher.
//
// list_shared_tiles: after the search ranges, one warp per finest tile lists it for the left
// view's matcher items with the union of its own candidates and the needs of the shared right
// pixels that may fall on its columns (cut into segments as search_ranges.cu cuts a tile).
//
// right_winners: after the matcher, one thread per right pixel takes a shared pixel's winner from
// the slots the left tiles wrote, as the matcher's walk over its candidates would (the smallest
// cost, the smaller d on a tie, a candidate whose partner the left mask calls background refused),
// and its subpixel step from the costs beside it.
#include "kernels/device_common.cuh"
#include "kernels/launch.cuh"
#include "kernels/shared_finest.cuh"
#include "kernels/stages.hpp"

namespace stereod::cuda {
namespace {

// The right tiles whose needs may fall on a left tile's columns: its own column of tiles and
// those up to (kTileW - 1 + kMaxDisparity - 1) / kTileW to its left.
constexpr int kMappedTiles = (kTileW - 1 + kMaxDisparity - 1) / kTileW + 1;
constexpr int kListWarps = 8;  // tiles per block of the list kernel, a warp each

__global__ void __launch_bounds__(32 * kListWarps)
    list_shared_tiles_kernel(const BatchRecord* __restrict__ batch, LevelLists lists) {
  after_previous_stage();
  const int m = static_cast<int>(blockIdx.z);
  const MemberArgs& a = *batch->member[m];
  const LevelBuffers& lv = a.level[0];
  const int tx = static_cast<int>(blockIdx.x * kListWarps + threadIdx.y);
  if (tx >= lv.tiles_x) return;
  const int ty = static_cast<int>(blockIdx.y);
  const int t = ty * lv.tiles_x + tx;
  const std::uint32_t left = lv.shared_tiles[kSharedTileWords * t];
  int lo = kEmptyLo, hi = kEmptyHi;
  if (range_lo_of(left) <= range_hi_of(left)) {
    lo = range_lo_of(left);
    hi = range_hi_of(left);
  }
  // The right tiles whose shared needs may fall on this tile's columns: this column of tiles and
  // those to its left (d >= 0), up to kMappedTiles. A right tile at column bx reaches this one
  // at d within 32 (tx - bx) +- 31; its needs' union, cut to that, joins this tile's.
  const int x0 = tx * kTileW;
  for (int j = static_cast<int>(threadIdx.x); j < kMappedTiles && j <= tx; j += 32) {
    const std::uint32_t* words = lv.shared_tiles + kSharedTileWords * (t - j);
    const std::uint32_t needs = words[1], cols = words[2];
    if (range_lo_of(needs) > range_hi_of(needs)) continue;
    if (range_lo_of(cols) > x0 + kTileW - 1 || range_hi_of(cols) < x0) continue;
    lo = min(lo, max(range_lo_of(needs), j * kTileW - (kTileW - 1)));
    hi = max(hi, min(range_hi_of(needs), j * kTileW + kTileW - 1));
  }
  lo = __reduce_min_sync(0xFFFFFFFFu, lo);
  hi = __reduce_max_sync(0xFFFFFFFFu, hi);
  if (lo > hi) return;  // no candidate of either view here: search_ranges.cu finished it
  // Cut into segments as search_ranges.cu cuts a tile; a split tile's keys cleared by the warp.
  const int segments = tile_segments(lv, lo, hi, true);
  if (segments > 1) clear_tile_keys(lv, 0, x0 + static_cast<int>(threadIdx.x), ty * kTileH, 0, 1);
  if (threadIdx.x == 0) list_tile(lists, lv, m, 0, t, lo, hi, segments);
}

// One pass of a few loads per pixel: its costs are loaded eight at a time before any is used (into
// registers, by unrolled loops), the second eight only where its needs are more than eight.
constexpr int kChunk = 8;
static_assert(kRightSlots == 2 * kChunk, "two chunks of slots");

// The costs of d = need_lo + first .. + kChunk - 1 onto the walk.
template <int kFirst>
__device__ __forceinline__ void walk_chunk(CostWalk& walk, const std::uint16_t* slots, int plane,
                                           const std::uint8_t* partner_fg, int need_lo,
                                           int need_hi) {
  std::uint32_t c[kChunk];
#pragma unroll
  for (int k = 0; k < kChunk; ++k) {
    const int d = need_lo + kFirst + k;
    c[k] = d <= need_hi ? slots[right_slot(d) * plane] : kNone16;
  }
  if (partner_fg) {
#pragma unroll
    for (int k = 0; k < kChunk; ++k) {
      const int d = need_lo + kFirst + k;
      if (d <= need_hi && partner_fg[d] == 0) c[k] = kNone16;
    }
  }
#pragma unroll
  for (int k = 0; k < kChunk; ++k) walk.visit(need_lo + kFirst + k, c[k]);
}

__global__ void __launch_bounds__(kBlockW* kBlockH)
    right_winners_kernel(const BatchRecord* __restrict__ batch) {
  after_previous_stage();
  const PixelAt p(batch, 1);
  const LevelBuffers& lv = p.lv;
  // A tile without shared pixels that have candidates was finished before (by search_ranges.cu,
  // or by its residual items): most of the image where the background model leaves little.
  const int t =
      static_cast<int>(blockIdx.y) / (kTileH / kBlockH) * lv.tiles_x + static_cast<int>(blockIdx.x);
  if (lv.shared_tiles[kSharedTileWords * t + 1] == kSharedNone || !p.inside) return;
  const std::uint32_t cands = lv.shared_cands[p.i];
  if (cands == kNotShared) return;  // the residual items matched it
  CostWalk walk;
  walk.lo = range_lo_of(cands);
  walk.hi = range_hi_of(cands);
  std::uint16_t q = kInvalidDisparity;  // the right view has no cost ratio
  if (walk.lo <= walk.hi) {             // kSharedNone: no candidates
    const std::uint32_t needs = shared_needs_of(walk.lo, walk.hi, p.x, p.w, lv.disparities);
    const int need_lo = range_lo_of(needs), need_hi = range_hi_of(needs);
    const int plane = p.w * p.h;  // kRightSlots planes: int offsets
    const std::uint16_t* slots = lv.right_slots + p.i;
    // The partner of d is left pixel x + d; with the background model only its foreground.
    const std::uint8_t* partner_fg = p.a.modeling ? lv.mask[0] + p.i : nullptr;
    walk_chunk<0>(walk, slots, plane, partner_fg, need_lo, need_hi);
    if (need_hi - need_lo >= kChunk)
      walk_chunk<kChunk>(walk, slots, plane, partner_fg, need_lo, need_hi);
    q = winner_outputs(walk.best_d, lv.disparities, walk.best, walk.cm, walk.cp, kNone16,
                       p.a.stereo.subpixel)
            .q4;
  }
  lv.disp[1][p.i] = static_cast<std::int16_t>(walk.best_d);
  p.a.q4[1][p.i] = q;
}

}  // namespace

void launch_list_shared_tiles(const BatchShape& shape, const BatchRecord* batch,
                              const Workspace& ws, cudaStream_t stream) {
  const dim3 grid(static_cast<unsigned>((shape.tiles_x(0) + kListWarps - 1) / kListWarps),
                  static_cast<unsigned>(shape.tiles_y(0)), static_cast<unsigned>(shape.count));
  launch_stage("list_shared_tiles_kernel", shape.chained, list_shared_tiles_kernel, grid,
               dim3(32, kListWarps), 0, stream, batch, ws.level(0));
}

void launch_right_winners(const BatchShape& shape, const BatchRecord* batch, cudaStream_t stream) {
  launch_stage("right_winners_kernel", shape.chained, right_winners_kernel,
               member_grid(shape.level_width[0], shape.level_height[0], shape.count),
               dim3(kBlockW, kBlockH), 0, stream, batch);
}

}  // namespace stereod::cuda
