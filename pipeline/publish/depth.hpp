// Disparity (disp16q4) to depth in millimetres (depth16mm) through a 64 Ki-entry table: one lookup
// per pixel, the division done once per calibration rather than once per pixel.
#pragma once

#include <cstdint>
#include <vector>

#include "image.hpp"
#include "publish/protocol.hpp"

namespace stereod::publish {

// depth_mm = round(1000 * focal_px * baseline_m / (value/16 - doffs_px)); 0 (kDepthInvalid) for
// 0xFFFF, for d <= doffs_px, and for depths that do not fit 1..65535 mm.
std::uint16_t depth_mm(std::uint16_t disparity, const DepthCalibration& calibration);

class DepthTable {
 public:
  // Rebuilds the table only when the calibration differs from the last one.
  void set_calibration(const DepthCalibration& calibration);
  // `out` must have disparity's size; rows of both may be strided.
  void convert(ImageView<const std::uint16_t> disparity, ImageView<std::uint16_t> out) const;

 private:
  DepthCalibration calibration_;
  std::vector<std::uint16_t> table_;
};

}  // namespace stereod::publish
