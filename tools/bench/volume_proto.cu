// The cost-volume prototypes of the finest level's matcher (volume_proto.hpp; measured in
// docs/PERFORMANCE.md, "Level 0 as cost volumes"). Every cell (x, y) gets the interval of
// disparities its consumers need, as the hull over them:
//   aggregation needs  a(p): the pixel's candidates and one on each side (the parabola), within
//                      the image;
//   sum needs          s(c): a(p) of the nine pixels p = c - 3 (i, j) whose windows use the
//                      sub-window centred on c;
//   pixel-cost needs   k(q): a(p) of the pixels within 4 of q (the 3 x 3 sub-windows around it).
// Each volume stores its cells' intervals one after the other (offsets by an exclusive scan), two
// disparities per 32-bit word from an even one, so that a sum reads its nine pixel costs, and an
// aggregation its nine sums, two disparities at a time. Each cost and sum is computed once, where
// the tile design computes those of its 4-pixel halo again in every tile.
//
// Two layouts ("ragged": each cell's interval after the last one's, a thread per cell; "band":
// rows cut into segments of 32 cells, each stored for the union of its cells' intervals with the
// 32 cells of a disparity side by side, a warp per segment, neighbours by shuffles), so that the
// memory's side of the design is measured as well as its instructions.
//
// What it leaves out, being a measurement: the pixels within 4 of the image's sides (their windows
// are clamped; a design would match them as today), the background model's masks, the right view
// (a design would share the left's volume), split ranges (a cell's interval is as wide as its
// consumers need, up to the whole range).
#include <cub/cub.cuh>

#include <stdexcept>
#include <string>

#include "device_buffer.hpp"
#include "kernels/device_common.cuh"
#include "stereo/pixel_ops.hpp"
#include "volume_proto.hpp"

namespace stereod::bench {
namespace {

constexpr int kReach = 4;  // sub-window centres at +-3, each sub-window +-1
using cuda::CostWalk;
using cuda::kEmptyHi;
using cuda::kEmptyLo;
using cuda::kNone16;
using cuda::sum_smallest_4_of_8_x2;

struct Tables {
  std::uint8_t ad[256];
  std::uint8_t census[65];
  std::uint32_t outside;
};

__device__ __forceinline__ int words_of(int2 n) {
  return n.x <= n.y ? (n.y >> 1) - (n.x >> 1) + 1 : 0;
}

// a(p) for the covered pixels (inside by the window's reach), empty elsewhere.
__global__ void needs_kernel(const int* lo, const int* hi, int w, int h, int nd, int2* need,
                             std::uint8_t* covered) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= w || y >= h) return;
  const int i = y * w + x;
  const bool inside = x >= kReach && x < w - kReach && y >= kReach && y < h - kReach;
  int2 n{kEmptyLo, kEmptyHi};
  if (inside && lo[i] <= hi[i]) n = int2{max(0, lo[i] - 1), min(min(nd - 1, hi[i] + 1), x)};
  need[i] = n;
  covered[i] = inside ? 1 : 0;
}

// The hull of `in` over x + stride * k, or with kVertical over y + stride * k, |k| <= n.
template <bool kVertical>
__global__ void hull_kernel(const int2* in, int w, int h, int n, int stride, int2* out) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= w || y >= h) return;
  int lo = kEmptyLo, hi = kEmptyHi;
  for (int k = -n; k <= n; ++k) {
    const int u = kVertical ? x : x + stride * k, v = kVertical ? y + stride * k : y;
    if (u < 0 || u >= w || v < 0 || v >= h) continue;
    const int2 a = in[v * w + u];
    lo = min(lo, a.x);
    hi = max(hi, a.y);
  }
  out[y * w + x] = int2{lo, hi};
}

__global__ void words_kernel(const int2* need, int n, int* words) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) words[i] = words_of(need[i]);
}

