// Disparity to a point cloud (docs/PROTOCOL.md "From disparity to depth", "Payload encodings"):
// the publisher's "points" payload and what clients compute from a frame without one, one
// function so that both give the same floats.
#pragma once

#include <cstdint>

#include "image.hpp"
#include "publish/protocol.hpp"

namespace stereod::publish {

// One point per pixel of `disparity` (16*d, 0xFFFF = none) into `out`, whose rows hold
// 3 x width floats (X, Y, Z: xyz32f) or 4 x width (X, Y, Z, color: xyzrgb32f), metres in the
// left camera's frame (X right, Y down, Z along the optical axis); X, Y and Z are NaN where there
// is no depth (no disparity, d <= doffs_px, or no camera model). With 4 channels the fourth float
// holds the bits of uint32 0x00RRGGBB from `color` (RGB interleaved, 3 x width bytes a row) or
// `gray` (R = G = B), whichever is given (0 when neither). Throws std::invalid_argument when the
// sizes do not agree.
void disparity_to_points(ImageView<const std::uint16_t> disparity, const DepthCalibration& camera,
                         ImageView<float> out, int channels,
                         ImageView<const std::uint8_t> gray = {},
                         ImageView<const std::uint8_t> color = {});

// 0x00RRGGBB as PCL packs "rgb", and back.
std::uint32_t pack_rgb(std::uint8_t r, std::uint8_t g, std::uint8_t b);
float rgb_as_float(std::uint32_t packed);
std::uint32_t float_as_rgb(float packed);

}  // namespace stereod::publish
