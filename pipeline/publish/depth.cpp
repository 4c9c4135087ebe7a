#include "publish/depth.hpp"

#include <cassert>
#include <cmath>

namespace stereod::publish {

std::uint16_t depth_mm(std::uint16_t disparity, const DepthCalibration& c) {
  if (disparity == kDisparityInvalid || !c.usable()) return kDepthInvalid;
  const double d = disparity / 16.0 - c.doffs_px;
  if (d <= 0) return kDepthInvalid;
  const double mm = std::round(1000.0 * c.focal_px * c.baseline_m / d);
  if (!(mm >= 1.0 && mm <= 65535.0)) return kDepthInvalid;
  return static_cast<std::uint16_t>(mm);
}

void DepthTable::set_calibration(const DepthCalibration& c) {
  if (!table_.empty() && c == calibration_) return;
  calibration_ = c;
  table_.resize(0x10000);
  for (std::uint32_t v = 0; v < 0x10000; ++v) {
    table_[v] = depth_mm(static_cast<std::uint16_t>(v), c);
  }
}

void DepthTable::convert(ImageView<const std::uint16_t> disparity,
                         ImageView<std::uint16_t> out) const {
  assert(!table_.empty() && out.width == disparity.width && out.height == disparity.height);
  for (int y = 0; y < disparity.height; ++y) {
    const std::uint16_t* in = disparity.row(y);
    std::uint16_t* o = out.row(y);
    for (int x = 0; x < disparity.width; ++x) o[x] = table_[in[x]];
  }
}

}  // namespace stereod::publish
