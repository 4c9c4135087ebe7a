#include "rectify/remap.hpp"

#include <cmath>
#include <stdexcept>
#include <string>

namespace stereod {

std::int32_t quantize_map_coord(double pixels, int size) {
  const double lo = -kRemapClampPixels;
  const double hi = static_cast<double>(size - 1 + kRemapClampPixels);
  if (std::isnan(pixels)) pixels = lo;
  pixels = pixels < lo ? lo : (pixels > hi ? hi : pixels);
  return static_cast<std::int32_t>(std::lround(pixels * kRemapOne));
}

RectificationMap identity_map(int width, int height) {
  RectificationMap map;
  map.resize(width, height);
  for (int y = 0; y < height; ++y) {
    for (int x = 0; x < width; ++x) {
      map.at(x, y)[0] = x * kRemapOne;
      map.at(x, y)[1] = y * kRemapOne;
    }
  }
  return map;
}

void remap(ImageView<const std::uint8_t> src, const RectificationMap& map,
           ImageView<std::uint8_t> dst) {
  if (src.width != map.width || src.height != map.height || dst.width != map.width ||
      dst.height != map.height) {
    throw std::invalid_argument(
        "remap: the map is for " + std::to_string(map.width) + "x" + std::to_string(map.height) +
        " images, got " + std::to_string(src.width) + "x" + std::to_string(src.height) + " -> " +
        std::to_string(dst.width) + "x" + std::to_string(dst.height));
  }
  const int stride = static_cast<int>(src.stride);
  for (int y = 0; y < map.height; ++y) {
    const std::int32_t* m = map.at(0, y);
    std::uint8_t* out = dst.row(y);
    for (int x = 0; x < map.width; ++x) {
      out[x] = remap_bilinear_at(src.data, src.width, src.height, stride, m[2 * x], m[2 * x + 1]);
    }
  }
}

void remap(ImageView<const std::uint8_t> src, const RectificationMap& map, Gray8& dst) {
  dst.ensure_size(map.width, map.height);
  remap(src, map, dst.view());
}

void remap_rgb(const RgbView& src, const RectificationMap& map, RgbImage& dst) {
  if (src.width != map.width || src.height != map.height) {
    throw std::invalid_argument("remap: the map is for " + std::to_string(map.width) + "x" +
                                std::to_string(map.height) + " images, got " +
                                std::to_string(src.width) + "x" + std::to_string(src.height));
  }
  if (dst.width != map.width || dst.height != map.height) dst.resize(map.width, map.height);
  const int stride = static_cast<int>(src.stride);
  for (int y = 0; y < map.height; ++y) {
    const std::int32_t* m = map.at(0, y);
    std::uint8_t* out = dst.row(y);
    for (int x = 0; x < map.width; ++x) {
      for (int c = 0; c < 3; ++c) {
        out[3 * x + c] = remap_bilinear_at(src.data + c, src.width, src.height, stride, m[2 * x],
                                           m[2 * x + 1], 3);
      }
    }
  }
}

}  // namespace stereod
