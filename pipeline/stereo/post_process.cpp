#include "stereo/post_process.hpp"

#include <cstdlib>

#include "stereo/pixel_ops.hpp"
#include "thread_pool.hpp"

namespace stereod {

void median3x3(const Disparity16& in, Disparity16& out, ThreadPool* pool) {
  const int w = in.width(), h = in.height();
  out.ensure_size(w, h);
  auto rows = [&](int y0, int y1) {
    for (int y = y0; y < y1; ++y) {
      for (int x = 0; x < w; ++x) {
        if (in(x, y) == kInvalidDisparity) {
          out(x, y) = kInvalidDisparity;
          continue;
        }
        std::uint16_t v[9];
        int n = 0;
        for (int dy = -1; dy <= 1; ++dy) {
          const int yy = y + dy;
          if (yy < 0 || yy >= h) continue;
          for (int dx = -1; dx <= 1; ++dx) {
            const int xx = x + dx;
            if (xx < 0 || xx >= w) continue;
            const std::uint16_t d = in(xx, yy);
            if (d != kInvalidDisparity) v[n++] = d;
          }
        }
        out(x, y) = lower_median(v, n);
      }
    }
  };
  if (pool)
    pool->parallel_for(h, rows);
  else
    rows(0, h);
}

void fill_holes(Disparity16& disparity, ImageView<const std::uint8_t> intensity,
                ImageView<const std::uint8_t> foreground, FillMode mode, int interpolate_max,
                ThreadPool* pool) {
  const int w = disparity.width(), h = disparity.height();
  const int max_step = interpolate_max * kSubpixelScale;
  auto is_fg = [&](int x, int y) { return foreground.empty() || foreground(x, y) != 0; };
  auto rows = [&](int y0, int y1) {
    for (int y = y0; y < y1; ++y) {
      std::uint16_t* d = disparity.row(y);
      int x = 0;
      while (x < w) {
        if (d[x] != kInvalidDisparity || !is_fg(x, y)) {
          ++x;
          continue;
        }
        const int start = x;  // a run of foreground holes: [start, end)
        while (x < w && d[x] == kInvalidDisparity && is_fg(x, y)) ++x;
        const int end = x;
        const int xl = start - 1, xr = end;
        const bool has_l = xl >= 0 && d[xl] != kInvalidDisparity;
        const bool has_r = xr < w && d[xr] != kInvalidDisparity;
        if (!has_l && !has_r) continue;
        for (int i = start; i < end; ++i) {
          int v;
          if (has_l && has_r) {
            const int dl = d[xl], dr = d[xr];
            if (std::abs(dl - dr) <= max_step) {
              v = interpolate_disparity(xl, dl, xr, dr, i);
            } else if (mode == FillMode::kBackground) {
              v = dl < dr ? dl : dr;
            } else {
              const int c = intensity(i, y);
              const int el = std::abs(c - intensity(xl, y));
              const int er = std::abs(c - intensity(xr, y));
              v = el < er ? dl : (er < el ? dr : (dl < dr ? dl : dr));
            }
          } else {
            v = has_l ? d[xl] : d[xr];
          }
          d[i] = static_cast<std::uint16_t>(v);
        }
      }
    }
  };
  if (pool)
    pool->parallel_for(h, rows);
  else
    rows(0, h);
}

}  // namespace stereod