// The cost tables, into the block's shared memory.
__device__ __forceinline__ void stage_tables(const Tables& from, Tables& to) {
  const int tid = threadIdx.y * blockDim.x + threadIdx.x, n = blockDim.x * blockDim.y;
  for (int k = tid; k < 256; k += n) to.ad[k] = from.ad[k];
  for (int k = tid; k < 65; k += n) to.census[k] = from.census[k];
  if (tid == 0) to.outside = from.outside;
  __syncthreads();
}

// Reference pixel x of a row against its partners x - d of the target row.
struct PixelCosts {
  const Tables& tables;  // in shared memory
  const std::uint8_t* row_ad;
  const std::uint64_t* row_census;
  int x, a;
  std::uint64_t code;
  __device__ std::uint32_t at(int d) const {
    const int tx = x - d;
    if (tx < 0) return tables.outside;
    const int b = row_ad[tx];
    return tables.ad[a > b ? a - b : b - a] + tables.census[__popcll(code ^ row_census[tx])];
  }
  // d0 and d0 + 1 in one word (u16 lanes).
  __device__ std::uint32_t pair(int d0) const { return at(d0) | (at(d0 + 1) << 16); }
};

// The pixel costs of a cell's interval, two disparities per word (u16 lanes).
__global__ void costs_kernel(const std::uint8_t* __restrict__ ref_ad,
                             const std::uint8_t* __restrict__ tgt_ad,
                             const std::uint64_t* __restrict__ ref_census,
                             const std::uint64_t* __restrict__ tgt_census, int w, int h,
                             const int2* __restrict__ need, const int* __restrict__ offset,
                             Tables tables, std::uint32_t* __restrict__ volume) {
  __shared__ Tables staged;
  stage_tables(tables, staged);
  const int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= w || y >= h) return;
  const int i = y * w + x;
  const int2 n = need[i];
  if (n.x > n.y) return;
  const PixelCosts cost{staged, tgt_ad + y * w, tgt_census + y * w, x, ref_ad[i], ref_census[i]};
  std::uint32_t* out = volume + offset[i];
  const int first = n.x >> 1, last = n.y >> 1;
  for (int k = first; k <= last; ++k) out[k - first] = cost.pair(2 * k);
}

// The 3 x 3 sub-window sums of a centre's interval from its nine cells' pixel costs (each cell's
// interval holds the centre's: s(c) is within k(q) for the cells around c).
__global__ void sums_kernel(int w, int h, const int2* __restrict__ cost_need,
                            const int* __restrict__ cost_offset,
                            const std::uint32_t* __restrict__ costs,
                            const int2* __restrict__ sum_need, const int* __restrict__ sum_offset,
                            std::uint32_t* __restrict__ sums) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= w || y >= h) return;
  const int i = y * w + x;
  const int2 n = sum_need[i];
  if (n.x > n.y) return;
  int base[9];
#pragma unroll
  for (int e = 0; e < 9; ++e) {
    const int q = i + (e / 3 - 1) * w + (e % 3 - 1);
    base[e] = cost_offset[q] - (cost_need[q].x >> 1);
  }
  std::uint32_t* out = sums + sum_offset[i];
  const int first = n.x >> 1, last = n.y >> 1;
  for (int k = first; k <= last; ++k) {
    std::uint32_t s = 0;
#pragma unroll
    for (int e = 0; e < 9; ++e) s += costs[base[e] + k];  // u16 lanes: no carry (9 * 2^9)
    out[k - first] = s;
  }
}

