// Stage: the adaptive-window matcher for sub-window s = 3 without the uniqueness test (the
// defaults; match_generic.cu serves every other setting), over the work list of search_ranges.cu.
// The arithmetic is adaptive_window.cpp's: the same sums in the same integers.
//
// A fixed grid of resident blocks takes (member, view, segment, tile) items in turn, split tiles
// first. For its 32 x 16 tile a block walks the disparities of the segment four at a time: the
// pixel costs of the tile and a halo of 4 (two disparities per 32-bit word), their 3x3 sub-window
// sums, then each pixel aggregates its centre sub-window and the k smallest of the 8
// around it (at +-3). Only the cells some pixel needs for these four disparities are computed:
// each pixel's needs are an interval, and a cell is computed when the intervals of the rows and
// columns within 4 of it meet the four (a tile at a depth edge has a wide union of ranges, but
// only the pixels near the edge need it).
//
// A tile whose candidates fit one segment is finished by its block. A split tile's segments merge
// through atomicMin((cost << 16) | d): the smallest cost wins, ties the smaller d, exactly as one
// sequential loop would decide, whatever the order of the items; the block that finishes the last
// segment writes the tile's result, with the subpixel step from the neighbours the winning
// segment recorded.
//
// With the finest level shared (`shared`, shared_finest.cuh), a left view's tile also computes the
// aggregations the shared right pixels need on its columns (right pixel x - d at d for its column
// x), and writes them into their slots: each pixel of the tile gets a mask of those d (within the
// item's segment) beside its own needs, and the cells follow both. A right view's item at that
// level (a residual one) leaves the shared pixels to the right winners kernel.
#include <cuda_pipeline.h>

#include <type_traits>

#include "kernels/device_common.cuh"
#include "kernels/launch.cuh"
#include "kernels/shared_finest.cuh"
#include "kernels/stages.hpp"

