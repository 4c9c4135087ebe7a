// Stage: semi-global aggregation at one level (pipeline/stereo/sgm.hpp is the definition; the
// integer rules are sgm_ops.hpp, shared with the CPU engine, so the engines agree bit for bit).
//
// 1. Layout: the volume holds each pixel's candidates lo..hi (search_ranges.cu keeps the range the
//    CPU has, candidates past the image edge included), rows in order (volume_layout.cuh): one
//    block per row scans its widths, then one block per view the row totals into row starts and
//    the level's cell count. A view over kSgmMaxCells fails the
//    frame like the CPU's (the count goes to the slot's error word) and the later stages skip it.
// 2. Costs: C and S = 0. sgm_cost window: match_generic.cu's volume mode (the window with the
//    configuration's s and k); sgm_cost pixel: the pixel cost, a warp per 32 pixels of a row with
//    its lanes over each pixel's candidates (coalesced); sgm_cost cross and aggregation cross:
//    cross.cu's region averages E (aggregation cross then skips the paths: its winners are E's).
// 3. Paths: one warp per path line (a row, a column or a diagonal), pixels in path order, its lanes
//    over the pixel's candidates (32 at a time). The predecessor's L lies in shared memory indexed
//    by disparity (two planes per warp, the previous pixel's and the current one's), its minimum
//    is a warp reduction, and each L joins S with an atomic add: integer addition in any order
//    gives the same S. Every direction of both views runs in one launch.
// 4. Winners: one thread per pixel, sgm_pick_winner over S (as the CPU's pick_winners).
#include "kernels/device_common.cuh"
#include "kernels/stages.hpp"
#include "kernels/volume_layout.cuh"
#include "stereo/cross_ops.hpp"
#include "stereo/sgm.hpp"
#include "stereo/sgm_ops.hpp"

