#include "colormap.hpp"

#include <algorithm>
#include <cmath>

#include "stereo/pixel_ops.hpp"

namespace stereod::sub {
namespace {

constexpr double kPi = 3.14159265358979323846;

struct LinearRgb {
  double r, g, b;
  bool in_gamut() const {
    constexpr double e = 1e-9;
    return r >= -e && r <= 1 + e && g >= -e && g <= 1 + e && b >= -e && b <= 1 + e;
  }
};

// OKLab to linear sRGB (Ottosson's published matrices).
LinearRgb oklab_to_linear_srgb(double L, double a, double b) {
  const double l = std::pow(L + 0.3963377774 * a + 0.2158037573 * b, 3);
  const double m = std::pow(L - 0.1055613458 * a - 0.0638541728 * b, 3);
  const double s = std::pow(L - 0.0894841775 * a - 1.2914855480 * b, 3);
  return {4.0767416621 * l - 3.3077115913 * m + 0.2309699292 * s,
          -1.2684380046 * l + 2.6097574011 * m - 0.3413193965 * s,
          -0.0041960863 * l - 0.7034186147 * m + 1.7076147010 * s};
}

std::uint8_t srgb_byte(double linear) {
  const double v = std::clamp(linear, 0.0, 1.0);
  const double encoded = v <= 0.0031308 ? 12.92 * v : 1.055 * std::pow(v, 1 / 2.4) - 0.055;
  return static_cast<std::uint8_t>(std::lround(encoded * 255));
}

// Position t in [0, 1]: lightness 0.30 -> 0.94 (linear), hue 285 deg (blue-violet) -> 100 deg
// (yellow) through teal and green, chroma as high as sRGB allows up to 0.15. Chroma is
// reduced to reach the gamut, never lightness, so lightness stays exactly linear in t.
Rgb color_at(double t) {
  const double L = 0.30 + 0.64 * t;
  const double hue = (285.0 - 185.0 * t) * kPi / 180.0;
  double lo = 0, hi = 0.15;
  if (oklab_to_linear_srgb(L, hi * std::cos(hue), hi * std::sin(hue)).in_gamut()) lo = hi;
  for (int i = 0; i < 30 && lo < hi; ++i) {  // bisection on chroma for the gamut edge
    const double mid = (lo + hi) / 2;
    (oklab_to_linear_srgb(L, mid * std::cos(hue), mid * std::sin(hue)).in_gamut() ? lo : hi) = mid;
  }
  const LinearRgb c = oklab_to_linear_srgb(L, lo * std::cos(hue), lo * std::sin(hue));
  return {srgb_byte(c.r), srgb_byte(c.g), srgb_byte(c.b)};
}

}  // namespace

const std::array<Rgb, 256>& perceptual_colormap() {
  static const std::array<Rgb, 256> map = [] {
    std::array<Rgb, 256> m{};
    for (int i = 0; i < 256; ++i) m[i] = color_at(i / 255.0);
    return m;
  }();
  return map;
}

RgbImage colorize(ImageView<const std::uint16_t> disparity, double min_d, double max_d) {
  const auto& map = perceptual_colormap();
  const double span = max_d > min_d ? max_d - min_d : 1.0;
  RgbImage out;
  out.resize(disparity.width, disparity.height);  // zero-filled: black
  for (int y = 0; y < disparity.height; ++y) {
    const std::uint16_t* in = disparity.row(y);
    std::uint8_t* o = out.row(y);
    for (int x = 0; x < disparity.width; ++x) {
      if (in[x] == kInvalidDisparity) continue;
      const double t = (in[x] / static_cast<double>(kSubpixelScale) - min_d) / span;
      const auto index = static_cast<std::size_t>(std::lround(std::clamp(t, 0.0, 1.0) * 255));
      std::copy(map[index].begin(), map[index].end(), o + 3 * x);
    }
  }
  return out;
}

}  // namespace stereod::sub
