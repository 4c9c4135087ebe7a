#include "frame.hpp"

namespace stereod {

void rgb_to_gray(const RgbImage& rgb, Gray8& gray) {
  gray.ensure_size(rgb.width, rgb.height);
  for (int y = 0; y < rgb.height; ++y) {
    const std::uint8_t* s = rgb.row(y);
    std::uint8_t* d = gray.row(y);
    for (int x = 0; x < rgb.width; ++x) d[x] = luma(s[3 * x], s[3 * x + 1], s[3 * x + 2]);
  }
}

}  // namespace stereod
