// Census transform: per pixel, one bit per window neighbour that is darker than the centre
// (pixel_ops.hpp: census_at defines the bit order and the border rule).
#pragma once

#include <cstdint>

#include "image.hpp"

namespace stereod {

class ThreadPool;

void census_transform(ImageView<const std::uint8_t> img, int window_w, int window_h,
                      Image<std::uint64_t>& codes, ThreadPool* pool = nullptr);

}  // namespace stereod
