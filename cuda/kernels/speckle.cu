// Stage: the finest level's left-right check and speckle labelling (cross_check.cpp and
// speckle.cpp on the CPU), over the tiles that were matched (MemberArgs::post_active, which
// search_ranges.cu sets).
//
// Speckles are connected components (4-neighbours whose values differ by at most the speckle
// range) of fewer than speckle_size pixels. The CPU floods them; here union-find gives the same
// components whatever the order of the unions: (1) check_and_label: each tile checks its subpixel
// values, joins its own pixels in shared memory and records each local component's size at its
// root; (2) join: tiles are joined along their right and bottom borders in global memory;
// (3) count: each local root adds its size to its global root's. speckle_median.cu then removes
// what is too small while it takes the median. Each pass is one block per tile of the finest
// level (a tile that was not matched returns at once): a persistent grid taking the matched tiles
// from a list paid a shared counter's round trip and two barriers per tile, most of the join's
// time.
#include "kernels/device_common.cuh"
#include "kernels/launch.cuh"
#include "kernels/stages.hpp"

namespace stereod::cuda {
namespace {

constexpr int kRows = kTileH / kBlockH;

__device__ __forceinline__ bool linked(int a, int b, int max_step) {
  return a != kInvalidDisparity && b != kInvalidDisparity && (a > b ? a - b : b - a) <= max_step;
}

struct PostTile {
  const MemberArgs* args;
  int view, t, x0, y0, w, h;
  bool matched;
};

// The tile of this block: blockIdx.x, y the tile, z member and view (`views` per member).
__device__ __forceinline__ PostTile post_tile(const BatchRecord* batch, int views) {
  PostTile p;
  p.args = batch->member[blockIdx.z / views];
  p.view = static_cast<int>(blockIdx.z % views);
  const LevelBuffers& lv = p.args->level[0];
  p.t = static_cast<int>(blockIdx.y) * lv.tiles_x + static_cast<int>(blockIdx.x);
  p.x0 = static_cast<int>(blockIdx.x) * kTileW;
  p.y0 = static_cast<int>(blockIdx.y) * kTileH;
  p.w = lv.width;
  p.h = lv.height;
  p.matched = p.args->post_active[p.view][p.t] != 0;
  return p;
}

__global__ void __launch_bounds__(kBlockW* kBlockH)
    check_and_label_kernel(const BatchRecord* __restrict__ batch, int views) {
  after_previous_stage();
  __shared__ std::uint16_t q[kTileH][kTileW];
  __shared__ int local[kTileH * kTileW];
  __shared__ int local_count[kTileH * kTileW];
  const PostTile p = post_tile(batch, views);
  if (!p.matched) return;
  const MemberArgs& a = *p.args;
  const StereoParams& sp = a.stereo;
  const int dir = p.view == 0 ? -1 : 1;
  const LevelBuffers& lv = a.level[0];
#pragma unroll
  for (int k = 0; k < kRows; ++k) {
    const int ty = threadIdx.y + k * kBlockH, tx = threadIdx.x;
    const int x = p.x0 + tx, y = p.y0 + ty;
    std::uint16_t v = kInvalidDisparity;
    if (x < p.w && y < p.h) {
      const int i = y * p.w + x;
      v = a.q4[p.view][i];
      if (sp.cross_check && v != kInvalidDisparity &&
          checked_value(lv.disp[p.view], lv.disp[1 - p.view], p.w, x, y, dir, true,
                        sp.cross_check_tolerance) == kNoDisparity) {
        v = kInvalidDisparity;
        a.q4[p.view][i] = v;
      }
    }
    q[ty][tx] = v;
    local_count[ty * kTileW + tx] = 0;
  }
  __syncthreads();
  if (sp.speckle_size > 0) {
    const int step = sp.speckle_range * kSubpixelScale;
    // Rows first, without atomics: a warp is a row of the tile, and each pixel hangs under the
    // start of its run of linked pixels (the smallest index of the run, as unite would choose).
    unsigned run_starts[kRows];
#pragma unroll
    for (int k = 0; k < kRows; ++k) {
      const int ty = threadIdx.y + k * kBlockH, tx = threadIdx.x;
      const bool from_left = tx > 0 && linked(q[ty][tx - 1], q[ty][tx], step);
      run_starts[k] = ~__ballot_sync(0xFFFFFFFFu, from_left);  // bit 0 is always set
      const unsigned here_or_before = run_starts[k] & (0xFFFFFFFFu >> (31 - tx));
      local[ty * kTileW + tx] = ty * kTileW + (31 - __clz(here_or_before));
    }
    __syncthreads();
    // Then the links down. Where the pixels to the left are linked down too and both rows'
    // runs reach across, the runs are joined by the left pair already.
#pragma unroll
    for (int k = 0; k < kRows; ++k) {
      const int ty = threadIdx.y + k * kBlockH, tx = threadIdx.x;
      if (ty + 1 >= kTileH || !linked(q[ty][tx], q[ty + 1][tx], step)) continue;
      const bool joined_left = tx > 0 && linked(q[ty][tx - 1], q[ty + 1][tx - 1], step) &&
                               linked(q[ty][tx - 1], q[ty][tx], step) &&
                               linked(q[ty + 1][tx - 1], q[ty + 1][tx], step);
      const int li = ty * kTileW + tx;
      if (!joined_left) unite(local, li, li + kTileW);
    }
    __syncthreads();
    // Each run adds its length at its root once (a run of valid pixels, or one invalid pixel).
#pragma unroll
    for (int k = 0; k < kRows; ++k) {
      const int ty = threadIdx.y + k * kBlockH, tx = threadIdx.x;
      if (!((run_starts[k] >> tx) & 1u) || q[ty][tx] == kInvalidDisparity) continue;
      const unsigned later = tx == 31 ? 0u : run_starts[k] & (0xFFFFFFFEu << tx);
      const int run_end = later ? __ffs(later) - 1 : kTileW;
      atomicAdd(&local_count[find_root(local, ty * kTileW + tx)], run_end - tx);
    }
    __syncthreads();
#pragma unroll
    for (int k = 0; k < kRows; ++k) {
      const int ty = threadIdx.y + k * kBlockH, tx = threadIdx.x;
      const int x = p.x0 + tx, y = p.y0 + ty;
      if (x >= p.w || y >= p.h) continue;
      const int i = y * p.w + x, li = ty * kTileW + tx;
      const int root = find_root(local, li);
      // The tile root's global index is the smallest of its set, as the global rule wants.
      a.label[p.view][i] = (p.y0 + root / kTileW) * p.w + p.x0 + root % kTileW;
      a.local_size[p.view][i] = root == li ? local_count[li] : 0;
      a.size[p.view][i] = 0;
    }
  }
}

__global__ void __launch_bounds__(kBlockW* kBlockH)
    speckle_join_kernel(const BatchRecord* __restrict__ batch, int views) {
  after_previous_stage();
  const PostTile p = post_tile(batch, views);
  if (!p.matched) return;
  const MemberArgs& a = *p.args;
  const std::uint16_t* q = a.q4[p.view];
  std::int32_t* label = a.label[p.view];
  const int step = a.stereo.speckle_range * kSubpixelScale;
  // Only links that cross the tile's right and bottom borders are left to join.
  const int tid = threadIdx.y * kBlockW + threadIdx.x;
  if (tid < kTileH) {
    const int x = p.x0 + kTileW - 1, y = p.y0 + tid;
    if (x + 1 < p.w && y < p.h) {
      const int i = y * p.w + x;
      if (linked(q[i], q[i + 1], step)) unite(label, i, i + 1);
    }
  } else if (tid >= 32 && tid < 32 + kTileW) {
    const int x = p.x0 + tid - 32, y = p.y0 + kTileH - 1;
    if (x < p.w && y + 1 < p.h) {
      const int i = y * p.w + x;
      if (linked(q[i], q[i + p.w], step)) unite(label, i, i + p.w);
    }
  }
}

__global__ void __launch_bounds__(kBlockW* kBlockH)
    speckle_count_kernel(const BatchRecord* __restrict__ batch, int views) {
  after_previous_stage();
  const PostTile p = post_tile(batch, views);
  if (!p.matched) return;
  const MemberArgs& a = *p.args;
  std::int32_t* label = a.label[p.view];
  std::int32_t* size = a.size[p.view];
  const int min_size = a.stereo.speckle_size;
#pragma unroll
  for (int k = 0; k < kRows; ++k) {
    const int x = p.x0 + threadIdx.x, y = p.y0 + threadIdx.y + k * kBlockH;
    if (x >= p.w || y >= p.h) continue;
    const int i = y * p.w + x;
    const int n = a.local_size[p.view][i];
    if (n == 0) continue;  // not a local root
    const int root = find_root(label, i);
    if (root != i) label[i] = root;  // shorter paths for the removal
    // No atomic once the size is known to be large enough: a big component would otherwise
    // serialise thousands of them.
    if (size[root] < min_size) atomicAdd(&size[root], n);
  }
}

// One block per finest tile and view returned; `block`: the threads a tile needs.
void launch_post(void (*kernel)(const BatchRecord*, int), const char* name, dim3 block,
                 const BatchShape& shape, const BatchRecord* batch, cudaStream_t stream) {
  const int views = shape.views_out();
  const dim3 grid(static_cast<unsigned>(shape.tiles_x(0)), static_cast<unsigned>(shape.tiles_y(0)),
                  static_cast<unsigned>(views * shape.count));
  launch_stage(name, shape.chained, kernel, grid, block, 0, stream, batch, views);
}

}  // namespace

void launch_check_and_label(const BatchShape& shape, const BatchRecord* batch,
                            cudaStream_t stream) {
  launch_post(check_and_label_kernel, "check_and_label_kernel", dim3(kBlockW, kBlockH), shape,
              batch, stream);
}

void launch_speckle_join(const BatchShape& shape, const BatchRecord* batch, cudaStream_t stream) {
  // The border pixels only: the right column's kTileH by threads 0 .., the bottom row's by 32 ...
  launch_post(speckle_join_kernel, "speckle_join_kernel", dim3(32 + kTileW), shape, batch, stream);
}

void launch_speckle_count(const BatchShape& shape, const BatchRecord* batch, cudaStream_t stream) {
  launch_post(speckle_count_kernel, "speckle_count_kernel", dim3(kBlockW, kBlockH), shape, batch,
              stream);
}

}  // namespace stereod::cuda