// Each covered pixel's aggregations over its needs, visited in order of d as the tile matcher's
// walk does (the smallest candidate, the smaller d on a tie, and the costs beside it), then its
// subpixel disparity.
__global__ void aggregate_kernel(int w, int h, int nd, bool subpixel, const int* __restrict__ lo,
                                 const int* __restrict__ hi, const int2* __restrict__ need,
                                 const int2* __restrict__ sum_need,
                                 const int* __restrict__ sum_offset,
                                 const std::uint32_t* __restrict__ sums,
                                 std::int16_t* __restrict__ disparity,
                                 std::uint16_t* __restrict__ q4) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= w || y >= h) return;
  const int i = y * w + x;
  const int2 n = need[i];
  if (n.x > n.y) {
    disparity[i] = kNoDisparity;
    q4[i] = kInvalidDisparity;
    return;
  }
  int base[9];  // centres (x + 3 i, y + 3 j), the pixel's own at 4
#pragma unroll
  for (int e = 0; e < 9; ++e) {
    const int c = i + 3 * (e / 3 - 1) * w + 3 * (e % 3 - 1);
    base[e] = sum_offset[c] - (sum_need[c].x >> 1);
  }
  CostWalk walk;
  walk.lo = lo[i];
  walk.hi = hi[i];
  const int first = n.x >> 1, last = n.y >> 1;
  for (int k = first; k <= last; ++k) {
    std::uint32_t nb[8];
#pragma unroll
    for (int e = 0, j = 0; e < 9; ++e) {
      if (e != 4) nb[j++] = sums[base[e] + k];
    }
    const std::uint32_t both = sums[base[4] + k] + sum_smallest_4_of_8_x2(nb);
    if (2 * k >= n.x) walk.visit(2 * k, both & 0xFFFFu);
    if (2 * k + 1 <= n.y) walk.visit(2 * k + 1, both >> 16);
  }
  disparity[i] = static_cast<std::int16_t>(walk.best_d);
  q4[i] = cuda::winner_outputs(walk.best_d, nd, walk.best, walk.cm, walk.cp, kNone16, subpixel).q4;
}

// ---- The band layout: a warp per segment of 32 cells of a row ----

constexpr int kSeg = 32;
__device__ __forceinline__ int2 empty_interval() {
  return int2{kEmptyLo, kEmptyHi};
}

__device__ __forceinline__ int2 hull(int2 a, int2 b) {
  return int2{min(a.x, b.x), max(a.y, b.y)};
}

// Per segment: the union of its row's aggregation needs over columns x0 - 4 .. x0 + 35 (what the
// pixel costs of its cells serve) and x0 - 3 .. x0 + 34 (what its sums serve).
__global__ void row_unions_kernel(const int2* __restrict__ need, int w, int h, int segs_x,
                                  int2* __restrict__ reach4, int2* __restrict__ reach3) {
  const int sx = blockIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y, lane = threadIdx.x;
  if (y >= h) return;
  const int x0 = sx * kSeg;
  const auto at = [&](int x) { return x >= 0 && x < w ? need[y * w + x] : empty_interval(); };
  const int2 a = at(x0 - 4 + lane);                                 // x0 - 4 .. x0 + 27
  const int2 b = lane < 8 ? at(x0 + 28 + lane) : empty_interval();  // x0 + 28 .. x0 + 35
  const int2 r4 = hull(a, b);
  const int2 r3 = hull(lane > 0 ? a : empty_interval(), lane < 7 ? b : empty_interval());
  const int lo4 = __reduce_min_sync(0xFFFFFFFFu, r4.x), hi4 = __reduce_max_sync(0xFFFFFFFFu, r4.y);
  const int lo3 = __reduce_min_sync(0xFFFFFFFFu, r3.x), hi3 = __reduce_max_sync(0xFFFFFFFFu, r3.y);
  if (lane == 0) {
    reach4[y * segs_x + sx] = int2{lo4, hi4};
    reach3[y * segs_x + sx] = int2{lo3, hi3};
  }
}

__device__ __forceinline__ int2 words_band(int2 n) {  // (first word, words)
  return n.x <= n.y ? int2{n.x >> 1, (n.y >> 1) - (n.x >> 1) + 1} : int2{0, 0};
}

