#include "stereo/post_process.hpp"

#include "stereo/pixel_ops.hpp"
#include "thread_pool.hpp"

namespace stereod {

void median3x3(const Disparity16& in, Disparity16& out, ThreadPool* pool) {
  const int w = in.width(), h = in.height();
  out.ensure_size(w, h);
  auto rows = [&](int y0, int y1) {
    for (int y = y0; y < y1; ++y) {
      for (int x = 0; x < w; ++x) out(x, y) = median3x3_at(in.data(), w, h, x, y);
    }
  };
  for_rows(pool, h, rows);
}

void fill_holes(Disparity16& disparity, ImageView<const std::uint8_t> intensity,
                ImageView<const std::uint8_t> foreground, FillMode mode, int interpolate_max,
                ThreadPool* pool) {
  const int w = disparity.width(), h = disparity.height();
  const int max_step = interpolate_max * kSubpixelScale;
  const bool background_mode = mode == FillMode::kBackground;
  auto rows = [&](int y0, int y1) {
    for (int y = y0; y < y1; ++y) {
      fill_holes_row(disparity.row(y), w, background_mode ? nullptr : intensity.row(y),
                     foreground.empty() ? nullptr : foreground.row(y), background_mode, max_step);
    }
  };
  for_rows(pool, h, rows);
}

}  // namespace stereod
