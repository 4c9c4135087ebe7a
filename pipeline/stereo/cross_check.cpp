#include "stereo/cross_check.hpp"

#include <cstdlib>

#include "stereo/pixel_ops.hpp"
#include "thread_pool.hpp"

namespace stereod {
namespace {

// The disparity at x in `map` if `other` agrees at x + direction*d, else none.
std::int16_t consistent(const std::int16_t* map, const std::int16_t* other, int width, int x,
                        int direction, int tolerance) {
  const int d = map[x];
  if (d == kNoDisparity) return kNoDisparity;
  const int ox = x + direction * d;
  if (ox < 0 || ox >= width) return kNoDisparity;
  const int od = other[ox];
  if (od == kNoDisparity || std::abs(od - d) > tolerance) return kNoDisparity;
  return static_cast<std::int16_t>(d);
}

}  // namespace

void cross_check(const Image<std::int16_t>& left, const Image<std::int16_t>& right, int tolerance,
                 Image<std::int16_t>& left_checked, Image<std::int16_t>& right_checked,
                 ThreadPool* pool) {
  const int w = left.width(), h = left.height();
  left_checked.ensure_size(w, h);
  right_checked.ensure_size(w, h);
  auto rows = [&](int y0, int y1) {
    for (int y = y0; y < y1; ++y) {
      for (int x = 0; x < w; ++x) {
        left_checked(x, y) = consistent(left.row(y), right.row(y), w, x, -1, tolerance);
        right_checked(x, y) = consistent(right.row(y), left.row(y), w, x, +1, tolerance);
      }
    }
  };
  for_rows(pool, h, rows);
}

}  // namespace stereod