// Per segment: the pixel costs' band (rows y - 4 .. y + 4 of reach4) and the sums' (rows y - 3,
// y, y + 3 of reach3), and their sizes in elements for the scans.
__global__ void bands_kernel(const int2* __restrict__ reach4, const int2* __restrict__ reach3,
                             int segs_x, int h, int* cost_elems, int* sum_elems,
                             int2* __restrict__ cost_band, int2* __restrict__ sum_band) {
  const int g = blockIdx.x * blockDim.x + threadIdx.x;
  if (g >= segs_x * h) return;
  const int y = g / segs_x;
  int2 c = empty_interval(), s = empty_interval();
  for (int dy = -4; dy <= 4; ++dy) {
    if (y + dy < 0 || y + dy >= h) continue;
    c = hull(c, reach4[g + dy * segs_x]);
    if (dy % 3 == 0) s = hull(s, reach3[g + dy * segs_x]);
  }
  const int2 cb = words_band(c), sb = words_band(s);
  cost_band[g] = cb;
  sum_band[g] = sb;
  cost_elems[g] = cb.y * kSeg;
  sum_elems[g] = sb.y * kSeg;
}

__global__ void costs_band_kernel(const std::uint8_t* __restrict__ ref_ad,
                                  const std::uint8_t* __restrict__ tgt_ad,
                                  const std::uint64_t* __restrict__ ref_census,
                                  const std::uint64_t* __restrict__ tgt_census, int w, int h,
                                  int segs_x, const int2* __restrict__ band,
                                  const int* __restrict__ offset, Tables tables,
                                  std::uint32_t* __restrict__ volume) {
  __shared__ Tables staged;
  stage_tables(tables, staged);
  const int sx = blockIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y, lane = threadIdx.x;
  if (y >= h) return;
  const int g = y * segs_x + sx;
  const int2 b = band[g];
  if (b.y == 0) return;
  const int x = sx * kSeg + lane;
  const bool in = x < w;
  const PixelCosts cost{staged,
                        tgt_ad + y * w,
                        tgt_census + y * w,
                        x,
                        in ? ref_ad[y * w + x] : 0,
                        in ? ref_census[y * w + x] : 0};
  std::uint32_t* out = volume + offset[g] + lane;
  for (int k = 0; k < b.y; ++k) {
    const int d0 = 2 * (b.x + k);
    out[k * kSeg] = in ? cost.pair(d0) : 0u;
  }
}

// Another segment's element for word K, clamped into its band (a lane whose result no pixel reads
// may ask past it), 0 where there is no such segment.
struct EdgeSource {
  const std::uint32_t* at = nullptr;
  int first = 0, count = 0;
  __device__ std::uint32_t load(int K) const {
    return count > 0 ? at[min(max(K - first, 0), count - 1) * kSeg] : 0u;
  }
};

// What a lane reads of one row of a band volume: its own segment g's element, and for an edge lane
// the element `edge_lane` of the segment beside (edge: -1 left, +1 right, 0 none).
struct SegmentRow {
  const std::uint32_t* own;
  int own_first;
  EdgeSource edge;
  __device__ std::uint32_t own_at(int K) const { return own[(K - own_first) * kSeg]; }
};
__device__ __forceinline__ SegmentRow segment_row(const std::uint32_t* volume, const int* offset,
                                                  const int2* band, int g, int lane, int edge,
                                                  int edge_lane) {
  SegmentRow r{volume + offset[g] + lane, band[g].x, EdgeSource{}};
  if (edge != 0) {
    r.edge.at = volume + offset[g + edge] + edge_lane;
    r.edge.first = band[g + edge].x;
    r.edge.count = band[g + edge].y;
  }
  return r;
}