namespace stereod::cuda {
namespace {

constexpr int kPathWarps = 4;  // path lines per block
constexpr unsigned kFull = 0xFFFFFFFFu;

// One block per row: each pixel's offset within the row, and the row's total (into sgm_row).
__global__ void __launch_bounds__(kLayoutThreads)
    sgm_layout_rows_kernel(const BatchRecord* __restrict__ batch, int level) {
  const MemberArgs& a = *batch->member[blockIdx.z >> 1];
  const int view = blockIdx.z & 1;
  const LevelBuffers& lv = a.level[level];
  const int w = lv.width, y = blockIdx.x;
  // The frame's error word starts clear at its first (coarsest) level.
  if (level == a.levels - 1 && view == 0 && y == 0 && threadIdx.x == 0 && a.out_sgm_cells) {
    *a.out_sgm_cells = 0;
  }
  layout_row(lv.lo[view], lv.hi[view], w, y, lv.sgm_rel[view], lv.sgm_row[view]);
}

// One block per view: row totals into row starts, and the level's cell count.
__global__ void __launch_bounds__(kTotalThreads)
    sgm_layout_total_kernel(const BatchRecord* __restrict__ batch, int level) {
  const MemberArgs& a = *batch->member[blockIdx.z >> 1];
  const int view = blockIdx.z & 1;
  const LevelBuffers& lv = a.level[level];
  const unsigned long long total = layout_rows(lv.sgm_row[view], lv.height);
  if (threadIdx.x == 0) {
    *lv.sgm_cells[view] = total;
    if (total > kSgmMaxCells && a.out_sgm_cells) atomicCAS(a.out_sgm_cells, 0ull, total);
  }
}

// sgm_cost pixel: C is the pixel cost itself (match_generic's A with s = 1, k = 0, without its
// tile walk), and S is zeroed. A warp takes 32 pixels of a row one after the other, its lanes over
// each pixel's candidates: the cells, the target pixels and their census codes are consecutive,
// so every access is coalesced.
__global__ void __launch_bounds__(kBlockW* kBlockH)
    sgm_pixel_costs_kernel(const BatchRecord* __restrict__ batch, int level) {
  const MemberArgs& a = *batch->member[blockIdx.z >> 1];
  const int view = blockIdx.z & 1, other = 1 - view;
  const LevelBuffers& lv = a.level[level];
  if (*lv.sgm_cells[view] > a.sgm_capacity) return;
  const int w = lv.width, h = lv.height;
  const int lane = threadIdx.x;
  const int x0 = blockIdx.x * kBlockW, y = blockIdx.y * kBlockH + threadIdx.y;
  if (y >= h) return;
  const std::uint8_t* ref = lv.ad[view] ? lv.ad[view] : lv.gray[view];
  const std::uint8_t* tgt = (lv.ad[other] ? lv.ad[other] : lv.gray[other]) + y * w;
  const std::uint8_t* tgt_fg = a.modeling ? lv.mask[other] + y * w : nullptr;
  const std::uint64_t* census = lv.census[view];
  const std::uint64_t* tgt_census = census ? lv.census[other] + y * w : nullptr;
  const int direction = view == 0 ? -1 : 1;
  // Lane j: pixel x0 + j's range, first cell, intensity and census code.
  const int x = x0 + lane;
  int m_lo = 1, m_hi = 0, m_value = 0;
  std::uint32_t m_at = 0;
  std::uint64_t m_code = 0;
  if (x < w) {
    const int i = y * w + x;
    m_lo = lv.lo[view][i];
    m_hi = lv.hi[view][i];
    m_value = ref[i];
    if (census) m_code = census[i];
    if (m_hi >= m_lo) m_at = lv.sgm_row[view][y] + lv.sgm_rel[view][i];
  }
  const int count = min(32, w - x0);
  for (int j = 0; j < count; ++j) {
    const int lo = __shfl_sync(kFull, m_lo, j), hi = __shfl_sync(kFull, m_hi, j);
    const std::uint32_t at = __shfl_sync(kFull, m_at, j);
    const std::uint8_t value = static_cast<std::uint8_t>(__shfl_sync(kFull, m_value, j));
    const std::uint64_t code = __shfl_sync(kFull, m_code, j);
    for (int d = lo + lane; d <= hi; d += 32) {
      const int tx = x0 + j + direction * d;
      std::uint32_t c = kNoCost;
      if (tx >= 0 && tx < w && (!tgt_fg || tgt_fg[tx] != 0)) {
        c = pixel_cost(a.tables, value, tgt[tx], code, tgt_census ? tgt_census[tx] : 0);
      }
      a.sgm_cost[view][at + (d - lo)] = c;
      a.sgm_sum[view][at + (d - lo)] = 0;
    }
  }
}

// The path directions: the predecessor of (x, y) is (x - dx, y - dy); the first four are the
// 4-path set (sgm.cpp has the same directions in its two scans).
__constant__ int kDx[8] = {1, -1, 0, 0, 1, -1, -1, 1};
__constant__ int kDy[8] = {0, 0, 1, -1, 1, 1, -1, -1};

__global__ void __launch_bounds__(kPathWarps * 32)
    sgm_paths_kernel(const BatchRecord* __restrict__ batch, int level, int plane) {
  extern __shared__ std::uint32_t planes[];  // [warp][2][plane]: L of the previous, current pixel
  __shared__ std::uint32_t jumps[256];       // P2 by intensity step
  const MemberArgs& a = *batch->member[blockIdx.z >> 1];
  const int view = blockIdx.z & 1;
  const LevelBuffers& lv = a.level[level];
  if (*lv.sgm_cells[view] > a.sgm_capacity) return;
  const int w = lv.width, h = lv.height;
  const int dx = kDx[blockIdx.y], dy = kDy[blockIdx.y];
  // Penalties in C's units: the window's pixel costs, or (sgm_cost cross) the region averages'
  // kCrossScale fractions of one, as the CPU matcher's sgm_options scales them.
  const std::uint32_t unit = a.stereo.sgm_cost == SgmCost::kCross
                                 ? kCrossScale
                                 : sgm_penalty(1, sgm_subwindow(a.stereo), sgm_best_k(a.stereo));
  const std::uint32_t p1 = static_cast<std::uint32_t>(a.stereo.sgm_p1) * unit;
  const std::uint32_t p2 = static_cast<std::uint32_t>(a.stereo.sgm_p2) * unit;
  for (int i = threadIdx.x; i < 256; i += blockDim.x) {
    jumps[i] = sgm_jump_penalty(p1, p2, a.stereo.sgm_gradient, i);
  }
  __syncthreads();

  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const int line = blockIdx.x * kPathWarps + warp;
  const int lines = dy == 0 ? h : (dx == 0 ? w : w + h - 1);
  if (line >= lines) return;
  // Where the line starts: the pixels whose predecessor lies outside the image.
  int x, y;
  if (dy == 0) {
    x = dx > 0 ? 0 : w - 1;
    y = line;
  } else if (line < w) {
    x = line;
    y = dy > 0 ? 0 : h - 1;
  } else {
    const int j = line - w + 1;
    x = dx > 0 ? 0 : w - 1;
    y = dy > 0 ? j : h - 1 - j;
  }
  std::uint32_t* prev = planes + static_cast<std::size_t>(warp) * 2 * plane;
  std::uint32_t* cur = prev + plane;
  const std::int16_t* lo_map = lv.lo[view];
  const std::int16_t* hi_map = lv.hi[view];
  const std::uint8_t* gray = lv.gray[view];
  const std::uint32_t* cost = a.sgm_cost[view];
  std::uint32_t* sum = a.sgm_sum[view];

  // The line's pixels, 32 at a time: lane j reads pixel k0 + j's range, cell offset and
  // intensity, which the warp then takes in turn by shuffles (the loads leave the serial chain).
  // The first candidates' costs of the next pixel are read while this one is computed.
  const int n =
      min(dx > 0 ? w - x : (dx < 0 ? x + 1 : 1 << 30), dy > 0 ? h - y : (dy < 0 ? y + 1 : 1 << 30));
  std::uint32_t q_min = kSgmInfinite;  // the predecessor's minimum (infinite: start afresh)
  int qlo = 1, qhi = 0, q_gray = 0;
  for (int k0 = 0; k0 < n; k0 += 32) {
    const int count = min(32, n - k0);
    int m_lo = 1, m_hi = 0, m_gray = 0;
    std::uint32_t m_at = 0;
    if (lane < count) {
      const int px = x + (k0 + lane) * dx, py = y + (k0 + lane) * dy;
      const int i = py * w + px;
      m_lo = lo_map[i];
      m_hi = hi_map[i];
      m_gray = gray[i];
      if (m_hi >= m_lo) m_at = lv.sgm_row[view][py] + lv.sgm_rel[view][i];
    }
    // The first chunk's cost of pixel j (lane: candidate lo + lane), kNoCost past its range.
    auto first_cost = [&](int j) {
      const int lo = __shfl_sync(kFull, m_lo, j), hi = __shfl_sync(kFull, m_hi, j);
      const std::uint32_t at = __shfl_sync(kFull, m_at, j);
      return lo + lane <= hi ? cost[at + lane] : kNoCost;
    };
    std::uint32_t c_next = first_cost(0);
    for (int j = 0; j < count; ++j) {
      const int lo = __shfl_sync(kFull, m_lo, j), hi = __shfl_sync(kFull, m_hi, j);
      const std::uint32_t at = __shfl_sync(kFull, m_at, j);
      const int g = __shfl_sync(kFull, m_gray, j);
      const std::uint32_t c_first = c_next;
      if (j + 1 < count) c_next = first_cost(j + 1);
      if (hi < lo) {  // not matched: the next pixel starts afresh
        q_min = kSgmInfinite;
        continue;
      }
      const bool fresh = q_min == kSgmInfinite;
      const std::uint32_t jump = fresh ? 0u : q_min + jumps[g > q_gray ? g - q_gray : q_gray - g];
      std::uint32_t l_min = kSgmInfinite;
      for (int base = lo; base <= hi; base += 32) {
        const int d = base + lane;
        std::uint32_t l = kSgmInfinite;
        if (d <= hi) {
          const std::uint32_t c = base == lo ? c_first : cost[at + (d - lo)];
          if (fresh) {
            l = sgm_start_cost(c);
          } else {
            const std::uint32_t same = d >= qlo && d <= qhi ? prev[d] : kSgmInfinite;
            const std::uint32_t below = d - 1 >= qlo && d - 1 <= qhi ? prev[d - 1] : kSgmInfinite;
            const std::uint32_t above = d + 1 >= qlo && d + 1 <= qhi ? prev[d + 1] : kSgmInfinite;
            l = sgm_path_cost(c, same, below, above, q_min, p1, jump);
          }
          cur[d] = l;
          const std::uint32_t term = sgm_sum_term(l);
          if (term) atomicAdd(sum + at + (d - lo), term);
        }
        l_min = min(l_min, l);
      }
      q_min = __reduce_min_sync(kFull, l_min);
      __syncwarp();  // this pixel's L is written before the next one reads it
      std::uint32_t* t = prev;
      prev = cur;
      cur = t;
      qlo = lo;
      qhi = hi;
      q_gray = g;
    }
  }
}

// One thread per pixel: the winner and what comes with it, from S; without `paths` (aggregation
// cross) from the volume itself, E (cross.cu), as the CPU's pick_volume_winners over it.
__global__ void __launch_bounds__(kBlockW* kBlockH)
    sgm_winners_kernel(const BatchRecord* __restrict__ batch, int level, bool paths) {
  const MemberArgs& a = *batch->member[blockIdx.z >> 1];
  const int view = blockIdx.z & 1;
  const LevelBuffers& lv = a.level[level];
  const int w = lv.width, h = lv.height;
  const int x = blockIdx.x * kBlockW + threadIdx.x, y = blockIdx.y * kBlockH + threadIdx.y;
  if (x >= w || y >= h) return;
  const int i = y * w + x;
  const bool finest = level == 0;
  std::uint8_t* confidence = finest && view == 0 ? a.out_confidence : nullptr;
  std::uint32_t* ratio = finest && view == 0 ? a.out_cost_ratio : nullptr;
  int lo = lv.lo[view][i], hi = lv.hi[view][i];
  if (*lv.sgm_cells[view] > a.sgm_capacity) hi = lo - 1;  // the frame fails: no volume to read
  const std::size_t at =
      hi >= lo ? std::size_t{lv.sgm_row[view][y]} + lv.sgm_rel[view][i] : std::size_t{0};
  const std::uint32_t* cost = a.sgm_cost[view] + at;
  const std::uint32_t* sum = (paths ? a.sgm_sum[view] : a.sgm_cost[view]) + at;
  auto cost_at = [&](int d) -> std::uint32_t {
    if (d < lo || d > hi || cost[d - lo] == kNoCost) return kNoCost;
    return sum[d - lo];
  };
  const SgmWinner win =
      sgm_pick_winner(lo, hi, cost_at, lv.disparities, a.stereo.uniqueness, finest,
                      a.stereo.subpixel, confidence != nullptr, ratio != nullptr);
  lv.disp[view][i] = static_cast<std::int16_t>(win.d);
  if (!finest) return;
  a.q4[view][i] = win.q4;
  if (confidence) confidence[i] = win.confidence;
  if (ratio) ratio[i] = win.cost_ratio;
}

}  // namespace

void launch_sgm_volume(const BatchShape& shape, const BatchRecord* batch, int level,
                       cudaStream_t stream) {
  const int w = shape.level_width[level], h = shape.level_height[level];
  const unsigned views = static_cast<unsigned>(2 * shape.count);
  sgm_layout_rows_kernel<<<dim3(static_cast<unsigned>(h), 1, views), kLayoutThreads, 0, stream>>>(
      batch, level);
  STEREOD_CUDA_LAUNCHED("sgm_layout_rows_kernel");
  sgm_layout_total_kernel<<<dim3(1, 1, views), kTotalThreads, 0, stream>>>(batch, level);
  STEREOD_CUDA_LAUNCHED("sgm_layout_total_kernel");
  if (shape.cross) {
    launch_cross_aggregation(shape, batch, level, stream);
  } else if (shape.sgm_window_cost) {
    launch_match_generic(shape, batch, level, stream, true);
  } else {
    sgm_pixel_costs_kernel<<<member_grid(w, h, static_cast<int>(views)), dim3(kBlockW, kBlockH), 0,
                             stream>>>(batch, level);
    STEREOD_CUDA_LAUNCHED("sgm_pixel_costs_kernel");
  }
}

void launch_sgm_paths(const BatchShape& shape, const BatchRecord* batch, int level,
                      cudaStream_t stream) {
  const int w = shape.level_width[level], h = shape.level_height[level];
  const unsigned views = static_cast<unsigned>(2 * shape.count);
  // The planes are indexed by disparity: the level's range (the members share max_disparity).
  const int plane = level_disparities(shape.max_disparity, level);
  const std::size_t shared =
      sizeof(std::uint32_t) * 2 * kPathWarps * static_cast<std::size_t>(plane);
  const int lines = shape.sgm_paths == 8 ? w + h - 1 : (w > h ? w : h);
  const dim3 grid(static_cast<unsigned>((lines + kPathWarps - 1) / kPathWarps),
                  static_cast<unsigned>(shape.sgm_paths), views);
  sgm_paths_kernel<<<grid, kPathWarps * 32, shared, stream>>>(batch, level, plane);
  STEREOD_CUDA_LAUNCHED("sgm_paths_kernel");
}

void launch_sgm_winners(const BatchShape& shape, const BatchRecord* batch, int level,
                        cudaStream_t stream) {
  const int w = shape.level_width[level], h = shape.level_height[level];
  sgm_winners_kernel<<<member_grid(w, h, 2 * shape.count), dim3(kBlockW, kBlockH), 0, stream>>>(
      batch, level, shape.sgm);
  STEREOD_CUDA_LAUNCHED("sgm_winners_kernel");
}

}  // namespace stereod::cuda
