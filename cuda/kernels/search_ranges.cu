// Stage: each pixel's candidate range at one level (search_range.cpp on the CPU, the rule in
// pixel_ops.hpp: twice the span of the valid parent disparities in the (2r+1)^2 neighbourhood of
// its parent, widened by 2, or the whole range), and the level's work lists.
//
// One block per 32 x 16 tile. A tile without foreground (the background model's block marks) is
// finished here: "no disparity", no work. Otherwise the block stages the tile's parent
// neighbourhood once, cross-checked, and takes each parent's window min and max over it
// separably (rows, then columns): 16 x (8 + 2r) row windows and 16 x 8 column windows, one per
// parent, which its four children share. The tile's candidates [lo, hi] (within the image) become
// one work item, or several segments of pieces (piece_length) when they span more than
// lv.segment, each listed with [lo, hi] (list_entry); at the finest level the tile is also listed
// for post-processing.
//
// With the finest level's aggregations shared (`shared`, shared_finest.cuh), that level lists
// differently: the left view's tiles only record their union (the list kernel of shared_finest.cu
// lists them with the right view's needs that may fall on their columns), and the right view's
// tiles record which pixels are shared (with their candidates), the union of the shared needs and
// the left columns they fall on, and list items only for their residual pixels.
#include "kernels/device_common.cuh"
#include "kernels/launch.cuh"
#include "kernels/shared_finest.cuh"
#include "kernels/stages.hpp"

