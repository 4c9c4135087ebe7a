// Stage: the output map of every finest-level tile (post_process.cpp's median3x3 after
// speckle.cpp's removal on the CPU). A tile that was not matched is "no disparity" throughout. A
// matched one stages its pixels and a ring of 1 in shared memory, drops the pixels whose component
// (speckle.cu) is too small, and writes the 3x3 median of what is left. The left view's confidence
// (when asked for) keeps its value only where both of these have a disparity, as on the CPU.
// (A frame without foreground whose matching a gated graph skipped gets its outputs from the
// finest background model kernel instead: ForegroundSignal.) With the refinement (refine.cu,
// `rounds` >= 0) the removal is done already, in the checked map: every tile takes the median of
// the last round's map (voting may give the holes of a tile that was not matched a disparity), and
// the confidence is 0 also where the refinement changed the value (keep_confidence_where_unchanged
// on the CPU).
#include "kernels/device_common.cuh"
#include "kernels/launch.cuh"
#include "kernels/stages.hpp"

namespace stereod::cuda {
namespace {

constexpr int kRows = kTileH / kBlockH;
constexpr int kRingW = kTileW + 2, kRingH = kTileH + 2;

// kGhosts: background.depth_ghosts (the batch key holds it): the left output also goes into the
// frame's record. A template, so that other batches' code carries nothing of it.
template <bool kGhosts>
__global__ void __launch_bounds__(kBlockW* kBlockH)
    speckle_median_kernel(const BatchRecord* __restrict__ batch, int views, int rounds) {
  __shared__ std::uint16_t q[kRingH][kRingW];
  const int m = blockIdx.z / views, view = blockIdx.z % views;
  const MemberArgs& a = *batch->member[m];
  const LevelBuffers& lv = a.level[0];
  const int w = lv.width, h = lv.height;
  const int x0 = blockIdx.x * kTileW, y0 = blockIdx.y * kTileH;
  const int x = x0 + threadIdx.x;
  // Ghosts seen in depth: the left output also goes into the frame's record, which holds the
  // model's decision; filling, where it runs, records again what it gives. A tile that was not
  // matched keeps the record as the model wrote it (its decision, no disparity: what this kernel
  // would write). The record is read before the wait for the previous stage, so that its latency
  // passes meanwhile: the model part, which wrote it, finished before this frame's stereo part
  // began, and nothing since writes it.
  std::uint16_t* record = kGhosts && view == 0 ? depth_record_of(a, batch->frames[m]) : nullptr;
  std::uint16_t decided[kRows] = {};
  if (record) {
#pragma unroll
    for (int k = 0; k < kRows; ++k) {
      const int y = y0 + threadIdx.y + k * kBlockH;
      if (x < w && y < h) decided[k] = record[y * w + x];
    }
  }
  after_previous_stage();
  const int t = blockIdx.y * lv.tiles_x + blockIdx.x;
  std::uint16_t* out = a.out_disp[view];
  std::uint8_t* confidence = view == 0 ? a.out_confidence : nullptr;
  const bool refined = rounds >= 0;
  if (!refined && !a.post_active[view][t]) {
#pragma unroll
    for (int k = 0; k < kRows; ++k) {
      const int y = y0 + threadIdx.y + k * kBlockH;
      if (x < w && y < h) {
        out[y * w + x] = kInvalidDisparity;
        if (confidence) confidence[y * w + x] = 0;
      }
    }
    return;
  }
  const StereoParams& sp = a.stereo;
  const std::uint16_t* q4 = a.q4[view];
  // What the median reads: the checked map (with the refinement: its removal done), or the
  // refinement's result (refined_map).
  const std::uint16_t* map = q4;
  if (refined)
    map = a.refine_interpolated[view] ? a.refine_interpolated[view] : refined_map(a, view, rounds);
  const bool remove = sp.speckle_size > 0 && !refined;
  const std::int32_t* label = a.label[view];
  const std::int32_t* size = a.size[view];
  const int tid = threadIdx.y * kBlockW + threadIdx.x;
  for (int i = tid; i < kRingW * kRingH; i += kBlockW * kBlockH) {
    const int r = i / kRingW, c = i - r * kRingW;
    const int gx = x0 - 1 + c, gy = y0 - 1 + r;
    std::uint16_t v = kInvalidDisparity;  // outside the image: not a neighbour, like a hole
    if (gx >= 0 && gx < w && gy >= 0 && gy < h) {
      const int gi = gy * w + gx;
      v = map[gi];
      if (remove && v != kInvalidDisparity && size[find_root(label, gi)] < sp.speckle_size) {
        v = kInvalidDisparity;
      }
    }
    q[r][c] = v;
  }
  __syncthreads();
#pragma unroll
  for (int k = 0; k < kRows; ++k) {
    const int ty = threadIdx.y + k * kBlockH, y = y0 + ty;
    if (x >= w || y >= h) continue;
    const int r = ty + 1, c = threadIdx.x + 1;
    const std::uint16_t d =
        sp.median ? median3x3_network(q[r][c], [&](int dx, int dy) { return q[r + dy][c + dx]; })
                  : q[r][c];
    out[y * w + x] = d;
    if (record) record[y * w + x] = with_disparity(decided[k], d);
    // Without the refinement q[r][c] is the checked map after the removal; with it, that map is
    // q4, and a value the refinement changed keeps no confidence either.
    const std::uint16_t matched = refined ? q4[y * w + x] : q[r][c];
    if (confidence &&
        (matched == kInvalidDisparity || q[r][c] != matched || d == kInvalidDisparity)) {
      confidence[y * w + x] = 0;
    }
  }
}

}  // namespace

void launch_speckle_median(const BatchShape& shape, const BatchRecord* batch, cudaStream_t stream) {
  const int views = shape.views_out();
  const dim3 grid(static_cast<unsigned>(shape.tiles_x(0)), static_cast<unsigned>(shape.tiles_y(0)),
                  static_cast<unsigned>(views * shape.count));
  const auto kernel =
      shape.depth_ghosts ? speckle_median_kernel<true> : speckle_median_kernel<false>;
  launch_stage("speckle_median_kernel", shape.chained, kernel, grid, dim3(kBlockW, kBlockH), 0,
               stream, batch, views, shape.refine_rounds);
}

}  // namespace stereod::cuda
