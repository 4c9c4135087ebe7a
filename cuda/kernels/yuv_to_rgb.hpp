// Stage before the batch: a YUV camera frame (uploaded as the camera delivered it) to the RGB the
// color-only path reads (yuv_pixel_rgb of pipeline/yuv.hpp, the CPU engine's own function).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "yuv.hpp"  // pipeline/yuv.hpp

namespace stereod::cuda {

// `frame` points into device memory; `rgb` is width * height * 3 bytes, rows packed.
void launch_yuv_to_rgb(const YuvView& frame, std::uint8_t* rgb, cudaStream_t stream);

}  // namespace stereod::cuda