namespace stereod::cuda {
namespace {

constexpr int kRows = 2;                 // output rows per thread
constexpr int kHalo = 4;                 // sub-window centres at +-3, each sub-window +-1
constexpr int kTw = kTileW + 2 * kHalo;  // 40
constexpr int kTh = kTileH + 2 * kHalo;  // 24
constexpr int kCells = kTw * kTh;
constexpr int kThreads = kBlockW * kBlockH;
constexpr int kSteps = (kCells + kThreads - 1) / kThreads;
constexpr int kPairs = 2;  // disparity pairs per round: four disparities
// The target rows an item reads, staged once: the cell columns and the item's disparities
// (a segment of at most kSegment candidates and one on each side).
constexpr int kSpan = kTw + kSegment + 2 + 2;
// The left view's last round may run up to three disparities past the item's (the tail of a round
// of four, never used): their partners lie before the staged span. A few bytes of slack in front
// keep those reads inside the row instead of clamping every index.
constexpr int kSlack = 4;
static_assert((kSlack + kSpan) % 4 == 0, "the target rows are read a word at a time");
// The target rows' staging: rows per warp, and steps of a warp's width along the span (an item's
// span is at most kTw + kSegment + 1 columns).
constexpr int kStageRows = kTh / kBlockH;
constexpr int kStageSteps = (kSpan + kBlockW - 1) / kBlockW;
static_assert(kTh % kBlockH == 0, "the tile and halo rows split evenly over the warps");
constexpr std::uint32_t kNone = 0xFFFFFFFFu;

static_assert(kTileW == kBlockW && kTileH == kRows * kBlockH, "a thread owns two rows of a tile");

// A census code into shared memory: copied asynchronously (no register holds it while the load is
// on its way, so many are), or 0 without a census term. __pipeline_commit and
// __pipeline_wait_prior(0) end a run of them; a barrier then shows them to the block.
__device__ __forceinline__ void stage_code(std::uint64_t* to, const std::uint64_t* from) {
  if (from)
    __pipeline_memcpy_async(to, from, sizeof(std::uint64_t));
  else
    *to = 0;
}

// One pixel's search within an item: its candidates in this segment [c_lo, c_hi] (the costs it
// needs are these and, at the finest level, one on each side for the parabola: need_lo/need_hi),
// and the running winner with the costs beside it. Those (cm below, cp above) are 16 bits,
// kNone16 where there is none, in one register: (cm << 16) | cp, as split tiles store them. cp is
// kPending16 while the winner is the last disparity visited (cp is then the next one's cost, none
// if there is no next one).
struct PixelSearch {
  int c_lo = kEmptyLo, c_hi = kEmptyHi;
  std::uint32_t best = kNone;
  std::uint32_t prev = kNone16;  // the cost of the disparity before the next one visited
  std::uint32_t cmcp = 0xFFFFFFFFu;
  int best_d = kNoDisparity;
};
constexpr std::uint32_t kPending16 = 0xFFFEu;
__device__ __forceinline__ bool cp_pending(const PixelSearch& p) {
  return (p.cmcp & 0xFFFFu) == kPending16;
}
// cmcp with a pending cp resolved to `cp`.
__device__ __forceinline__ std::uint32_t resolve_cp(const PixelSearch& p, std::uint32_t cp) {
  return cp_pending(p) ? (p.cmcp & 0xFFFF0000u) | cp : p.cmcp;
}

// A round of four disparities this pixel does not need: what visiting them would leave behind.
__device__ __forceinline__ void pass_round(PixelSearch& p) {
  p.cmcp = resolve_cp(p, kNone16);
  p.prev = kNone16;
}

// The right pixels a shared item's tile row may serve: columns x0 - c1 .. x0 + 31 - c0.
constexpr int kRightSpan = kTileW + kSegment;
constexpr int kSpanSteps = kTileH * kRightSpan / kThreads;
static_assert(kTileH * kRightSpan % kThreads == 0,
              "the right pixels split evenly over the threads");
static_assert(kSegment <= 32, "a pixel's shared needs within a segment are one 32-bit mask");

// The sub-window sums exist for the cells at least 1 inside the tile and halo (the outputs read
// those within 3 of a pixel): sw[r - 1][c - 1] holds cell (r, c).
constexpr int kSumCols = kTw - 2, kSumRows = kTh - 2;

// What a block keeps in shared memory: 45.4 KB for the per-view instances (four blocks an SM on
// Hopper, where registers set the limit; three on Orin).
struct Shared {
  std::uint32_t pc[kPairs][kTh][kTw];            // pixel costs of the tile and its halo
  std::uint32_t sw[kPairs][kSumRows][kSumCols];  // their 3x3 sub-window sums (window_sums)
  std::uint64_t ref_code[kTh][kTw];
  std::uint64_t tgt_code[kTh][kSlack + kSpan];  // the target rows, from column tgt_first on
  std::uint8_t ref_val[kTh][kTw];
  alignas(4) std::uint8_t tgt_val[kTh][kSlack + kSpan];  // read as words: rows of whole words
  // Per cell of the tile and halo: the rounds (first disparity d0) it is computed for, [first,
  // end), two signed halfwords (first low) as cells_needed compares them, both at once: where the
  // cell's row and column intervals both meet d0 .. d0+3.
  std::uint32_t cell_rounds[kCells];
  std::uint8_t ad_table[256];
  std::uint8_t census_table[72];
  int row_lo[kTileH], row_hi[kTileH];  // per output row / column: the union of the needs
  int col_lo[kTileW], col_hi[kTileW];
  int cell_row_lo[kTh], cell_row_hi[kTh];  // per cell row / column: within 4 of them
  int cell_col_lo[kTw], cell_col_hi[kTw];
  int need_lo, need_hi;   // the tile's union
  int tile_lo, segments;  // kept here, not in registers, across the walk over the disparities
  int segment;
  int tgt_first;  // image column of tgt_val[.][0]
  std::uint32_t outside;
  std::uint64_t entry;
  int last;
};
// The shared finest level (kShared) also keeps, per pixel of the tile, bit d - c0 where right pixel
// x - d is shared and needs d (c0: the segment's first candidate; read from here each round, not
// kept in registers). The per-view instances leave these 2 KB out.
struct SharedServingRight : Shared {
  std::uint32_t right_bits[kTileH][kTileW];
  int c0;
};
template <bool kShared>
using SharedFor = std::conditional_t<kShared, SharedServingRight, Shared>;
// The masks, or none for a per-view block (whose code never reads them: `shared` is false).
using RightBits = std::uint32_t (*)[kTileW];
__device__ __forceinline__ RightBits right_bits_of(SharedServingRight& sm) {
  return sm.right_bits;
}
__device__ __forceinline__ RightBits right_bits_of(Shared&) {
  return nullptr;
}

__device__ __forceinline__ bool meets(int lo, int hi, int d0) {
  return lo <= d0 + 3 && hi >= d0;
}

// The union of the need intervals of outputs cell - 8 .. cell (of `n`): what a cell of the tile and
// halo (4 before the first output) must be computed for.
__device__ __forceinline__ void union_within(const int* lo, const int* hi, int cell, int n,
                                             int& out_lo, int& out_hi) {
  int l = kEmptyLo, h = kEmptyHi;
  for (int j = max(0, cell - 2 * kHalo); j <= min(n - 1, cell); ++j) {
    l = min(l, lo[j]);
    h = max(h, hi[j]);
  }
  out_lo = l;
  out_hi = h;
}

// The costs a pixel needs: its candidates, widened by kPad (at most to 0 .. nd - 1). A pixel
// without candidates has c_lo = kEmptyLo > c_hi = kEmptyHi, which stay far apart when widened:
// its needs are as empty as its candidates, with no test.
template <int kPad>
__device__ __forceinline__ int need_lo(const PixelSearch& p) {
  return kPad == 0 ? p.c_lo : max(0, p.c_lo - kPad);
}
template <int kPad>
__device__ __forceinline__ int need_hi(const PixelSearch& p, int nd) {
  return kPad == 0 ? p.c_hi : min(nd - 1, p.c_hi + kPad);
}

// Bit j: this thread's cell j is computed in the round of d0 .. d0+3: cell_rounds holds
// [first, end) of the rounds' d0, and d0 >= first while d0 < end is, per signed halfword,
// d0 >= (first, end) giving (0xFFFF, 0).
__device__ __forceinline__ unsigned cells_needed(const Shared& sm, int tid, int d0) {
  const std::uint32_t both = (static_cast<std::uint32_t>(d0) & 0xFFFFu) * 0x10001u;
  unsigned m = 0;
#pragma unroll
  for (int j = 0; j < kSteps; ++j) {
    const int i = tid + j * kThreads;
    if (i >= kCells) break;
    if (__vcmpges2(both, sm.cell_rounds[i]) == 0x0000FFFFu) m |= 1u << j;
  }
  return m;
}

// Calls f(r, c) for this thread's cells whose bits are set in `mask`.
template <typename F>
__device__ __forceinline__ void for_cells(unsigned mask, int tid, const F& f) {
#pragma unroll
  for (int j = 0; j < kSteps; ++j) {
    if (!((mask >> j) & 1u)) continue;
    const int i = tid + j * kThreads;
    const int r = i / kTw, c = i - r * kTw;
    f(r, c);
  }
}

// The 3x3 sub-window sums of the cells at least 1 inside the tile and halo, from the pixel costs.
// A thread walks down a run of kRunRows cells of one column (consecutive threads, consecutive
// columns) and keeps the horizontal 3-sums of the rows above and below in registers: each is taken
// once instead of three times, and the two passes need no barrier between them. Every cell gets a
// sum, cells that no pixel needs this round from stale costs; no output reads those. (Summing only
// the runs some output reads in the round cost more instructions than it saved:
// docs/PERFORMANCE.md, session 22.)
constexpr int kRunRows = 4;
constexpr int kRuns = (kSumRows + kRunRows - 1) / kRunRows;
static_assert(kSumCols * kRuns <= kThreads, "one run of a column per thread");
__device__ __forceinline__ void window_sums(Shared& sm, int tid) {
  if (tid >= kSumCols * kRuns) return;
  const int c = 1 + tid % kSumCols, r0 = 1 + (tid / kSumCols) * kRunRows;
#pragma unroll
  for (int q = 0; q < kPairs; ++q) {
    const auto row3 = [&](int r) {
      return sm.pc[q][r][c - 1] + sm.pc[q][r][c] + sm.pc[q][r][c + 1];
    };
    std::uint32_t above = row3(r0 - 1), here = row3(r0);
#pragma unroll
    for (int k = 0; k < kRunRows; ++k) {
      const int r = r0 + k;
      if (r > kSumRows) break;
      const std::uint32_t below = row3(r + 1);
      sm.sw[q][r - 1][c - 1] = above + here + below;
      above = here;
      here = below;
    }
  }
}

// kFinest: the level is the finest, whose pixels also need the costs beside their candidates (for
// the parabola) and write the subpixel disparity; a constant, so that each round's needs fold.
// kMask: the batch models the background, so a candidate whose partner the other view's mask
// calls background is refused (the shape says it for every member; without it the test and its
// loads are left out). kShared: the finest level shared by both views (shared_finest.cuh; off by
// default, so the per-view items leave out its masks, their loads and the slot stores).
template <bool kK4, bool kMask, bool kFinest, bool kShared>
__device__ __forceinline__ void match_item(const BatchRecord* __restrict__ batch, int level,
                                           std::uint64_t entry, SharedFor<kShared>& sm) {
  constexpr bool shared = kShared;
  const RightBits right_bits = right_bits_of(sm);
  const std::uint32_t item = entry_item(entry);
  const int tid = threadIdx.y * kBlockW + threadIdx.x;
  const int m = item_member(item), view = item_view(item), seg = item_segment(item);
  const int t = item_tile(item);
  const MemberArgs& a = *batch->member[m];
  const LevelBuffers& lv = a.level[level];
  const int w = lv.width, h = lv.height, nd = lv.disparities;
  const int x0 = (t % lv.tiles_x) * kTileW, y0 = (t / lv.tiles_x) * kTileH;
  const int dir = view == 0 ? -1 : 1;
  const int other = 1 - view;
  const std::uint8_t* ref_ad = lv.ad[view] ? lv.ad[view] : lv.gray[view];
  const std::uint8_t* tgt_ad = lv.ad[other] ? lv.ad[other] : lv.gray[other];
  const std::uint64_t* ref_census = lv.census[view];
  const std::uint64_t* tgt_census = lv.census[other];
  const std::uint8_t* tgt_fg = kMask ? lv.mask[other] : nullptr;
  const bool census = ref_census != nullptr;
  static_assert(kFinest || !kShared, "only the finest level is shared");
  constexpr bool finest = kFinest;
  constexpr int pad = kFinest ? 1 : 0;
  const int tile_lo = entry_lo(entry), tile_hi = entry_hi(entry);  // search_ranges.cu's
  const int seg_len = piece_length(tile_lo, tile_hi, lv.segment, nd, finest);
  const int segments = (tile_hi - tile_lo) / seg_len + 1;
  const int c0 = tile_lo + seg * seg_len, c1 = min(tile_hi, c0 + seg_len - 1);

  for (int i = tid; i < 256; i += kThreads) sm.ad_table[i] = a.tables.ad[i];
  for (int i = tid; i < 65; i += kThreads) sm.census_table[i] = a.tables.census[i];
  if (tid < kTileH) {
    sm.row_lo[tid] = kEmptyLo;
    sm.row_hi[tid] = kEmptyHi;
  }
  if (tid < kTileW) {
    sm.col_lo[tid] = kEmptyLo;
    sm.col_hi[tid] = kEmptyHi;
  }
  if (tid == 0) {
    sm.need_lo = kEmptyLo;
    sm.need_hi = kEmptyHi;
    sm.tile_lo = tile_lo;
    sm.segments = segments;
    sm.segment = seg_len;
    if constexpr (kShared) sm.c0 = c0;
  }
  // The masks cleared (every item of the shared level: the walk reads them, and finds none but in
  // a left tile).
  const bool serves_right = shared && view == 0;
  if (shared) {
    for (int i = tid; i < kTileH * kTileW; i += kThreads) (&right_bits[0][0])[i] = 0;
  }
  // The reference tile and halo (clamped to the image, as the CPU's box sums clamp).
  for (int i = tid; i < kCells; i += kThreads) {
    const int r = i / kTw, c = i - r * kTw;
    const int qx = clamp_int(x0 - kHalo + c, 0, w - 1), qy = clamp_int(y0 - kHalo + r, 0, h - 1);
    sm.ref_val[r][c] = ref_ad[qy * w + qx];
    stage_code(&sm.ref_code[r][c], census ? &ref_census[qy * w + qx] : nullptr);
  }
  if (tid == 0) sm.outside = a.tables.outside;
  // The target pixels of every cell and disparity of the item, in shared memory once instead of
  // from global memory at every disparity (what made the small, coarse levels wait on latency).
  // Staged for the segment's disparities and one on each side, which hold every pixel's needs:
  // known from the tile's bounds, so these loads go out with the reference tile's and the
  // candidates' instead of after them (each global round trip of the set-up is one more wait).
  {
    const int stage_lo = max(0, c0 - pad), stage_hi = min(nd - 1, c1 + pad);
    const int qx_lo = max(0, x0 - kHalo);
    const int tgt_first = dir < 0 ? qx_lo - stage_hi : qx_lo + stage_lo;
    const int span = min(kTw, w - qx_lo) + stage_hi - stage_lo;
    if (tid == 0) sm.tgt_first = tgt_first;
    // Rows by warp, columns by lane: no division by the item's span. The codes go to shared
    // memory without passing through registers, so that they do not hold up the rows after
    // them (the staging was the set-up's longest wait in ncu's samples).
    const int k_lo = max(0, -tgt_first), k_hi = min(span, w - tgt_first);  // partners in the image
#pragma unroll
    for (int j = 0; j < kStageRows; ++j) {
      const int r = static_cast<int>(threadIdx.y) + j * kBlockH;
      const int row = clamp_int(y0 - kHalo + r, 0, h - 1) * w + tgt_first;
      std::uint32_t val[kStageSteps];
#pragma unroll
      for (int q = 0; q < kStageSteps; ++q) {
        const int k = k_lo + static_cast<int>(threadIdx.x) + q * kBlockW;
        if (k >= k_hi) continue;
        val[q] = tgt_ad[row + k];
        // Without a census term both codes stay 0 and census_table[0] is 0: no branch per cost.
        stage_code(&sm.tgt_code[r][kSlack + k], census ? &tgt_census[row + k] : nullptr);
      }
#pragma unroll
      for (int q = 0; q < kStageSteps; ++q) {
        const int k = k_lo + static_cast<int>(threadIdx.x) + q * kBlockW;
        if (k < k_hi) sm.tgt_val[r][kSlack + k] = static_cast<std::uint8_t>(val[q]);
      }
    }
  }
  // This thread's pixels' candidates (their loads, too, before the first barrier).
  const int x = x0 + threadIdx.x;
  int cand_lo[kRows], cand_hi[kRows];
#pragma unroll
  for (int k = 0; k < kRows; ++k) {
    const int y = y0 + threadIdx.y + k * kBlockH;
    cand_lo[k] = kEmptyLo;
    cand_hi[k] = kEmptyHi;
    // A residual item of the right view leaves the shared pixels to the right winners kernel.
    if (x < w && y < h && !(shared && view == 1 && lv.shared_cands[y * w + x] != kNotShared)) {
      cand_lo[k] = lv.lo[view][y * w + x];
      cand_hi[k] = lv.hi[view][y * w + x];
    }
  }
  __pipeline_commit();
  __pipeline_wait_prior(0);  // this thread's codes are in; the barrier below shows them to all
  const int last_inside = dir < 0 ? x : w - 1 - x;  // the partner x + dir * d is in the image
  PixelSearch px[kRows];
  __syncthreads();  // the need arrays are initialised, the staged rows in
  if (serves_right) {
    // The needs of the shared right pixels whose needs may fall on the tile's columns within this
    // segment (columns x0 - c1 .. x0 + 31 - c0), onto the masks of the pixels they fall on (left
    // column xr + d).
    std::uint32_t span_cands[kSpanSteps];
#pragma unroll
    for (int j = 0; j < kSpanSteps; ++j) {
      const int i = tid + j * kThreads, r = i / kRightSpan, k = i - r * kRightSpan;
      const int xr = x0 - c1 + k, y = y0 + r;
      span_cands[j] = xr >= 0 && xr < w && y < h && k < kTileW + c1 - c0
                          ? lv.shared_cands[y * w + xr]
                          : kNotShared;
    }
#pragma unroll
    for (int j = 0; j < kSpanSteps; ++j) {
      const int i = tid + j * kThreads, r = i / kRightSpan, k = i - r * kRightSpan;
      const std::uint32_t cands = span_cands[j];
      // Not shared, or no candidates (kSharedNone: lo > hi).
      if (cands == kNotShared || range_lo_of(cands) > range_hi_of(cands)) continue;
      const int xr = x0 - c1 + k;
      const std::uint32_t need = shared_needs_of(range_lo_of(cands), range_hi_of(cands), xr, w, nd);
      const int lo = max(max(range_lo_of(need), c0), x0 - xr);
      const int hi = min(min(range_hi_of(need), c1), x0 + kTileW - 1 - xr);
      for (int d = lo; d <= hi; ++d) atomicOr(&right_bits[r][xr + d - x0], 1u << (d - c0));
    }
    __syncthreads();
  }
#pragma unroll
  for (int k = 0; k < kRows; ++k) {
    PixelSearch& p = px[k];
    const int clo = max(cand_lo[k], c0), chi = min(cand_hi[k], c1);
    if (clo <= chi) {
      p.c_lo = clo;
      p.c_hi = chi;
    }
    int hull_lo = kEmptyLo, hull_hi = kEmptyHi;
    if (serves_right) {
      const std::uint32_t bits = right_bits[threadIdx.y + k * kBlockH][threadIdx.x];
      if (bits != 0) {
        hull_lo = c0 + __ffs(bits) - 1;
        hull_hi = c0 + 31 - __clz(bits);
      }
    }
    // The row's union (the warp is the row), the column's and the tile's: of both views' needs.
    const int nlo = min(need_lo<pad>(p), hull_lo), nhi = max(need_hi<pad>(p, nd), hull_hi);
    int rlo = nlo, rhi = nhi;
    for (int off = 16; off > 0; off >>= 1) {
      rlo = min(rlo, __shfl_xor_sync(0xFFFFFFFFu, rlo, off));
      rhi = max(rhi, __shfl_xor_sync(0xFFFFFFFFu, rhi, off));
    }
    if (threadIdx.x == 0) {
      sm.row_lo[threadIdx.y + k * kBlockH] = rlo;
      sm.row_hi[threadIdx.y + k * kBlockH] = rhi;
      if (rlo <= rhi) {
        atomicMin(&sm.need_lo, rlo);
        atomicMax(&sm.need_hi, rhi);
      }
    }
    if (nlo <= nhi) {
      atomicMin(&sm.col_lo[threadIdx.x], nlo);
      atomicMax(&sm.col_hi[threadIdx.x], nhi);
    }
  }
  __syncthreads();
  // A cell row (column) is needed for a disparity when an output row (column) within 4 needs it.
  if (tid < kTh) {
    union_within(sm.row_lo, sm.row_hi, tid, kTileH, sm.cell_row_lo[tid], sm.cell_row_hi[tid]);
  } else if (tid >= 32 && tid < 32 + kTw) {
    const int c = tid - 32;
    union_within(sm.col_lo, sm.col_hi, c, kTileW, sm.cell_col_lo[c], sm.cell_col_hi[c]);
  }
  __syncthreads();
  const int dlo = sm.need_lo, dhi = sm.need_hi;
  for (int i = tid; i < kCells; i += kThreads) {
    const int r = i / kTw, c = i - r * kTw;
    const int first = max(sm.cell_row_lo[r], sm.cell_col_lo[c]) - 3;
    const int end = min(sm.cell_row_hi[r], sm.cell_col_hi[c]) + 1;
    const auto half = [](int v) {  // v as a signed halfword, saturated
      return static_cast<std::uint32_t>(static_cast<std::uint16_t>(clamp_int(v, -32768, 32767)));
    };
    sm.cell_rounds[i] = half(first) | (half(end) << 16);
  }
  __syncthreads();

  for (int d0 = dlo; d0 <= dhi; d0 += 2 * kPairs) {
    const unsigned needed = cells_needed(sm, tid, d0);
    // Pixel costs for d0 .. d0+3 where needed, two disparities per word.
    for_cells(needed, tid, [&](int r, int c) {
      const std::uint32_t av4 = sm.ref_val[r][c] * 0x01010101u;
      const std::uint64_t ac = sm.ref_code[r][c];
      const int qx = clamp_int(x0 - kHalo + c, 0, w - 1);
      // The partner x + dir * d lies inside the image for d <= cell_inside (d >= 0).
      const int cell_inside = dir < 0 ? qx : w - 1 - qx;
      // Past the item's last disparity (a round's tail) the values are read but never used; the
      // slack and the span's end keep those reads inside the row.
      const int k0 = kSlack + qx + dir * d0 - sm.tgt_first;
      const std::uint64_t* tc = &sm.tgt_code[r][k0];
      // The four partners' values as one word, byte dd for d0 + dd: two aligned words of the row
      // and a byte permutation (the left view's partners run backwards), then the four absolute
      // differences at once.
      const int first = dir < 0 ? k0 - 3 : k0, shift = first & 3;
      const std::uint32_t* row =
          reinterpret_cast<const std::uint32_t*>(sm.tgt_val[r]) + (first >> 2);
      const std::uint32_t order =
          (dir < 0 ? 0x0123u : 0x3210u) + 0x1111u * static_cast<unsigned>(shift);
      const std::uint32_t ad4 = __vabsdiffu4(av4, __byte_perm(row[0], row[1], order));
      std::uint32_t cost[2 * kPairs];
#pragma unroll
      for (int dd = 0; dd < 2 * kPairs; ++dd)
        cost[dd] =
            sm.ad_table[(ad4 >> (8 * dd)) & 0xFFu] + sm.census_table[popcount64(ac ^ tc[dir * dd])];
      if (d0 + 2 * kPairs - 1 > cell_inside) {  // near the image's edge: partners outside
        const std::uint32_t outside = sm.outside;
#pragma unroll
        for (int dd = 0; dd < 2 * kPairs; ++dd)
          if (d0 + dd > cell_inside) cost[dd] = outside;
      }
#pragma unroll
      for (int q = 0; q < kPairs; ++q) sm.pc[q][r][c] = cost[2 * q] | (cost[2 * q + 1] << 16);
    });
    __syncthreads();
    window_sums(sm, tid);
    __syncthreads();
#pragma unroll
    for (int k = 0; k < kRows; ++k) {
      PixelSearch& p = px[k];
      const int nlo = need_lo<pad>(p), nhi = need_hi<pad>(p, nd);
      const bool own = meets(nlo, nhi, d0);
      // The shared right needs among d0 .. d0+3 (bit dd; d0 >= c0 - 1).
      unsigned serve = 0;
      if constexpr (kShared) {
        const std::uint64_t bits = right_bits[threadIdx.y + k * kBlockH][threadIdx.x];
        serve = static_cast<unsigned>((bits << 1) >> (d0 - sm.c0 + 1)) & 0xFu;
      }
      if (!own && !serve) {
        pass_round(p);
        continue;
      }
      const int y = y0 + threadIdx.y + k * kBlockH;
      const int R = kHalo + threadIdx.y + k * kBlockH, C = kHalo + threadIdx.x;
      std::uint32_t v[2 * kPairs];  // the aggregated costs of d0 .. d0+3
#pragma unroll
      for (int q = 0; q < kPairs; ++q) {
        const auto& sw = sm.sw[q];  // cell (r, c) at [r - 1][c - 1]
        const int R1 = R - 1, C1 = C - 1;
        std::uint32_t nb[8] = {sw[R1 - 3][C1 - 3], sw[R1 - 3][C1],    sw[R1 - 3][C1 + 3],
                               sw[R1][C1 - 3],     sw[R1][C1 + 3],    sw[R1 + 3][C1 - 3],
                               sw[R1 + 3][C1],     sw[R1 + 3][C1 + 3]};
        const std::uint32_t centre = sw[R1][C1];
        std::uint32_t agg2;
        if (kK4) {
          agg2 = centre + sum_smallest_4_of_8_x2(nb);
        } else {
          std::uint32_t lo8[8], hi8[8];
#pragma unroll
          for (int n = 0; n < 8; ++n) {
            lo8[n] = nb[n] & 0xFFFFu;
            hi8[n] = nb[n] >> 16;
          }
          agg2 = ((centre & 0xFFFFu) + sum_smallest_k_of_8(lo8, a.stereo.best_k)) |
                 (((centre >> 16) + sum_smallest_k_of_8(hi8, a.stereo.best_k)) << 16);
        }
        v[2 * q] = agg2 & 0xFFFFu;
        v[2 * q + 1] = agg2 >> 16;
      }
      if (serve) {
        // Right pixel x - d's slot of d (shared_finest.cuh).
        const int plane = w * h;  // kRightSlots planes of a frame's pixels: int offsets
#pragma unroll
        for (int dd = 0; dd < 2 * kPairs; ++dd) {
          if (!((serve >> dd) & 1u)) continue;
          const int d = d0 + dd;
          lv.right_slots[right_slot(d) * plane + y * w + x - d] = static_cast<std::uint16_t>(v[dd]);
        }
      }
      if (!own) {  // computed for the right pixels only
        pass_round(p);
        continue;
      }
      // The round as the sequential walk over d0 .. d0+3 sees it: a cost is visible where the pixel
      // needs it and the partner lies in the image (and, modeling, in the other view's
      // foreground); the smallest candidate, the smaller d on a tie, replaces the winner only when
      // strictly smaller, and the costs beside it become cm and cp (cp of the round's last
      // disparity is the next round's first).
      const int allow_hi = min(nhi, last_inside), cand_hi = min(p.c_hi, last_inside);
      std::uint32_t key = kNone;
#pragma unroll
      for (int dd = 0; dd < 2 * kPairs; ++dd) {
        const int d = d0 + dd;
        const bool allowed =
            d >= nlo && d <= allow_hi && (!kMask || tgt_fg[y * w + x + dir * d] != 0);
        if (!allowed) v[dd] = kNone16;
        if (allowed && d >= p.c_lo && d <= cand_hi) key = min(key, (v[dd] << 2) | dd);
      }
      p.cmcp = resolve_cp(p, v[0]);
      if (key != kNone && (key >> 2) < p.best) {
        const int dd = static_cast<int>(key & 3u);
        p.best = key >> 2;
        p.best_d = d0 + dd;
        const std::uint32_t cm = dd == 0 ? p.prev : dd == 1 ? v[0] : dd == 2 ? v[1] : v[2];
        const std::uint32_t cp = dd == 0 ? v[1] : dd == 1 ? v[2] : dd == 2 ? v[3] : kPending16;
        p.cmcp = (cm << 16) | cp;
      }
      p.prev = v[3];
    }
    __syncthreads();  // the next round's sums go where these are read
  }

  std::int16_t* out_disp = lv.disp[view];
  std::uint16_t* out_q4 = finest ? a.q4[view] : nullptr;
  std::uint32_t* out_ratio = finest && view == 0 ? a.out_cost_ratio : nullptr;
  if (sm.segments == 1) {
#pragma unroll
    for (int k = 0; k < kRows; ++k) {
      const PixelSearch& p = px[k];
      const int y = y0 + threadIdx.y + k * kBlockH;
      if (x >= w || y >= h) continue;
      const int i = y * w + x;
      out_disp[i] = static_cast<std::int16_t>(p.best_d);
      if (out_q4) {
        const std::uint32_t both = resolve_cp(p, kNone16);
        const WinnerOutputs o = winner_outputs(p.best_d, nd, p.best, both >> 16, both & 0xFFFFu,
                                               kNone16, a.stereo.subpixel);
        out_q4[i] = o.q4;
        if (out_ratio) out_ratio[i] = o.ratio;
      }
    }
    return;
  }

  // A split tile: this segment's winners join the others'; the last segment writes the result.
  const std::size_t plane = static_cast<std::size_t>(w) * h;
#pragma unroll
  for (int k = 0; k < kRows; ++k) {
    const PixelSearch& p = px[k];
    const int y = y0 + threadIdx.y + k * kBlockH;
    if (x >= w || y >= h || p.best_d == kNoDisparity) continue;
    const int i = y * w + x;
    atomicMin(&lv.key[view][i], (p.best << 16) | static_cast<std::uint32_t>(p.best_d));
    if (finest) {
      lv.cmcp[view][static_cast<std::size_t>(seg) * plane + i] = resolve_cp(p, kNone16);
    }
  }
  __threadfence();
  __syncthreads();
  if (tid == 0)
    sm.last = atomicAdd(&lv.tile_done[view][t], 1u) == static_cast<unsigned>(sm.segments - 1);
  __syncthreads();
  if (!sm.last) return;
  __threadfence();
#pragma unroll
  for (int k = 0; k < kRows; ++k) {
    const int y = y0 + threadIdx.y + k * kBlockH;
    if (x >= w || y >= h) continue;
    const int i = y * w + x;
    const std::uint32_t key = __ldcg(&lv.key[view][i]);
    const int d = key == kNoKey ? kNoDisparity : static_cast<int>(key & 0xFFFFu);
    out_disp[i] = static_cast<std::int16_t>(d);
    if (!out_q4) continue;
    // The winning segment recorded the costs beside the winner.
    const std::uint32_t both =
        d == kNoDisparity
            ? 0u
            : __ldcg(&lv.cmcp[view]
                             [static_cast<std::size_t>((d - sm.tile_lo) / sm.segment) * plane + i]);
    const WinnerOutputs o =
        winner_outputs(d, nd, key >> 16, both >> 16, both & 0xFFFFu, kNone16, a.stereo.subpixel);
    out_q4[i] = o.q4;
    if (out_ratio) out_ratio[i] = o.ratio;
  }
}

// Four blocks per SM (64 registers) for the default k = 4 on Hopper, three (80 registers) on
// Orin's sm_87, whose code for the same source needs more; the general selection (k != 4) needs
// more registers on both and runs two. Five on Hopper (48 registers; the shared memory would fit)
// spill 56-112 bytes and lost 2-8 % in every row (docs/PERFORMANCE.md, session 21).
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
constexpr int kBlocksPerSm = 3;
#else
constexpr int kBlocksPerSm = 4;
#endif
template <bool kK4, bool kMask, bool kFinest, bool kShared>
__global__ void __launch_bounds__(kThreads, kK4 ? kBlocksPerSm : 2)
    match_window_kernel(const BatchRecord* __restrict__ batch, LevelLists lists, int level) {
  after_previous_stage();
  __shared__ SharedFor<kShared> sm;
  ListCounters* counters = lists.counters;
  const std::uint32_t heavy = counters->heavy, light = counters->light;
  for (;;) {
    const std::uint64_t entry =
        next_entry(&counters->taken, heavy, lists.heavy, light, lists.light, &sm.entry);
    if (entry == kNoEntry) return;
    match_item<kK4, kMask, kFinest, kShared>(batch, level, entry, sm);
    __syncthreads();  // the shared arrays are the next item's
  }
}

}  // namespace

int match_window_workers() {
  int device = 0, sms = 0, per_sm = 0;
  STEREOD_CUDA(cudaGetDevice(&device));
  STEREOD_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  // The k = 4 instances have the same launch bounds, and their shared memory (the shared level's
  // 2 KB more included) fits as many blocks as their registers: ask for the default one.
  STEREOD_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
      &per_sm, match_window_kernel<true, false, true, false>, kThreads, 0));
  return std::max(1, sms * per_sm);
}