__global__ void sums_band_kernel(int h, int segs_x, const int2* __restrict__ cost_band,
                                 const int* __restrict__ cost_offset,
                                 const std::uint32_t* __restrict__ costs,
                                 const int2* __restrict__ sum_band,
                                 const int* __restrict__ sum_offset,
                                 std::uint32_t* __restrict__ sums) {
  const int sx = blockIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y, lane = threadIdx.x;
  if (y >= h) return;
  const int g = y * segs_x + sx;
  const int2 sb = sum_band[g];
  if (sb.y == 0) return;  // rows y - 1 .. y + 1 exist where it is not empty
  // Rows y - 1 .. y + 1; lane 0 also reads the left segment's last cell, lane 31 the right one's
  // first.
  const int edge = lane == 0 && sx > 0 ? -1 : lane == kSeg - 1 && sx + 1 < segs_x ? 1 : 0;
  SegmentRow rows[3];
#pragma unroll
  for (int r = 0; r < 3; ++r) {
    rows[r] = segment_row(costs, cost_offset, cost_band, g + (r - 1) * segs_x, lane, edge,
                          lane == 0 ? kSeg - 1 : 0);
  }
  std::uint32_t* out = sums + sum_offset[g] + lane;
  for (int k = 0; k < sb.y; ++k) {
    const int K = sb.x + k;
    std::uint32_t v = 0, e = 0;
#pragma unroll
    for (int r = 0; r < 3; ++r) {
      v += rows[r].own_at(K);
      e += rows[r].edge.load(K);
    }
    std::uint32_t left = __shfl_up_sync(0xFFFFFFFFu, v, 1);
    std::uint32_t right = __shfl_down_sync(0xFFFFFFFFu, v, 1);
    if (lane == 0) left = e;
    if (lane == kSeg - 1) right = e;
    out[k * kSeg] = left + v + right;
  }
}

__global__ void aggregate_band_kernel(
    int w, int h, int nd, bool subpixel, int segs_x, const int* __restrict__ lo,
    const int* __restrict__ hi, const int2* __restrict__ need, const int2* __restrict__ sum_band,
    const int* __restrict__ sum_offset, const std::uint32_t* __restrict__ sums,
    std::int16_t* __restrict__ disparity, std::uint16_t* __restrict__ q4) {
  const int sx = blockIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y, lane = threadIdx.x;
  if (y >= h) return;
  const int x = sx * kSeg + lane, i = y * w + x;
  const bool in = x < w;
  const int2 n = in ? need[i] : empty_interval();
  const int band_lo = __reduce_min_sync(0xFFFFFFFFu, n.x);
  const int band_hi = __reduce_max_sync(0xFFFFFFFFu, n.y);
  if (band_lo > band_hi) {
    if (in) {
      disparity[i] = kNoDisparity;
      q4[i] = kInvalidDisparity;
    }
    return;
  }
  // The centres' rows y - 3, y, y + 3: the segment's own sums, and for lanes 0-2 (29-31) the left
  // (right) segment's last (first) three.
  const int g = y * segs_x + sx;
  const int edge = lane < 3 && sx > 0 ? -1 : lane >= kSeg - 3 && sx + 1 < segs_x ? 1 : 0;
  SegmentRow rows[3];
#pragma unroll
  for (int r = 0; r < 3; ++r) {
    rows[r] = segment_row(sums, sum_offset, sum_band, g + 3 * (r - 1) * segs_x, lane, edge,
                          edge < 0 ? lane + kSeg - 3 : lane - (kSeg - 3));
  }
  CostWalk walk;
  walk.lo = in ? lo[i] : 0;
  walk.hi = in ? hi[i] : -1;
  for (int K = band_lo >> 1; K <= band_hi >> 1; ++K) {
    std::uint32_t nb[8], centre = 0;
#pragma unroll
    for (int r = 0; r < 3; ++r) {
      const std::uint32_t s = rows[r].own_at(K);
      const std::uint32_t e = rows[r].edge.load(K);
      std::uint32_t l3 = __shfl_up_sync(0xFFFFFFFFu, s, 3);
      std::uint32_t r3 = __shfl_down_sync(0xFFFFFFFFu, s, 3);
      if (lane < 3) l3 = e;
      if (lane >= kSeg - 3) r3 = e;
      if (r == 1) {
        nb[3] = l3;
        nb[4] = r3;
        centre = s;
      } else {
        nb[r == 0 ? 0 : 5] = l3;
        nb[r == 0 ? 1 : 6] = s;
        nb[r == 0 ? 2 : 7] = r3;
      }
    }
    const std::uint32_t both = centre + sum_smallest_4_of_8_x2(nb);
    if (2 * K >= n.x && 2 * K <= n.y) walk.visit(2 * K, both & 0xFFFFu);
    if (2 * K + 1 >= n.x && 2 * K + 1 <= n.y) walk.visit(2 * K + 1, both >> 16);
  }
  if (!in) return;
  disparity[i] = static_cast<std::int16_t>(walk.best_d);
  q4[i] = cuda::winner_outputs(walk.best_d, nd, walk.best, walk.cm, walk.cp, kNone16, subpixel).q4;
}

