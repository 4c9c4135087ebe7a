// Stage: rectification (pipeline/rectify/remap.hpp, the CPU's own arithmetic). For a frame that
// arrives in color only, the gray frame is the remap of the luma (luma first, then remap, as the
// CPU engine does), computed tap by tap.
#include "kernels/device_common.cuh"
#include "kernels/stages.hpp"
#include "rectify/remap.hpp"

namespace stereod::cuda {
namespace {

__global__ void rectify_kernel(const BatchRecord* __restrict__ batch) {
  const MemberArgs& a = *batch->member[blockIdx.z >> 1];
  const int cam = blockIdx.z & 1;
  const int w = a.width, h = a.height;
  const int x = blockIdx.x * kBlockW + threadIdx.x, y = blockIdx.y * kBlockH + threadIdx.y;
  if (x >= w || y >= h) return;
  const int i = y * w + x;
  const std::int32_t sx = a.map[cam][2 * i], sy = a.map[cam][2 * i + 1];
  const std::uint8_t* gray = a.in_gray[cam];
  const std::uint8_t* rgb = a.in_rgb[cam];
  if (gray) {
    a.rect_gray[cam][i] = remap_bilinear_at(gray, w, h, w, sx, sy);
  } else {
    a.rect_gray[cam][i] = remap_bilinear_sampled(
        [&](int u, int v) -> int {
          if (u < 0 || u >= w || v < 0 || v >= h) return 0;
          const std::uint8_t* p = rgb + 3 * (v * w + u);
          return luma_bt601(p[0], p[1], p[2]);
        },
        sx, sy);
  }
  if (rgb && a.rect_rgb[cam]) {
    for (int c = 0; c < 3; ++c) {
      a.rect_rgb[cam][3 * i + c] = remap_bilinear_at(rgb + c, w, h, 3 * w, sx, sy, 3);
    }
  }
}

}  // namespace

void launch_rectify(const BatchShape& shape, const BatchRecord* batch, cudaStream_t stream) {
  rectify_kernel<<<member_grid(shape.width, shape.height, 2 * shape.count), dim3(kBlockW, kBlockH),
                   0, stream>>>(batch);
  STEREOD_CUDA_LAUNCHED("rectify_kernel");
}

}  // namespace stereod::cuda
