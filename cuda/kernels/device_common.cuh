// Device helpers shared by several stage kernels: finding a block's member and level, the
// left-right check of a disparity, union-find, the persistent loop over a work list, and the
// adaptive window's selection network and walk over a pixel's costs (match_window.cu,
// shared_finest.cu, and stereod-bench's volume prototype).
#pragma once

#include <cuda_runtime.h>

#include "background/background_ops.hpp"
#include "cuda_check.hpp"
#include "kernels/stage_args.hpp"
#include "stereo/pixel_ops.hpp"

namespace stereod::cuda {

// Sentinels several stages share: an empty [lo, hi] union (any real value replaces both under
// min/max), a split tile's key before any segment joined, and "no cost" among 16-bit costs (costs
// stay below 2^16 with s = 3: at most 5 * 9 * 128).
constexpr int kEmptyLo = 1 << 20, kEmptyHi = -(1 << 20);
constexpr std::uint32_t kNoKey = 0xFFFFFFFFu;
constexpr std::uint32_t kNone16 = 0xFFFFu;

// Two disparities per 32-bit word: u16 lanes never carry into each other (costs < 2^16).
__device__ __forceinline__ std::uint32_t sum_smallest_4_of_8_x2(std::uint32_t v[8]) {
#define STEREOD_VSWAP(i, j)                         \
  do {                                              \
    const std::uint32_t lo_ = __vminu2(v[i], v[j]); \
    const std::uint32_t hi_ = __vmaxu2(v[i], v[j]); \
    v[i] = lo_;                                     \
    v[j] = hi_;                                     \
  } while (0)
  STEREOD_VSWAP(0, 1);
  STEREOD_VSWAP(2, 3);
  STEREOD_VSWAP(0, 2);
  STEREOD_VSWAP(1, 3);
  STEREOD_VSWAP(1, 2);
  STEREOD_VSWAP(4, 5);
  STEREOD_VSWAP(6, 7);
  STEREOD_VSWAP(4, 6);
  STEREOD_VSWAP(5, 7);
  STEREOD_VSWAP(5, 6);
#undef STEREOD_VSWAP
  return __vminu2(v[0], v[7]) + __vminu2(v[1], v[6]) + __vminu2(v[2], v[5]) + __vminu2(v[3], v[4]);
}

// The sequential walk over a pixel's needs, d upwards, as match_window.cu's rounds see it, one
// cost at a time (kNone16 where it is not visible): the smallest candidate's cost (in [lo, hi]),
// the smaller d on a tie, and the costs beside it. shared_finest.cu's right winners and the
// volume prototype of stereod-bench take their winners with it.
struct CostWalk {
  int lo, hi;  // the candidates
  std::uint32_t best = 0xFFFFFFFFu, cm = kNone16, cp = kNone16, prev = kNone16;
  int best_d = kNoDisparity;
  bool pending = false;  // cp is the next cost
  __device__ void visit(int d, std::uint32_t c) {
    if (pending) {
      cp = c;
      pending = false;
    }
    if (d >= lo && d <= hi && c != kNone16 && c < best) {
      best = c;
      best_d = d;
      cm = prev;
      cp = kNone16;
      pending = true;
    }
    prev = c;
  }
};

// A finest-level winner's published outputs from the costs beside it (cm below, cp above; `none`
// where that disparity was no candidate): its subpixel disparity (subpixel_disparity) and its
// cost ratio (winner_cost_ratio). No winner (kNoDisparity) gives kInvalidDisparity and kNoCost.
// Every matcher's last step, so that the rule is written once.
struct WinnerOutputs {
  std::uint16_t q4;
  std::uint32_t ratio;
};
__device__ __forceinline__ WinnerOutputs winner_outputs(int d, int nd, std::uint32_t best,
                                                        std::uint32_t cm, std::uint32_t cp,
                                                        std::uint32_t none, bool refine) {
  if (d == kNoDisparity) return {kInvalidDisparity, kNoCost};
  const bool neighbours = d >= 1 && d + 1 < nd && cm != none && cp != none;
  return {subpixel_disparity(
              d, nd, best, [&](int dd) { return dd < d ? cm : cp; }, none, refine),
          winner_cost_ratio(cm, best, cp, neighbours)};
}

// Ghosts seen in depth (background.depth_ghosts): the left camera's record of model frame n at the
// finest level, or null without the option.
// The ring slot of model frame n. n >= 0: unsigned, so that the remainder is a mask
// (kMaxDepthLag is a power of two).
__device__ inline unsigned depth_slot(long long n) {
  return static_cast<unsigned>(static_cast<unsigned long long>(n) % kMaxDepthLag);
}
__device__ inline std::uint16_t* depth_record_of(const MemberArgs& a, long long n) {
  if (!a.depth_records) return nullptr;
  return a.depth_records + depth_slot(n) * (static_cast<std::size_t>(a.width) * a.height);
}
// Its tiles' foreground flags (MemberArgs::depth_tiles).
__device__ inline std::uint8_t* depth_tiles_of(const MemberArgs& a, long long n) {
  const LevelBuffers& lv = a.level[0];
  return a.depth_tiles + depth_slot(n) * (static_cast<std::size_t>(lv.tiles_x) * lv.tiles_y);
}

// Blocks of kBlockW x kBlockH threads that fill an SM's threads: eight on Hopper (2,048 threads,
// so at most 32 registers), six on Orin's sm_87 (1,536). For the short stages that are a chain
// of loads and barriers: the more of them resident, the more of that chain overlaps.
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
constexpr int kFullSmBlocks = 6;
#else
constexpr int kFullSmBlocks = 8;
#endif

inline dim3 member_grid(int w, int h, int z) {
  return dim3(static_cast<unsigned>((w + kBlockW - 1) / kBlockW),
              static_cast<unsigned>((h + kBlockH - 1) / kBlockH), static_cast<unsigned>(z));
}

// A per-pixel kernel's place: member and view from blockIdx.z (`views` per member), the pixel
// from the 32 x 8 block at `level`; `inside` false past the image.
struct PixelAt {
  const MemberArgs& a;
  const LevelBuffers& lv;
  int view, w, h, x, y, i;
  bool inside;
  __device__ PixelAt(const BatchRecord* batch, int views, int level = 0)
      : a(*batch->member[blockIdx.z / views]),
        lv(a.level[level]),
        view(static_cast<int>(blockIdx.z) % views),
        w(lv.width),
        h(lv.height),
        x(static_cast<int>(blockIdx.x * kBlockW + threadIdx.x)),
        y(static_cast<int>(blockIdx.y * kBlockH + threadIdx.y)),
        i(y * w + x),
        inside(x < w && y < h) {}
};

// d at (x, y) of `map`, or kNoDisparity when it fails the left-right check against `other`
// (direction -1: map is the left view's, its partner is at x - d), with the check switched off the
// value as it is. The rule is pixel_ops.hpp's cross_checked, as on the CPU.
__device__ __forceinline__ std::int16_t checked_value(const std::int16_t* map,
                                                      const std::int16_t* other, int w, int x,
                                                      int y, int direction, bool check, int tol) {
  const int row = y * w;  // int, as before: a 64-bit index costs this kernel a spill
  if (!check) return map[row + x];
  return cross_checked(map + row, other + row, w, x, direction, tol);
}

// Union-find over pixel indices: the root of a set is its smallest index. Which pixels end in one
// set does not depend on the order of the unions, so the result equals the CPU's flood fill.
template <typename Int>
__device__ __forceinline__ int find_root(Int* parent, int i) {
  while (parent[i] != i) i = parent[i];
  return i;
}

// Joins the sets of a and b: a root is hung under the smaller root with atomicMin, retrying when
// another thread moved the root meanwhile (the classic lock-free union).
template <typename Int>
__device__ void unite(Int* parent, int a, int b) {
  for (;;) {
    a = find_root(parent, a);
    b = find_root(parent, b);
    if (a == b) return;
    if (a < b) {
      const int t = a;
      a = b;
      b = t;
    }
    const int old = atomicMin(&parent[a], b);
    if (old == a) return;
    a = old;
  }
}

// The map the refinement's voting left (refine.cu) for `rounds` rounds: the map of the last round
// that ran, the first that changed nothing (the later ones returned at once), else the last one;
// the checked map (q4, its speckles removed) without rounds.
__device__ __forceinline__ const std::uint16_t* refined_map(const MemberArgs& a, int view,
                                                            int rounds) {
  if (rounds <= 0) return a.q4[view];
  int last = 0;
  while (last + 1 < rounds && a.refine_changed[view][last] != 0) ++last;
  return a.refined[view][last & 1];
}

// The next entry of a list shared by a fixed grid of blocks (every thread of the block gets it):
// `first` entries of list A, then `second` of list B; kNoEntry when both are used up.
__device__ __forceinline__ std::uint64_t next_entry(std::uint32_t* taken, std::uint32_t first,
                                                    const std::uint64_t* list_a,
                                                    std::uint32_t second,
                                                    const std::uint64_t* list_b,
                                                    std::uint64_t* shared_slot) {
  if (threadIdx.x == 0 && threadIdx.y == 0) {
    const std::uint32_t k = atomicAdd(taken, 1u);
    *shared_slot = k < first ? list_a[k] : (k - first < second ? list_b[k - first] : kNoEntry);
  }
  __syncthreads();
  const std::uint64_t entry = *shared_slot;
  __syncthreads();  // the slot is rewritten for the next entry
  return entry;
}

// A tile's work items for the candidates [lo, hi] (lo <= hi), as search_ranges.cu and the shared
// finest level's list kernel list them: one light item, or several segments of pieces
// (piece_length) when they span more than lv.segment. A split tile's segments merge their winners
// through the pixels' keys, and the last one writes the result: the caller clears the keys
// (clear_tile_keys) wherever tile_segments is more than one, and one thread lists the items.
__device__ __forceinline__ int tile_segments(const LevelBuffers& lv, int lo, int hi, bool finest) {
  const int piece = piece_length(lo, hi, lv.segment, lv.disparities, finest);
  return (hi - lo) / piece + 1;
}
// Column x of tile row y0's rows first, first + step, ...: keys cleared (within the image).
__device__ __forceinline__ void clear_tile_keys(const LevelBuffers& lv, int view, int x, int y0,
                                                int first, int step) {
  for (int r = first; r < kTileH; r += step) {
    const int y = y0 + r;
    if (x < lv.width && y < lv.height) lv.key[view][y * lv.width + x] = kNoKey;
  }
}
__device__ __forceinline__ void list_tile(const LevelLists& lists, const LevelBuffers& lv, int m,
                                          int view, int t, int lo, int hi, int segments) {
  ListCounters* c = lists.counters;
  if (segments == 1) {
    lists.light[atomicAdd(&c->light, 1u)] = list_entry(pack_item(m, view, 0, t), lo, hi);
    return;
  }
  lv.tile_done[view][t] = 0;
  const std::uint32_t first = atomicAdd(&c->heavy, static_cast<unsigned>(segments));
  for (int s = 0; s < segments; ++s)
    lists.heavy[first + s] = list_entry(pack_item(m, view, s, t), lo, hi);
}

// Block-wide sum of one value per thread, added to *total once (skipped when 0).
__device__ __forceinline__ void block_add(unsigned long long* total, unsigned value,
                                          unsigned* shared_sum) {
  const int tid = threadIdx.y * blockDim.x + threadIdx.x;
  if (tid == 0) *shared_sum = 0;
  __syncthreads();
  for (int off = 16; off > 0; off >>= 1) value += __shfl_down_sync(0xFFFFFFFFu, value, off);
  if ((threadIdx.x & 31) == 0 && value) atomicAdd(shared_sum, value);
  __syncthreads();
  if (tid == 0 && *shared_sum) atomicAdd(total, static_cast<unsigned long long>(*shared_sum));
}

}  // namespace stereod::cuda
