// Stage: cross-based aggregation at one level (pipeline/stereo/cross_aggregation.hpp is the
// definition; its integer rules, the arms and the rounded averages, are cross_ops.hpp, shared
// with the CPU engine, so the engines agree bit for bit; docs/ALGORITHM.md "Cross-based
// aggregation").
//
// Called by launch_sgm_volume once the volume's layout (each pixel's candidates lo..hi) is known:
// 1. Arms: one thread per pixel, its four arms on the level's raw gray (cross_arms.cuh, the
//    refinement's own rule).
// 2. Per iteration k (k even: inner arms horizontal, outer vertical; k odd: the other way round):
//    a. Hulls: one thread per pixel q, the hull of the ranges of the pixels p within l1 along the
//       outer axis whose outer arm reaches q: the candidates q's inner sums are needed for.
//    b. Their layout (volume_layout.cuh, as the volume's) and cell count; a view over
//       kSgmMaxCells fails the frame as on the CPU (the slot's error word) and the sums skip it.
//    c. Inner sums: one thread per pixel q, per candidate of its hull, the sum along q's inner
//       arm of the pixel costs (k = 0: the outside cost where the partner is past the image
//       edge) or of the previous iteration's E where that pixel's range holds the candidate and E
//       is allowed (k > 0; with how many such values there were).
//    d. Outer averages: one thread per pixel p, per candidate of its range, the inner sums along
//       p's outer arm over the region's pixel count (k = 0, times kCrossScale) or over the count
//       of values (k > 0), rounded by cross_average; kNoCost where the candidate is not allowed.
// The iterations alternate between the two volume buffers, the last writing sgm_cost (from which
// the winners, or the semi-global paths, read); then with sgm the other buffer is S, zeroed by
// the last outer pass (nothing reads it as E after the last inner pass).
//
// Integer sums wrap as the CPU's do (uint32), in any order: the same values. Straightforward
// loops, correctness first: this is an accuracy mode, not the default.
#include "kernels/cross_arms.cuh"
#include "kernels/device_common.cuh"
#include "kernels/stages.hpp"
#include "kernels/volume_layout.cuh"
#include "stereo/cross_ops.hpp"
#include "stereo/sgm.hpp"

