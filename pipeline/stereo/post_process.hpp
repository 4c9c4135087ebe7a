// Post-processing of the finest level's 16*d maps (docs/ALGORITHM.md step 8).
#pragma once

#include <cstdint>

#include "image.hpp"
#include "stereo/params.hpp"

namespace stereod {

class ThreadPool;

// 3x3 median over the valid pixels of each valid pixel's neighbourhood (lower middle for an even
// count). Holes stay holes; they are the filler's business.
void median3x3(const Disparity16& in, Disparity16& out, ThreadPool* pool = nullptr);

// Scanline hole filling (Chang & Maruyama). A hole is a run of invalid foreground pixels in a row;
// the valid pixels just outside it are its sides (a background pixel or the border is no side).
// Two sides within `interpolate_max` disparities: linear interpolation. Otherwise the side chosen
// by `mode`: the one whose intensity is closer to the pixel's, or the smaller disparity. One side:
// that side. None: the hole stays.
// foreground: 1 = foreground; an empty view means every pixel.
void fill_holes(Disparity16& disparity, ImageView<const std::uint8_t> intensity,
                ImageView<const std::uint8_t> foreground, FillMode mode, int interpolate_max,
                ThreadPool* pool = nullptr);

}  // namespace stereod
