// YUV -> RGB on the device: one thread per pixel, each the CPU's yuv_pixel_rgb.
#include "cuda_check.hpp"
#include "kernels/yuv_to_rgb.hpp"

namespace stereod::cuda {
namespace {

constexpr int kBlockX = 32, kBlockY = 8;

__global__ void yuv_to_rgb_kernel(YuvView frame, std::uint8_t* __restrict__ rgb) {
  const int x = blockIdx.x * kBlockX + threadIdx.x;
  const int y = blockIdx.y * kBlockY + threadIdx.y;
  if (x >= frame.width || y >= frame.height) return;
  yuv_pixel_rgb(frame, x, y, rgb + 3 * (static_cast<std::size_t>(y) * frame.width + x));
}

}  // namespace

void launch_yuv_to_rgb(const YuvView& frame, std::uint8_t* rgb, cudaStream_t stream) {
  const dim3 grid(static_cast<unsigned>((frame.width + kBlockX - 1) / kBlockX),
                  static_cast<unsigned>((frame.height + kBlockY - 1) / kBlockY));
  yuv_to_rgb_kernel<<<grid, dim3(kBlockX, kBlockY), 0, stream>>>(frame, rgb);
  STEREOD_CUDA_LAUNCHED("yuv_to_rgb_kernel");
}

}  // namespace stereod::cuda