void launch_match_window(const BatchShape& shape, const BatchRecord* batch, const Workspace& ws,
                         int level, cudaStream_t stream) {
  const dim3 block(kBlockW, kBlockH);
  const unsigned workers = static_cast<unsigned>(std::max(ws.workers, 1));
  const LevelLists lists = ws.level(level);
  // The instantiation for the shape and level: k = 4 or not, the model's masks or not, and a
  // coarse level, the finest per view, or the finest shared.
  using Kernel = void (*)(const BatchRecord*, LevelLists, int);
#define STEREOD_MATCHERS(k4, mask)                                                           \
  {                                                                                          \
    match_window_kernel<k4, mask, false, false>, match_window_kernel<k4, mask, true, false>, \
        match_window_kernel<k4, mask, true, true>                                            \
  }
  static constexpr Kernel kKernels[2][2][3] = {
      {STEREOD_MATCHERS(false, false), STEREOD_MATCHERS(false, true)},
      {STEREOD_MATCHERS(true, false), STEREOD_MATCHERS(true, true)}};
#undef STEREOD_MATCHERS
  const int kind = level > 0 ? 0 : shape.shared_finest ? 2 : 1;
  const Kernel kernel = kKernels[shape.best4][shape.modeling][kind];
  launch_stage("match_window_kernel", shape.chained, kernel, dim3(workers), block, 0, stream, batch,
               lists, level);
}

}  // namespace stereod::cuda