template <typename T>
void upload(DeviceBuffer<T>& to, const T* from, std::size_t n) {
  STEREOD_CUDA(cudaMemcpy(to.get(), from, n * sizeof(T), cudaMemcpyHostToDevice));
}

// Runs `launch` (which calls mark(name) after each stage it launches) once to warm up and then
// `iterations` times, and records each stage's mean time and the chain's.
template <typename Launch>
void time_chain(VolumeDesignResult& out, int iterations, const Launch& launch) {
  constexpr int kMaxStages = 16;
  cudaEvent_t ev[kMaxStages + 1];
  for (auto& e : ev) STEREOD_CUDA(cudaEventCreate(&e));
  std::vector<const char*> names;
  std::vector<double> total;
  double chain = 0;
  for (int it = 0; it <= iterations; ++it) {
    int stages = 0;
    names.clear();
    STEREOD_CUDA(cudaEventRecord(ev[0]));
    launch([&](const char* name) {
      if (stages == kMaxStages) throw std::runtime_error("too many stages to time");
      names.push_back(name);
      STEREOD_CUDA(cudaEventRecord(ev[++stages]));
    });
    STEREOD_CUDA(cudaGetLastError());
    STEREOD_CUDA(cudaEventSynchronize(ev[stages]));
    if (it == 0) {
      total.assign(stages, 0.0);
      continue;
    }
    for (int k = 0; k < stages; ++k) {
      float ms = 0;
      STEREOD_CUDA(cudaEventElapsedTime(&ms, ev[k], ev[k + 1]));
      total[k] += ms;
    }
    float ms = 0;
    STEREOD_CUDA(cudaEventElapsedTime(&ms, ev[0], ev[stages]));
    chain += ms;
  }
  for (auto& e : ev) cudaEventDestroy(e);
  for (std::size_t k = 0; k < names.size(); ++k)
    out.stage_ms.emplace_back(names[k], total[k] / iterations);
  out.chain_ms = chain / iterations;
}

template <typename T>
std::vector<T> download(const DeviceBuffer<T>& from, std::size_t n) {
  std::vector<T> v(n);
  STEREOD_CUDA(cudaMemcpy(v.data(), from.get(), n * sizeof(T), cudaMemcpyDeviceToHost));
  return v;
}

}  // namespace

