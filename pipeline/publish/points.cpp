#include "publish/points.hpp"

#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

namespace stereod::publish {

std::uint32_t pack_rgb(std::uint8_t r, std::uint8_t g, std::uint8_t b) {
  return (std::uint32_t{r} << 16) | (std::uint32_t{g} << 8) | b;
}

float rgb_as_float(std::uint32_t packed) {
  float f;
  std::memcpy(&f, &packed, sizeof f);
  return f;
}

std::uint32_t float_as_rgb(float packed) {
  std::uint32_t u;
  std::memcpy(&u, &packed, sizeof u);
  return u;
}

void disparity_to_points(ImageView<const std::uint16_t> disparity, const DepthCalibration& c,
                         ImageView<float> out, int channels, ImageView<const std::uint8_t> gray,
                         ImageView<const std::uint8_t> color) {
  const int w = disparity.width, h = disparity.height;
  const auto size_error = [&](const std::string& what) {
    throw std::invalid_argument("disparity_to_points: " + what + " does not fit the " +
                                std::to_string(w) + "x" + std::to_string(h) + " disparity");
  };
  if (channels != 3 && channels != 4) {
    throw std::invalid_argument("disparity_to_points: 3 or 4 channels, not " +
                                std::to_string(channels));
  }
  if (out.width != w * channels || out.height != h) size_error("the output");
  if (!gray.empty() && (gray.width != w || gray.height != h)) size_error("the gray image");
  if (!color.empty() && (color.width != 3 * w || color.height != h)) size_error("the color image");
  const float nan = std::numeric_limits<float>::quiet_NaN();
  // X = (x - cx) Z / fx and Y = (y - cy) Z / fy: the factors of Z per column and per row.
  const bool usable = c.usable() && c.fy_px > 0;
  std::vector<double> column(static_cast<std::size_t>(w));
  for (int x = 0; x < w; ++x) column[static_cast<std::size_t>(x)] = (x - c.cx_px) / c.focal_px;
  const double fb = c.focal_px * c.baseline_m;
  for (int y = 0; y < h; ++y) {
    const std::uint16_t* d = disparity.row(y);
    float* o = out.row(y);
    const double row = usable ? (y - c.cy_px) / c.fy_px : 0.0;
    for (int x = 0; x < w; ++x, o += channels) {
      const double dd = d[x] / 16.0 - c.doffs_px;
      if (!usable || d[x] == kDisparityInvalid || !(dd > 0)) {
        o[0] = o[1] = o[2] = nan;
      } else {
        const double z = fb / dd;
        o[0] = static_cast<float>(column[static_cast<std::size_t>(x)] * z);
        o[1] = static_cast<float>(row * z);
        o[2] = static_cast<float>(z);
      }
      if (channels == 4) {
        std::uint32_t rgb = 0;
        if (!color.empty()) {
          const std::uint8_t* p = color.row(y) + 3 * x;
          rgb = pack_rgb(p[0], p[1], p[2]);
        } else if (!gray.empty()) {
          const std::uint8_t v = gray.row(y)[x];
          rgb = pack_rgb(v, v, v);
        }
        o[3] = rgb_as_float(rgb);
      }
    }
  }
}

}  // namespace stereod::publish