namespace stereod::cuda {
namespace {

// An axis of the arms: the step along it and where its two arms sit in the packed word.
struct Axis {
  int dx, dy;
  int neg, pos;
};

__device__ __forceinline__ Axis axis_of(bool horizontal) {
  return horizontal ? Axis{1, 0, kArmLeft, kArmRight} : Axis{0, 1, kArmUp, kArmDown};
}

// Nothing to sum at p: past the image, or its view's frame fails (the volume or the hulls are
// over the limit).
__device__ __forceinline__ bool nothing_to_sum(const PixelAt& p) {
  return !p.inside || *p.lv.sgm_cells[p.view] > p.a.sgm_capacity ||
         p.a.cross.hull_cells[p.view] > p.a.sgm_capacity;
}

// The volume buffer iteration k of n writes: the last one writes sgm_cost.
__device__ __forceinline__ std::uint32_t* iteration_volume(const MemberArgs& a, int view, int k,
                                                           int n) {
  return ((n - 1 - k) & 1) == 0 ? a.sgm_cost[view] : a.sgm_sum[view];
}

__global__ void __launch_bounds__(kBlockW* kBlockH)
    cross_arms_kernel(const BatchRecord* __restrict__ batch, int level) {
  const PixelAt p(batch, 2, level);
  if (!p.inside) return;
  p.a.cross.arms[p.view][p.i] = pixel_cross_arms(p.lv.gray[p.view], p.w, p.h, p.x, p.y, p.a.stereo);
}

// hull(q): the union of range(p) over the p whose outer arm covers q (empty: lo > hi).
__global__ void __launch_bounds__(kBlockW* kBlockH)
    cross_hulls_kernel(const BatchRecord* __restrict__ batch, int level, bool outer_horizontal) {
  const PixelAt p(batch, 2, level);
  if (!p.inside) return;
  const MemberArgs& a = p.a;
  const int view = p.view, w = p.w, h = p.h;
  const Axis o = axis_of(outer_horizontal);
  const std::uint32_t* arms = a.cross.arms[view];
  int lo = 0x7FFF, hi = -0x8000;
  // p = q - j * axis reaches q when its arm towards q is at least |j| long (arms are <= l1).
  const int l1 = a.stereo.cross_l1;
  for (int j = -l1; j <= l1; ++j) {
    const int px = p.x - j * o.dx, py = p.y - j * o.dy;
    if (px < 0 || px >= w || py < 0 || py >= h) continue;
    const int pi = py * w + px;
    if (j != 0 && arm_of(arms[pi], j > 0 ? o.pos : o.neg) < (j > 0 ? j : -j)) continue;
    const int plo = p.lv.lo[view][pi], phi = p.lv.hi[view][pi];
    if (phi < plo) continue;
    lo = min(lo, plo);
    hi = max(hi, phi);
  }
  a.cross.hull_lo[view][p.i] = static_cast<std::int16_t>(lo);
  a.cross.hull_hi[view][p.i] = static_cast<std::int16_t>(hi);
}

__global__ void __launch_bounds__(kLayoutThreads)
    cross_hull_rows_kernel(const BatchRecord* __restrict__ batch, int level) {
  const MemberArgs& a = *batch->member[blockIdx.z >> 1];
  const int view = blockIdx.z & 1;
  const CrossBuffers& c = a.cross;
  layout_row(c.hull_lo[view], c.hull_hi[view], a.level[level].width, blockIdx.x, c.hull_rel[view],
             c.hull_row[view]);
}

__global__ void __launch_bounds__(kTotalThreads)
    cross_hull_total_kernel(const BatchRecord* __restrict__ batch, int level) {
  const MemberArgs& a = *batch->member[blockIdx.z >> 1];
  const int view = blockIdx.z & 1;
  const unsigned long long total = layout_rows(a.cross.hull_row[view], a.level[level].height);
  if (threadIdx.x == 0) {
    a.cross.hull_cells[view] = total;
    if (total > kSgmMaxCells && a.out_sgm_cells) atomicCAS(a.out_sgm_cells, 0ull, total);
  }
}

// Inner sums over hull(q) along q's inner arm: pixel costs (first) or the previous E (k > 0).
__global__ void __launch_bounds__(kBlockW* kBlockH)
    cross_inner_kernel(const BatchRecord* __restrict__ batch, int level, int k, int n) {
  const PixelAt p(batch, 2, level);
  if (nothing_to_sum(p)) return;
  const MemberArgs& a = p.a;
  const LevelBuffers& lv = p.lv;
  const int view = p.view, w = p.w, x = p.x, y = p.y;
  const CrossBuffers& cb = a.cross;
  const int hlo = cb.hull_lo[view][p.i], hhi = cb.hull_hi[view][p.i];
  if (hhi < hlo) return;
  const std::size_t at = std::size_t{cb.hull_row[view][y]} + cb.hull_rel[view][p.i];
  std::uint32_t* sum = cb.partial[view] + at;
  const Axis in = axis_of(k % 2 == 0);
  const std::uint32_t arms = cb.arms[view][p.i];
  const int t0 = -arm_of(arms, in.neg), t1 = arm_of(arms, in.pos);
  if (k == 0) {  // horizontal: along the row
    const int other = 1 - view, direction = view == 0 ? -1 : 1;
    const std::uint8_t* ref = (lv.ad[view] ? lv.ad[view] : lv.gray[view]) + y * w;
    const std::uint8_t* tgt = (lv.ad[other] ? lv.ad[other] : lv.gray[other]) + y * w;
    const std::uint64_t* ref_census = lv.census[view] ? lv.census[view] + y * w : nullptr;
    const std::uint64_t* tgt_census = lv.census[other] ? lv.census[other] + y * w : nullptr;
    for (int d = hlo; d <= hhi; ++d) {
      std::uint32_t s = 0;
      for (int t = t0; t <= t1; ++t) {
        const int qx = x + t, tx = qx + direction * d;
        s += tx < 0 || tx >= w
                 ? a.tables.outside
                 : pixel_cost(a.tables, ref[qx], tgt[tx], ref_census ? ref_census[qx] : 0,
                              tgt_census ? tgt_census[tx] : 0);
      }
      sum[d - hlo] = s;
    }
    return;
  }
  const std::uint32_t* e = iteration_volume(a, view, k - 1, n);
  std::uint16_t* count = cb.counts[view] + at;
  for (int d = hlo; d <= hhi; ++d) {
    std::uint32_t s = 0;
    std::uint32_t c = 0;
    for (int t = t0; t <= t1; ++t) {
      const int qx = x + t * in.dx, qy = y + t * in.dy, qi = qy * p.w + qx;
      const int qlo = lv.lo[view][qi], qhi = lv.hi[view][qi];
      if (d < qlo || d > qhi) continue;
      const std::uint32_t v =
          e[std::size_t{lv.sgm_row[view][qy]} + lv.sgm_rel[view][qi] + (d - qlo)];
      if (v == kNoCost) continue;
      s += v;
      ++c;
    }
    sum[d - hlo] = s;
    count[d - hlo] = static_cast<std::uint16_t>(c);
  }
}

// E(p, d) over range(p): the inner sums along p's outer arm, averaged; with `zero_sum` (the last
// iteration, before the semi-global paths) S cleared at the same cells.
__global__ void __launch_bounds__(kBlockW* kBlockH)
    cross_outer_kernel(const BatchRecord* __restrict__ batch, int level, int k, int n,
                       bool zero_sum) {
  const PixelAt p(batch, 2, level);
  if (nothing_to_sum(p)) return;
  const MemberArgs& a = p.a;
  const LevelBuffers& lv = p.lv;
  const int view = p.view, w = p.w, x = p.x, y = p.y;
  const int lo = lv.lo[view][p.i], hi = lv.hi[view][p.i];
  if (hi < lo) return;
  const CrossBuffers& cb = a.cross;
  const std::size_t at = std::size_t{lv.sgm_row[view][y]} + lv.sgm_rel[view][p.i];
  std::uint32_t* out = iteration_volume(a, view, k, n) + at;
  const bool first = k == 0;
  const Axis in = axis_of(k % 2 == 0), o = axis_of(k % 2 != 0);
  const std::uint32_t arms = cb.arms[view][p.i];
  const int s0 = -arm_of(arms, o.neg), s1 = arm_of(arms, o.pos);
  // The first iteration divides by the region's pixel count.
  std::uint32_t region = 0;
  if (first) {
    for (int s = s0; s <= s1; ++s) {
      const std::uint32_t q = cb.arms[view][(y + s * o.dy) * w + x + s * o.dx];
      region += 1u + static_cast<std::uint32_t>(arm_of(q, in.neg) + arm_of(q, in.pos));
    }
  }
  const int other = 1 - view, direction = view == 0 ? -1 : 1;
  const std::uint8_t* tgt_fg = a.modeling ? lv.mask[other] + y * w : nullptr;
  for (int d = lo; d <= hi; ++d) {
    const int tx = x + direction * d;
    if (tx < 0 || tx >= w || (tgt_fg && tgt_fg[tx] == 0)) {  // candidate_allowed
      out[d - lo] = kNoCost;
      continue;
    }
    std::uint32_t sum = 0, count = 0;
    for (int s = s0; s <= s1; ++s) {
      const int qx = x + s * o.dx, qy = y + s * o.dy, qi = qy * w + qx;
      const std::size_t cell = std::size_t{cb.hull_row[view][qy]} + cb.hull_rel[view][qi] +
                               static_cast<std::size_t>(d - cb.hull_lo[view][qi]);
      sum += cb.partial[view][cell];
      if (!first) count += cb.counts[view][cell];
    }
    out[d - lo] = cross_average(sum, first ? region : count, first ? kCrossScale : 1u);
  }
  if (zero_sum) {
    std::uint32_t* s = a.sgm_sum[view] + at;
    for (int d = lo; d <= hi; ++d) s[d - lo] = 0;
  }
}

}  // namespace

void launch_cross_aggregation(const BatchShape& shape, const BatchRecord* batch, int level,
                              cudaStream_t stream) {
  const int w = shape.level_width[level], h = shape.level_height[level];
  const int views = 2 * shape.count;
  const dim3 grid = member_grid(w, h, views), block(kBlockW, kBlockH);
  cross_arms_kernel<<<grid, block, 0, stream>>>(batch, level);
  STEREOD_CUDA_LAUNCHED("cross_arms_kernel");
  const int n = shape.cross_iterations;
  for (int k = 0; k < n; ++k) {
    cross_hulls_kernel<<<grid, block, 0, stream>>>(batch, level, k % 2 != 0);
    STEREOD_CUDA_LAUNCHED("cross_hulls_kernel");
    cross_hull_rows_kernel<<<dim3(static_cast<unsigned>(h), 1, static_cast<unsigned>(views)),
                             kLayoutThreads, 0, stream>>>(batch, level);
    STEREOD_CUDA_LAUNCHED("cross_hull_rows_kernel");
    cross_hull_total_kernel<<<dim3(1, 1, static_cast<unsigned>(views)), kTotalThreads, 0, stream>>>(
        batch, level);
    STEREOD_CUDA_LAUNCHED("cross_hull_total_kernel");
    cross_inner_kernel<<<grid, block, 0, stream>>>(batch, level, k, n);
    STEREOD_CUDA_LAUNCHED("cross_inner_kernel");
    cross_outer_kernel<<<grid, block, 0, stream>>>(batch, level, k, n, shape.sgm && k == n - 1);
    STEREOD_CUDA_LAUNCHED("cross_outer_kernel");
  }
}

}  // namespace stereod::cuda
