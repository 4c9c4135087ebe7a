#include "stereo/search_range.hpp"

#include <algorithm>

#include "stereo/pixel_ops.hpp"
#include "thread_pool.hpp"

namespace stereod {
namespace {

constexpr std::uint16_t kNoMin = 0xFFFF;  // the minimum of no valid disparity

// Folds n (min, max) pairs into a running min and max. Minima are unsigned, so kNoDisparity
// (0xFFFF as unsigned) never wins one; maxima signed, so it never wins those either.
void fold(std::uint16_t* mn, std::int16_t* mx, const std::uint16_t* v_min,
          const std::int16_t* v_max, int n) {
  for (int i = 0; i < n; ++i) {
    mn[i] = v_min[i] < mn[i] ? v_min[i] : mn[i];
    mx[i] = v_max[i] > mx[i] ? v_max[i] : mx[i];
  }
}

}  // namespace

void full_search_ranges(int width, int height, ImageView<const std::uint8_t> foreground,
                        int disparities, SearchRanges& out) {
  out.lo.ensure_size(width, height);
  out.hi.ensure_size(width, height);
  const std::int16_t full = static_cast<std::int16_t>(disparities - 1);
  for (int y = 0; y < height; ++y) {
    const std::uint8_t* fg = foreground.empty() ? nullptr : foreground.row(y);
    std::int16_t* lo = out.lo.row(y);
    std::int16_t* hi = out.hi.row(y);
    for (int x = 0; x < width; ++x) {
      lo[x] = 0;
      hi[x] = !fg || fg[x] ? full : std::int16_t{-1};
    }
  }
}

// parent_range (pixel_ops.hpp) for every pixel at once: the min and max of the valid parent
// disparities over each (2r+1)^2 block are separable, a row pass then a column pass on the parent
// grid; every finer pixel then reads its parent's block.
void parent_search_ranges(const Image<std::int16_t>& parent, int width, int height,
                          ImageView<const std::uint8_t> foreground, int radius, int disparities,
                          SearchRanges& out, ThreadPool* pool) {
  out.lo.ensure_size(width, height);
  out.hi.ensure_size(width, height);
  const int pw = parent.width(), ph = parent.height();
  Image<std::uint16_t>& row_min = out.row_min;
  Image<std::int16_t>& row_max = out.row_max;
  row_min.ensure_size(pw, ph);
  row_max.ensure_size(pw, ph);
  Image<std::int16_t>& block_lo = out.parent_lo;
  Image<std::int16_t>& block_hi = out.parent_hi;
  block_lo.ensure_size(pw, ph);
  block_hi.ensure_size(pw, ph);
  for_rows(pool, ph, [&](int v0, int v1) {
    for (int v = v0; v < v1; ++v) {
      std::uint16_t* mn = row_min.row(v);
      std::int16_t* mx = row_max.row(v);
      std::fill(mn, mn + pw, kNoMin);
      std::fill(mx, mx + pw, kNoDisparity);
      for (int du = -radius; du <= radius; ++du) {
        const int u0 = std::max(0, -du), u1 = std::min(pw, pw - du);
        const std::int16_t* p = parent.row(v) + u0 + du;
        fold(mn + u0, mx + u0, reinterpret_cast<const std::uint16_t*>(p), p, u1 - u0);
      }
    }
  });
  // Column pass: each parent pixel's block, turned into the range its children search.
  for_rows(pool, ph, [&](int v0, int v1) {
    for (int v = v0; v < v1; ++v) {
      std::uint16_t* mn = reinterpret_cast<std::uint16_t*>(block_lo.row(v));
      std::int16_t* mx = block_hi.row(v);
      std::fill(mn, mn + pw, kNoMin);
      std::fill(mx, mx + pw, kNoDisparity);
      for (int t = std::max(0, v - radius); t <= std::min(ph - 1, v + radius); ++t) {
        fold(mn, mx, row_min.row(t), row_max.row(t), pw);
      }
      std::int16_t* lo = block_lo.row(v);
      for (int u = 0; u < pw; ++u) {
        const bool any = mx[u] >= 0;
        lo[u] = static_cast<std::int16_t>(any ? clamp_int(2 * mn[u] - 2, 0, disparities - 1) : 0);
        mx[u] = static_cast<std::int16_t>(any ? clamp_int(2 * mx[u] + 2, 0, disparities - 1)
                                              : disparities - 1);
      }
    }
  });
  for_rows(pool, height, [&](int y0, int y1) {
    for (int y = y0; y < y1; ++y) {
      const int py = std::min(y / 2, ph - 1);
      const std::int16_t* plo = block_lo.row(py);
      const std::int16_t* phi = block_hi.row(py);
      std::int16_t* lo = out.lo.row(y);
      std::int16_t* hi = out.hi.row(y);
      const std::uint8_t* fg = foreground.empty() ? nullptr : foreground.row(y);
      for (int x = 0; x < width; ++x) {
        const int px = std::min(x / 2, pw - 1);
        const bool matched = !fg || fg[x];
        lo[x] = matched ? plo[px] : std::int16_t{0};
        hi[x] = matched ? phi[px] : std::int16_t{-1};
      }
    }
  });
}

}  // namespace stereod
