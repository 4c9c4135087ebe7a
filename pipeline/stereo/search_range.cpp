#include "stereo/search_range.hpp"

#include <algorithm>

#include "stereo/pixel_ops.hpp"
#include "thread_pool.hpp"

namespace stereod {
namespace {

bool is_foreground(ImageView<const std::uint8_t> fg, int x, int y) {
  return fg.empty() || fg(x, y) != 0;
}

}  // namespace

void full_search_ranges(int width, int height, ImageView<const std::uint8_t> foreground,
                        int disparities, SearchRanges& out) {
  out.lo.ensure_size(width, height);
  out.hi.ensure_size(width, height);
  for (int y = 0; y < height; ++y) {
    for (int x = 0; x < width; ++x) {
      const bool m = is_foreground(foreground, x, y);
      out.lo(x, y) = 0;
      out.hi(x, y) = static_cast<std::int16_t>(m ? disparities - 1 : -1);
    }
  }
}

void parent_search_ranges(const Image<std::int16_t>& parent, int width, int height,
                          ImageView<const std::uint8_t> foreground, int radius, int disparities,
                          SearchRanges& out, ThreadPool* pool) {
  out.lo.ensure_size(width, height);
  out.hi.ensure_size(width, height);
  const int pw = parent.width(), ph = parent.height();
  auto rows = [&](int y0, int y1) {
    for (int y = y0; y < y1; ++y) {
      for (int x = 0; x < width; ++x) {
        if (!is_foreground(foreground, x, y)) {
          out.lo(x, y) = 0;
          out.hi(x, y) = -1;
          continue;
        }
        int lo = 0, hi = 0;
        parent_range([&](int u, int v) { return static_cast<int>(parent(u, v)); }, pw, ph, x, y,
                     radius, disparities, lo, hi);
        out.lo(x, y) = static_cast<std::int16_t>(lo);
        out.hi(x, y) = static_cast<std::int16_t>(hi);
      }
    }
  };
  for_rows(pool, height, rows);
}

}  // namespace stereod
