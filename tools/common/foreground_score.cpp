#include "foreground_score.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include "stereo/pixel_ops.hpp"
#include "synthetic/synthetic_scene.hpp"

namespace stereod {

void right_visibility(const Image<float>& truth, Gray8& visible) {
  const int w = truth.width(), h = truth.height();
  visible.ensure_size(w, h);
  std::vector<float> nearest(static_cast<std::size_t>(w));
  for (int y = 0; y < h; ++y) {
    std::fill(nearest.begin(), nearest.end(), -1.0f);
    const float* d = truth.row(y);
    const auto landing = [&](int x) { return x - static_cast<int>(std::floor(d[x] + 0.5f)); };
    for (int x = 0; x < w; ++x) {
      if (!std::isfinite(d[x])) continue;
      const int xr = landing(x);
      if (xr >= 0 && xr < w) nearest[xr] = std::max(nearest[xr], d[x]);
    }
    std::uint8_t* v = visible.row(y);
    for (int x = 0; x < w; ++x) {
      const int xr = std::isfinite(d[x]) ? landing(x) : -1;
      v[x] = xr >= 0 && xr < w && d[x] >= nearest[xr];
    }
  }
}

void ForegroundScore::add(ImageView<const std::uint16_t> disparity,
                          ImageView<const std::uint8_t> foreground, const Image<float>& truth,
                          const Gray8& mask) {
  thread_local Gray8 visible_map;
  right_visibility(truth, visible_map);
  ++frames;
  for (int y = 0; y < mask.height(); ++y) {
    for (int x = 0; x < mask.width(); ++x) {
      const std::uint8_t m = mask(x, y);
      const bool truth_fg = m == kMaskForeground;
      const bool said_fg = foreground(x, y) != 0;
      tp += truth_fg && said_fg;
      fp += !truth_fg && said_fg;
      fn += truth_fg && !said_fg;
      if (m == kMaskShadow) {
        ++shadow;
        shadow_fg += said_fg;
      }
      if (!truth_fg || !std::isfinite(truth(x, y))) continue;
      ++fg;
      const bool shown = visible_map(x, y) != 0;
      visible += shown;
      const std::uint16_t d = disparity(x, y);
      if (d == kInvalidDisparity) {
        ++no_disparity;
        ++bad1;
        ++bad2;
        visible_bad1 += shown;
        visible_missing += shown;
        visible_outside_mask += shown && !said_fg;
        continue;
      }
      const double err = std::fabs(d / double(kSubpixelScale) - static_cast<double>(truth(x, y)));
      bad1 += err > 1.0;
      bad2 += err > 2.0;
      visible_bad1 += shown && err > 1.0;
    }
  }
  pixels += static_cast<long long>(mask.size());
}

}  // namespace stereod