VolumeProtoResult run_volume_proto(const VolumeProtoInput& in) {
  VolumeProtoResult r;
  try {
    int devices = 0;
    if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
      r.error = "no CUDA device";
      r.no_device = true;
      return r;
    }
    const int w = in.width, h = in.height, nd = in.disparities;
    const std::size_t n = static_cast<std::size_t>(w) * h;
    const int iterations = std::max(1, in.iterations);
    // Capacity for any intervals: at most nd / 2 + 1 words a cell, and the band layout's last
    // segment of a row holds 32 cells even where the row ends before.
    const int segs_x = (w + kSeg - 1) / kSeg, segs = segs_x * h;
    const std::size_t capacity =
        static_cast<std::size_t>(segs) * kSeg * static_cast<std::size_t>(nd / 2 + 1);
    DeviceBuffer<std::uint8_t> ref_ad(n), tgt_ad(n), covered(n);
    DeviceBuffer<std::uint64_t> ref_census(n), tgt_census(n);
    DeviceBuffer<int> lo(n), hi(n), cost_words(n), cost_offset(n), sum_words(n), sum_offset(n),
        agg_words(n);
    DeviceBuffer<int2> need(n), tmp(n), cost_need(n), sum_need(n);
    DeviceBuffer<std::uint32_t> costs(capacity), sums(capacity);
    DeviceBuffer<std::int16_t> disparity(n);
    DeviceBuffer<std::uint16_t> q4(n);
    upload(ref_ad, in.ref_ad, n);
    upload(tgt_ad, in.tgt_ad, n);
    upload(ref_census, in.ref_census, n);
    upload(tgt_census, in.tgt_census, n);
    upload(lo, in.lo, n);
    upload(hi, in.hi, n);
    Tables tables{};
    std::copy(in.ad_table, in.ad_table + 256, tables.ad);
    std::copy(in.census_table, in.census_table + 65, tables.census);
    tables.outside = in.outside;

    std::size_t scan_bytes = 0;
    STEREOD_CUDA(cub::DeviceScan::ExclusiveSum(nullptr, scan_bytes, cost_words.get(),
                                               cost_offset.get(), static_cast<int>(n)));
    DeviceBuffer<std::uint8_t> scan_temp(scan_bytes);
    const auto scan = [&](const DeviceBuffer<int>& from, DeviceBuffer<int>& to, int count) {
      std::size_t bytes = scan_bytes;
      STEREOD_CUDA(
          cub::DeviceScan::ExclusiveSum(scan_temp.get(), bytes, from.get(), to.get(), count));
    };
    const dim3 block(32, 8), grid((w + 31) / 32, (h + 7) / 8);
    const int flat = static_cast<int>((n + 255) / 256);
    const auto sum_of = [&](const DeviceBuffer<int>& a, std::size_t count) {
      long long total = 0;
      for (int v : download(a, count)) total += v;
      return total;
    };

    // The ragged layout.
    VolumeDesignResult ragged;
    ragged.name = "ragged";
    time_chain(ragged, iterations, [&](const auto& mark) {
      needs_kernel<<<grid, block>>>(lo.get(), hi.get(), w, h, nd, need.get(), covered.get());
      mark("needs");
      hull_kernel<false><<<grid, block>>>(need.get(), w, h, kReach, 1, tmp.get());
      hull_kernel<true><<<grid, block>>>(tmp.get(), w, h, kReach, 1, cost_need.get());
      hull_kernel<false><<<grid, block>>>(need.get(), w, h, 1, 3, tmp.get());
      hull_kernel<true><<<grid, block>>>(tmp.get(), w, h, 1, 3, sum_need.get());
      mark("hulls");
      words_kernel<<<flat, 256>>>(cost_need.get(), static_cast<int>(n), cost_words.get());
      words_kernel<<<flat, 256>>>(sum_need.get(), static_cast<int>(n), sum_words.get());
      scan(cost_words, cost_offset, static_cast<int>(n));
      scan(sum_words, sum_offset, static_cast<int>(n));
      mark("words and scans");
      costs_kernel<<<grid, block>>>(ref_ad.get(), tgt_ad.get(), ref_census.get(), tgt_census.get(),
                                    w, h, cost_need.get(), cost_offset.get(), tables, costs.get());
      mark("pixel costs");
      sums_kernel<<<grid, block>>>(w, h, cost_need.get(), cost_offset.get(), costs.get(),
                                   sum_need.get(), sum_offset.get(), sums.get());
      mark("sums");
      aggregate_kernel<<<grid, block>>>(w, h, nd, in.subpixel, lo.get(), hi.get(), need.get(),
                                        sum_need.get(), sum_offset.get(), sums.get(),
                                        disparity.get(), q4.get());
      mark("aggregate and winner");
    });
    ragged.disparity = download(disparity, n);
    ragged.q4 = download(q4, n);
    r.covered = download(covered, n);
    ragged.cost_words = sum_of(cost_words, n);
    ragged.sum_words = sum_of(sum_words, n);
    words_kernel<<<flat, 256>>>(need.get(), static_cast<int>(n), agg_words.get());
    ragged.aggregation_words = sum_of(agg_words, n);
    r.designs.push_back(std::move(ragged));

    // The band layout: per segment of 32 cells (the scans and bands over segments).
    DeviceBuffer<int2> reach4(segs), reach3(segs), cost_band(segs), sum_band(segs);
    STEREOD_CUDA(cudaMemset(disparity.get(), 0, n * sizeof(std::int16_t)));
    STEREOD_CUDA(cudaMemset(q4.get(), 0, n * sizeof(std::uint16_t)));
    const dim3 seg_grid(segs_x, (h + 7) / 8);
    VolumeDesignResult band;
    band.name = "band";
    time_chain(band, iterations, [&](const auto& mark) {
      needs_kernel<<<grid, block>>>(lo.get(), hi.get(), w, h, nd, need.get(), covered.get());
      mark("needs");
      row_unions_kernel<<<seg_grid, block>>>(need.get(), w, h, segs_x, reach4.get(), reach3.get());
      bands_kernel<<<(segs + 255) / 256, 256>>>(reach4.get(), reach3.get(), segs_x, h,
                                                cost_words.get(), sum_words.get(), cost_band.get(),
                                                sum_band.get());
      mark("bands");
      scan(cost_words, cost_offset, segs);
      scan(sum_words, sum_offset, segs);
      mark("scans");
      costs_band_kernel<<<seg_grid, block>>>(ref_ad.get(), tgt_ad.get(), ref_census.get(),
                                             tgt_census.get(), w, h, segs_x, cost_band.get(),
                                             cost_offset.get(), tables, costs.get());
      mark("pixel costs");
      sums_band_kernel<<<seg_grid, block>>>(h, segs_x, cost_band.get(), cost_offset.get(),
                                            costs.get(), sum_band.get(), sum_offset.get(),
                                            sums.get());
      mark("sums");
      aggregate_band_kernel<<<seg_grid, block>>>(w, h, nd, in.subpixel, segs_x, lo.get(), hi.get(),
                                                 need.get(), sum_band.get(), sum_offset.get(),
                                                 sums.get(), disparity.get(), q4.get());
      mark("aggregate and winner");
    });
    band.disparity = download(disparity, n);
    band.q4 = download(q4, n);
    band.cost_words = sum_of(cost_words, static_cast<std::size_t>(segs)) / kSeg;
    band.sum_words = sum_of(sum_words, static_cast<std::size_t>(segs)) / kSeg;
    // The aggregations' words: each segment's union of its pixels' needs, for 32 pixels.
    std::vector<int2> needs = download(need, n);
    for (int y = 0; y < h; ++y) {
      for (int sx = 0; sx < segs_x; ++sx) {
        int l = kEmptyLo, u = kEmptyHi;
        for (int x = sx * kSeg; x < std::min(w, sx * kSeg + kSeg); ++x) {
          l = std::min(l, needs[static_cast<std::size_t>(y) * w + x].x);
          u = std::max(u, needs[static_cast<std::size_t>(y) * w + x].y);
        }
        if (l <= u)
          band.aggregation_words += static_cast<long long>(kSeg) * ((u >> 1) - (l >> 1) + 1);
      }
    }
    r.designs.push_back(std::move(band));
  } catch (const std::exception& e) {
    r.error = e.what();
  }
  return r;
}

}  // namespace stereod::bench
