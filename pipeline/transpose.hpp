// Transposing images of 1- or 3-byte pixels, split over a ThreadPool's threads: the vertical pair
// of a trinocular rig sees the reference camera transposed (trinocular/fusion.hpp), and the
// refinement walks its planes down columns (stereo/refinement.hpp).
#pragma once

#include <cstddef>
#include <cstdint>

#include "image.hpp"

namespace stereod {

class ThreadPool;

// src (w x h pixels of bytes_per_pixel bytes, stride in bytes) into dst (h x w such pixels): the
// destination's row x, position y (h - 1 - y with `flip`), is the source's pixel (x, y). Split
// over destination rows; gray (1 byte) goes in 8 x 8 blocks transposed in registers on
// little-endian machines. bytes_per_pixel is 1 or 3.
void transpose_pixels(const std::uint8_t* src, std::ptrdiff_t src_stride, int w, int h,
                      int bytes_per_pixel, bool flip, ImageView<std::uint8_t> dst,
                      ThreadPool* pool);

}  // namespace stereod
