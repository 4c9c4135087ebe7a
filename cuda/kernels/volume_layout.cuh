// The layout of a per-pixel-range volume (each pixel's candidates lo..hi, rows of pixels in
// order, as CostVolume on the CPU), shared by the semi-global volume (sgm.cu) and the cross-based
// region sums over their hulls (cross.cu): one block per row scans the widths (each pixel's offset
// within its row and the row's total), then one block per view scans the row totals into row
// starts and the cell count.
#pragma once

#include <cstdint>

#include "kernels/stage_args.hpp"

namespace stereod::cuda {

constexpr int kLayoutThreads = 256;  // a row's block
constexpr int kTotalThreads = 1024;  // a view's block

// Exclusive prefix sum over a block of blockDim.x (a multiple of 32, at most 1024) threads; the
// block's total into *total. `scratch` holds 32 values.
template <typename T>
__device__ T block_exclusive_scan(T value, T* scratch, T* total) {
  constexpr unsigned kAll = 0xFFFFFFFFu;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
  T inclusive = value;
#pragma unroll
  for (int off = 1; off < 32; off <<= 1) {
    const T n = __shfl_up_sync(kAll, inclusive, off);
    if (lane >= off) inclusive += n;
  }
  if (lane == 31) scratch[warp] = inclusive;
  __syncthreads();
  if (warp == 0) {
    T v = lane < warps ? scratch[lane] : T(0);
    T inc = v;
#pragma unroll
    for (int off = 1; off < 32; off <<= 1) {
      const T n = __shfl_up_sync(kAll, inc, off);
      if (lane >= off) inc += n;
    }
    if (lane < warps) scratch[lane] = inc - v;  // exclusive warp offsets
    if (lane == warps - 1) *total = inc;
  }
  __syncthreads();
  return scratch[warp] + inclusive - value;
}

__device__ __forceinline__ std::uint32_t range_width(const std::int16_t* lo, const std::int16_t* hi,
                                                     int i) {
  return hi[i] >= lo[i] ? static_cast<std::uint32_t>(hi[i] - lo[i] + 1) : 0u;
}

// Row y's block (kLayoutThreads threads): each pixel's offset within the row into rel, the row's
// total into row[y].
__device__ __forceinline__ void layout_row(const std::int16_t* lo, const std::int16_t* hi, int w,
                                           int y, std::uint32_t* rel, std::uint32_t* row) {
  __shared__ std::uint32_t scratch[32];
  __shared__ std::uint32_t total;
  const int per = (w + kLayoutThreads - 1) / kLayoutThreads;
  const int x0 = min(w, static_cast<int>(threadIdx.x) * per), x1 = min(w, x0 + per);
  std::uint32_t sum = 0;
  for (int x = x0; x < x1; ++x) sum += range_width(lo, hi, y * w + x);
  std::uint32_t at = block_exclusive_scan(sum, scratch, &total);
  for (int x = x0; x < x1; ++x) {
    rel[y * w + x] = at;
    at += range_width(lo, hi, y * w + x);
  }
  if (threadIdx.x == 0) row[y] = total;
}

// A view's block (kTotalThreads threads): the h row totals in `row` into row starts (used only
// when the total fits 32 bits, which the cell limit ensures); returns the cell count to every
// thread.
__device__ __forceinline__ unsigned long long layout_rows(std::uint32_t* row, int h) {
  __shared__ unsigned long long scratch[32];
  __shared__ unsigned long long total;
  const int per = (h + kTotalThreads - 1) / kTotalThreads;
  const int y0 = min(h, static_cast<int>(threadIdx.x) * per), y1 = min(h, y0 + per);
  unsigned long long sum = 0;
  for (int y = y0; y < y1; ++y) sum += row[y];
  unsigned long long at = block_exclusive_scan(sum, scratch, &total);
  for (int y = y0; y < y1; ++y) {
    const std::uint32_t r = row[y];
    row[y] = static_cast<std::uint32_t>(at);
    at += r;
  }
  return total;
}

}  // namespace stereod::cuda