namespace stereod::cuda {
namespace {

constexpr int kMaxRadius = 4;  // stereo.parent_radius is at most 4 (params.cpp)
constexpr int kParentW = kTileW / 2 + 2 * kMaxRadius;
constexpr int kParentH = kTileH / 2 + 2 * kMaxRadius;
constexpr int kRows = kTileH / kBlockH;
constexpr std::int16_t kNoneLo = 0x7FFF;  // min over an empty window

// The shared right view's tile (finest level): what this thread's pixels' candidates (in
// pixel_cands) make of them (shared_cands_of), out for the matcher and the right winners kernel;
// returns the residual pixels' union, whether any pixel has candidates, and the shared pixels'
// needs' union and the left columns they fall on (x + need).
struct SharedNeeds {
  int lo, hi;
  bool any;
  int need_lo, need_hi;
  int col_lo, col_hi;
};
__device__ __forceinline__ SharedNeeds shared_needs(const LevelBuffers& lv,
                                                    std::uint32_t (*pixel_cands)[kTileW], int x,
                                                    int y0) {
  SharedNeeds out{kEmptyLo, kEmptyHi, false, kEmptyLo, kEmptyHi, kEmptyLo, kEmptyHi};
  const int w = lv.width, h = lv.height, nd = lv.disparities;
#pragma unroll
  for (int k = 0; k < kRows; ++k) {
    const int y = y0 + threadIdx.y + k * kBlockH;
    const std::uint32_t candidates = pixel_cands[threadIdx.y + k * kBlockH][threadIdx.x];
    std::uint32_t shared = kSharedNone;
    if (candidates != kSharedNone) {
      const int lo = range_lo_of(candidates), hi = range_hi_of(candidates);
      shared = shared_cands_of(lo, hi, x, w, nd);
      if (shared == kNotShared) {
        out.lo = min(out.lo, lo);
        out.hi = max(out.hi, hi);
      } else {
        const std::uint32_t needs = shared_needs_of(lo, hi, x, w, nd);
        out.need_lo = min(out.need_lo, range_lo_of(needs));
        out.need_hi = max(out.need_hi, range_hi_of(needs));
        out.col_lo = min(out.col_lo, x + range_lo_of(needs));
        out.col_hi = max(out.col_hi, x + range_hi_of(needs));
      }
      out.any = true;
    }
    if (x < w && y < h) lv.shared_cands[y * w + x] = shared;
  }
  return out;
}

// As many blocks per SM as its threads allow (kFullSmBlocks): a block is a short chain of loads
// and barriers (level 0 at 1024x768 was nearly five waves of 3,072 blocks at 48 registers).
// kShared: the shared finest level (finest only).
template <bool kShared>
__global__ void __launch_bounds__(kBlockW* kBlockH, kFullSmBlocks)
    search_ranges_kernel(const BatchRecord* __restrict__ batch, LevelLists lists, int level) {
  constexpr bool shared = kShared;
  after_previous_stage();
  __shared__ std::int16_t parent[kParentH][kParentW];
  __shared__ std::int16_t row_min[kParentH][kTileW / 2];
  __shared__ std::int16_t row_max[kParentH][kTileW / 2];
  __shared__ std::int16_t range_lo[kTileH / 2][kTileW / 2], range_hi[kTileH / 2][kTileW / 2];
  __shared__ int tile_lo, tile_hi;
  __shared__ int right_reach[4];  // the shared right needs' union and left columns (SharedNeeds)
  __shared__ std::uint32_t pixel_cands[kTileH][kTileW];  // the right pixels' candidates

  const int m = blockIdx.z >> 1, view = blockIdx.z & 1;
  const MemberArgs& a = *batch->member[m];
  const LevelBuffers& lv = a.level[level];
  const int w = lv.width, h = lv.height, nd = lv.disparities;
  const int t = blockIdx.y * lv.tiles_x + blockIdx.x;
  const int x0 = blockIdx.x * kTileW, y0 = blockIdx.y * kTileH;
  const int tid = threadIdx.y * kBlockW + threadIdx.x;
  const int x = x0 + threadIdx.x;
  const bool finest = level == 0;
  const bool listed_for_post = finest && (view == 0 || a.out_disp[1] != nullptr);
  const std::uint8_t* mask = a.modeling ? lv.mask[view] : nullptr;
  // Semi-global and cross-based aggregation read every pixel's range, as the CPU has it (sgm.cu,
  // cross.cu): every aggregation but the window's.
  const bool sgm = a.stereo.aggregation != Aggregation::kWindow;
  const bool shared_right = shared && view == 1;

  // A tile without foreground in this view: nothing to match.
  bool active = true;
  if (mask) {
    const int bx = (w + kBlockW - 1) / kBlockW, by = (h + kBlockH - 1) / kBlockH;
    const int b0 = 2 * blockIdx.y;
    active = lv.block_fg[view][b0 * bx + blockIdx.x] != 0 ||
             (b0 + 1 < by && lv.block_fg[view][(b0 + 1) * bx + blockIdx.x] != 0);
  }
  auto finish_empty = [&] {
#pragma unroll
    for (int k = 0; k < kRows; ++k) {
      const int y = y0 + threadIdx.y + k * kBlockH;
      if (x >= w || y >= h) continue;
      lv.disp[view][y * w + x] = kNoDisparity;
      if (finest) a.q4[view][y * w + x] = kInvalidDisparity;
      // No foreground: not matched. The shared finest level's left tiles may still be listed
      // (for right pixels' needs), and read these.
      if ((sgm || shared) && !active) {
        lv.lo[view][y * w + x] = 0;
        lv.hi[view][y * w + x] = -1;
      }
      if (shared_right) lv.shared_cands[y * w + x] = kNotShared;  // finished here
    }
    if (finest && tid == 0) a.post_active[view][t] = 0;
    if (shared && tid == 0) lv.shared_tiles[kSharedTileWords * t + view] = kSharedNone;
  };
  if (!active) {
    finish_empty();
    return;
  }

  if (tid == 0) {
    tile_lo = kEmptyLo;
    tile_hi = kEmptyHi;
  }
  if (tid < 4) right_reach[tid] = tid % 2 == 0 ? kEmptyLo : kEmptyHi;
  const bool has_parent = level + 1 < a.levels;
  const int r = a.stereo.parent_radius;
  const int dir = view == 0 ? -1 : 1;
  if (has_parent) {
    // The parents around the tile's, cross-checked once each (rows by warp, columns by lane: no
    // division); outside the image: none (so a window that would be clamped at the border holds
    // the same values).
    const LevelBuffers& pl = a.level[level + 1];
    const int pw = pl.width, ph = pl.height;
    const int pu0 = x0 / 2 - r, pv0 = y0 / 2 - r;
    const int rw = kTileW / 2 + 2 * r, rh = kTileH / 2 + 2 * r;
    static_assert(kParentW <= kBlockW, "a lane per staged column");
    for (int rr = threadIdx.y; rr < rh; rr += kBlockH) {
      const int cc = threadIdx.x, u = pu0 + cc, v = pv0 + rr;
      if (cc < rw) {
        parent[rr][cc] = (u >= 0 && u < pw && v >= 0 && v < ph)
                             ? checked_value(pl.disp[view], pl.disp[1 - view], pw, u, v, dir,
                                             a.stereo.cross_check, a.stereo.cross_check_tolerance)
                             : kNoDisparity;
      }
    }
    __syncthreads();
    // The window's min and max, separably: over its columns for every staged row, then over its
    // rows for each of the tile's 16 x 8 parents. The four children of a parent share its window,
    // so each range is taken once for them (parent_range in pixel_ops.hpp).
    static_assert(kParentH * (kTileW / 2) <= kBlockW * kBlockH, "a thread per row window");
    {
      const int rr = tid / (kTileW / 2), j = tid % (kTileW / 2);
      if (rr < rh) {
        std::int16_t mn = kNoneLo, mx = kNoDisparity;
        for (int u = j; u <= j + 2 * r; ++u) {
          const std::int16_t d = parent[rr][u];
          if (d == kNoDisparity) continue;
          mn = min(mn, d);
          mx = max(mx, d);
        }
        row_min[rr][j] = mn;
        row_max[rr][j] = mx;
      }
    }
    __syncthreads();
    if (tid < (kTileH / 2) * (kTileW / 2)) {
      const int pr = tid / (kTileW / 2), j = tid % (kTileW / 2);
      int mn = kNoneLo, mx = kNoDisparity;
      const auto take_row = [&](int rr) {
        mn = min(mn, static_cast<int>(row_min[rr][j]));
        mx = max(mx, static_cast<int>(row_max[rr][j]));
      };
      if (r == 2) {  // the default radius unrolled (the general loop's count and test cost more)
#pragma unroll
        for (int k = 0; k < 5; ++k) take_row(pr + k);
      } else {
        for (int k = 0; k <= 2 * r; ++k) take_row(pr + k);
      }
      int lo = 0, hi = nd - 1;
      if (mx >= 0) {
        lo = clamp_int(2 * mn - 2, 0, nd - 1);
        hi = clamp_int(2 * mx + 2, 0, nd - 1);
      }
      range_lo[pr][j] = static_cast<std::int16_t>(lo);
      range_hi[pr][j] = static_cast<std::int16_t>(hi);
    }
  }
  __syncthreads();

  // This thread's pixels' candidates (the right view of the shared finest level: below).
  int my_lo = kEmptyLo, my_hi = kEmptyHi;
#pragma unroll
  for (int k = 0; k < kRows; ++k) {
    const int y = y0 + threadIdx.y + k * kBlockH;
    // The shared right view's candidates, packed (none outside the image, or in the background).
    std::uint32_t candidates = kSharedNone;
    const bool inside = x < w && y < h;
    const int i = y * w + x;
    if (inside && mask && mask[i] == 0) {  // background: not matched
      lv.lo[view][i] = 0;
      lv.hi[view][i] = -1;
    } else if (inside) {
      int lo = 0, hi = nd - 1;
      if (has_parent) {
        const int pr = (threadIdx.y + k * kBlockH) / 2, j = threadIdx.x / 2;
        lo = range_lo[pr][j];
        hi = range_hi[pr][j];
      }
      // Candidates whose partner lies outside the image are never allowed. The semi-global volume
      // keeps them (as kNoCost), so that it holds the CPU's cells and fails where the CPU's does.
      lv.lo[view][i] = static_cast<std::int16_t>(lo);
      lv.hi[view][i] = static_cast<std::int16_t>(sgm ? hi : min(hi, dir < 0 ? x : w - 1 - x));
      const int reach = dir < 0 ? x : w - 1 - x;
      hi = min(hi, reach);
      if (shared_right) {
        if (lo <= hi) candidates = pack_range(lo, hi);
      } else if (lo <= hi) {
        my_lo = min(my_lo, lo);
        my_hi = max(my_hi, hi);
      }
    }
    if (shared_right) pixel_cands[threadIdx.y + k * kBlockH][threadIdx.x] = candidates;
  }
  // The shared right view's needs: the residual pixels make the tile's union.
  bool any = false;  // the shared right view: whether any pixel has candidates
  if (shared_right) {
    const SharedNeeds n = shared_needs(lv, pixel_cands, x, y0);
    my_lo = n.lo;
    my_hi = n.hi;
    any = n.any;
    // The tile's reach for the list kernel: one shared atomic per warp and value.
    const int need_lo = __reduce_min_sync(0xFFFFFFFFu, n.need_lo);
    const int need_hi = __reduce_max_sync(0xFFFFFFFFu, n.need_hi);
    const int col_lo = __reduce_min_sync(0xFFFFFFFFu, n.col_lo);
    const int col_hi = __reduce_max_sync(0xFFFFFFFFu, n.col_hi);
    if (threadIdx.x == 0 && need_lo <= need_hi) {
      atomicMin(&right_reach[0], need_lo);
      atomicMax(&right_reach[1], need_hi);
      atomicMin(&right_reach[2], col_lo);
      atomicMax(&right_reach[3], col_hi);
    }
  }

  // The tile's union: one shared atomic per warp (512 on one address serialised).
  my_lo = __reduce_min_sync(0xFFFFFFFFu, my_lo);
  my_hi = __reduce_max_sync(0xFFFFFFFFu, my_hi);
  if (threadIdx.x == 0 && my_lo <= my_hi) {
    atomicMin(&tile_lo, my_lo);
    atomicMax(&tile_hi, my_hi);
  }
  any = __syncthreads_or(any) != 0;  // the tile's union is in too
  const int tlo = tile_lo, thi = tile_hi;
  if (!any && tlo > thi) {  // matched pixels, but none has a candidate
    finish_empty();
    return;
  }
  if (shared && view == 0) {  // listed by the list kernel
    if (tid == 0) {
      lv.shared_tiles[kSharedTileWords * t] = pack_range(tlo, thi);
      a.post_active[view][t] = listed_for_post ? 1 : 0;
    }
    return;
  }
  // The tile's items: of its residual pixels only in the shared right view (none when every
  // pixel is shared: the right winners kernel writes them).
  if (tlo <= thi) {
    // Whether the tile is split, without tile_segments' division in every thread.
    if (thi - tlo >= piece_length(tlo, thi, lv.segment, nd, finest))
      clear_tile_keys(lv, view, x, y0, threadIdx.y, kBlockH);
    if (tid == 0) list_tile(lists, lv, m, view, t, tlo, thi, tile_segments(lv, tlo, thi, finest));
  }
  if (finest && tid == 0) a.post_active[view][t] = listed_for_post ? 1 : 0;
  if (shared_right && tid == 0) {
    // The shared needs' union and the left columns they fall on (shared_finest.cuh).
    const bool none = right_reach[0] > right_reach[1];
    lv.shared_tiles[kSharedTileWords * t + 1] =
        none ? kSharedNone : pack_range(right_reach[0], right_reach[1]);
    lv.shared_tiles[kSharedTileWords * t + 2] = pack_range(right_reach[2], right_reach[3]);
  }
}

}  // namespace

void launch_search_ranges(const BatchShape& shape, const BatchRecord* batch, const Workspace& ws,
                          int level, cudaStream_t stream) {
  const dim3 grid(static_cast<unsigned>(shape.tiles_x(level)),
                  static_cast<unsigned>(shape.tiles_y(level)),
                  static_cast<unsigned>(2 * shape.count));
  const bool shared = shape.shared_finest && level == 0;
  launch_stage("search_ranges_kernel", shape.chained,
               shared ? search_ranges_kernel<true> : search_ranges_kernel<false>, grid,
               dim3(kBlockW, kBlockH), 0, stream, batch, ws.level(level), level);
}

}  // namespace stereod::cuda
