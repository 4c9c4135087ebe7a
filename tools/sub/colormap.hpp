// A perceptual colormap for disparity pictures: lightness rises linearly in OKLab (Ottosson 2020)
// from dark blue-violet (far) through teal and green to pale yellow (near) while the hue turns, so
// equal steps in disparity look like equal steps in color; invalid pixels are black, darker than
// any valid one.
#pragma once

#include <array>
#include <cstdint>

#include "frame.hpp"
#include "image.hpp"

namespace stereod::sub {

using Rgb = std::array<std::uint8_t, 3>;

// 256 entries, index 0 = smallest disparity. Computed once.
const std::array<Rgb, 256>& perceptual_colormap();

// Disparity (16*d, 0xFFFF = none) to color, d mapped linearly from [min_d, max_d] onto the map
// and clamped; invalid pixels black.
RgbImage colorize(ImageView<const std::uint16_t> disparity, double min_d, double max_d);

}  // namespace stereod::sub
