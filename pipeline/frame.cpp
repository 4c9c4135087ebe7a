#include "frame.hpp"

#include <algorithm>

namespace stereod {

void copy_into(const RgbView& src, RgbImage& dst) {
  if (dst.width != src.width || dst.height != src.height) dst.resize(src.width, src.height);
  for (int y = 0; y < src.height; ++y) {
    std::copy(src.row(y), src.row(y) + 3 * src.width, dst.row(y));
  }
}

void rgb_to_gray(const RgbImage& rgb, Gray8& gray) {
  gray.ensure_size(rgb.width, rgb.height);
  for (int y = 0; y < rgb.height; ++y) {
    const std::uint8_t* s = rgb.row(y);
    std::uint8_t* d = gray.row(y);
    for (int x = 0; x < rgb.width; ++x) d[x] = luma(s[3 * x], s[3 * x + 1], s[3 * x + 2]);
  }
}

}  // namespace stereod
