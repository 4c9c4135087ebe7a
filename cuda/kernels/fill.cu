// Stage: scanline hole filling of the output maps (fill_holes_row in pixel_ops.hpp, the CPU's own
// code): one thread per row, since a row's scan is sequential and rows are independent.
#include "kernels/device_common.cuh"
#include "kernels/launch.cuh"
#include "kernels/stages.hpp"

namespace stereod::cuda {
namespace {

constexpr int kThreads = 64;

__global__ void fill_kernel(const BatchRecord* __restrict__ batch, int views, bool ghosts) {
  after_previous_stage();
  const int m = blockIdx.y / views, view = blockIdx.y % views;
  const MemberArgs& a = *batch->member[m];
  const LevelBuffers& lv = a.level[0];
  const int y = blockIdx.x * blockDim.x + threadIdx.x;
  if (y >= lv.height) return;
  const int w = lv.width;
  const std::size_t row = static_cast<std::size_t>(y) * w;
  const std::uint8_t* fg = a.modeling ? lv.mask[view] + row : nullptr;
  fill_holes_row(a.out_disp[view] + row, w, lv.gray[view] + row, fg,
                 a.stereo.fill_mode == FillMode::kBackground,
                 a.stereo.fill_interpolate_max * kSubpixelScale);
  // Ghosts seen in depth: the record holds the left output as the CPU's model sees it, filled.
  std::uint16_t* record = ghosts && view == 0 ? depth_record_of(a, batch->frames[m]) : nullptr;
  if (record) {
    for (int x = 0; x < w; ++x)
      record[row + x] = with_disparity(record[row + x], a.out_disp[view][row + x]);
  }
}

}  // namespace

void launch_fill(const BatchShape& shape, const BatchRecord* batch, cudaStream_t stream) {
  const int views = shape.views_out();
  launch_stage("fill_kernel", shape.chained, fill_kernel,
               dim3(static_cast<unsigned>((shape.height + kThreads - 1) / kThreads),
                    static_cast<unsigned>(views * shape.count)),
               dim3(kThreads), 0, stream, batch, views, shape.depth_ghosts);
}

}  // namespace stereod::cuda
