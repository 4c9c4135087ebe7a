#include "stereo/post_process.hpp"

#include <algorithm>
#include <vector>

#include "stereo/pixel_ops.hpp"
#include "thread_pool.hpp"

namespace stereod {

namespace {

// Compare-exchange for the 9-input network below.
template <typename T>
inline void order(T& a, T& b) {
  const T lo = a < b ? a : b;
  const T hi = a < b ? b : a;
  a = lo;
  b = hi;
}

// median3x3_at (pixel_ops.hpp) for rows [y0, y1), all pixels of a row at once: the nine values of
// each neighbourhood, with missing ones (invalid, or outside the image) as kInvalidDisparity, are
// sorted by a 25-comparator network, so the missing ones come last; the lower median of the n
// present ones is then the sorted value at (n - 1) / 2. Branch-free, so the row loop vectorises.
void median_rows(const Disparity16& in, int y0, int y1, Disparity16& out) {
  const int w = in.width(), h = in.height();
  const int padded_w = w + 2;
  thread_local std::vector<std::uint16_t> padded;
  padded.resize(static_cast<std::size_t>(y1 - y0 + 2) * padded_w);
  auto padded_row = [&](int r) {  // x = 0 of row r, r in [y0 - 1, y1]
    return padded.data() + static_cast<std::size_t>(r - y0 + 1) * padded_w + 1;
  };
  for (int r = y0 - 1; r <= y1; ++r) {
    std::uint16_t* dst = padded_row(r);
    dst[-1] = dst[w] = kInvalidDisparity;
    if (r < 0 || r >= h) {
      std::fill(dst, dst + w, kInvalidDisparity);
    } else {
      std::copy(in.row(r), in.row(r) + w, dst);
    }
  }
  for (int y = y0; y < y1; ++y) {
    const std::uint16_t* a = padded_row(y - 1);
    const std::uint16_t* b = padded_row(y);
    const std::uint16_t* c = padded_row(y + 1);
    std::uint16_t* o = out.row(y);
    for (int x = 0; x < w; ++x) {
      std::uint16_t v0 = a[x - 1], v1 = a[x], v2 = a[x + 1];
      std::uint16_t v3 = b[x - 1], v4 = b[x], v5 = b[x + 1];
      std::uint16_t v6 = c[x - 1], v7 = c[x], v8 = c[x + 1];
      const std::uint16_t centre = v4;
      const int n =
          (v0 != kInvalidDisparity) + (v1 != kInvalidDisparity) + (v2 != kInvalidDisparity) +
          (v3 != kInvalidDisparity) + (v4 != kInvalidDisparity) + (v5 != kInvalidDisparity) +
          (v6 != kInvalidDisparity) + (v7 != kInvalidDisparity) + (v8 != kInvalidDisparity);
      order(v0, v1), order(v3, v4), order(v6, v7), order(v1, v2), order(v4, v5);
      order(v7, v8), order(v0, v1), order(v3, v4), order(v6, v7), order(v0, v3);
      order(v3, v6), order(v0, v3), order(v1, v4), order(v4, v7), order(v1, v4);
      order(v2, v5), order(v5, v8), order(v2, v5), order(v1, v3), order(v5, v7);
      order(v2, v6), order(v4, v6), order(v2, v4), order(v2, v3), order(v5, v6);
      const int k = (n - 1) / 2;  // 0..4 when the centre is valid
      std::uint16_t m = v0;
      m = k == 1 ? v1 : m;
      m = k == 2 ? v2 : m;
      m = k == 3 ? v3 : m;
      m = k == 4 ? v4 : m;
      o[x] = centre == kInvalidDisparity ? kInvalidDisparity : m;
    }
  }
}

}  // namespace

void median3x3(const Disparity16& in, Disparity16& out, ThreadPool* pool) {
  out.ensure_size(in.width(), in.height());
  for_rows(pool, in.height(), [&](int y0, int y1) { median_rows(in, y0, y1, out); });
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
