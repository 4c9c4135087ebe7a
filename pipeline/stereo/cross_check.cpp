#include "stereo/cross_check.hpp"

#include "stereo/pixel_ops.hpp"
#include "thread_pool.hpp"

namespace stereod {

void cross_check(const Image<std::int16_t>& left, const Image<std::int16_t>& right, int tolerance,
                 Image<std::int16_t>& left_checked, Image<std::int16_t>& right_checked,
                 ThreadPool* pool) {
  const int w = left.width(), h = left.height();
  left_checked.ensure_size(w, h);
  right_checked.ensure_size(w, h);
  auto rows = [&](int y0, int y1) {
    for (int y = y0; y < y1; ++y) {
      for (int x = 0; x < w; ++x) {
        left_checked(x, y) = cross_checked(left.row(y), right.row(y), w, x, -1, tolerance);
        right_checked(x, y) = cross_checked(right.row(y), left.row(y), w, x, +1, tolerance);
      }
    }
  };
  for_rows(pool, h, rows);
}

}  // namespace stereod
