#include "background/morphology.hpp"

#include <algorithm>

namespace stereod {
namespace {

// Max (dilate) or min (erode) over a square window, as a row pass then a column pass: a square is
// separable, so this equals the 2-D window over in-image pixels.
template <bool kMax>
void square_filter(const Gray8& in, int r, Gray8& out, Gray8& tmp) {
  const int w = in.width(), h = in.height();
  tmp.ensure_size(w, h);
  out.ensure_size(w, h);
  for (int y = 0; y < h; ++y) {
    for (int x = 0; x < w; ++x) {
      std::uint8_t v = in(x, y);
      for (int u = std::max(0, x - r); u <= std::min(w - 1, x + r); ++u) {
        v = kMax ? std::max(v, in(u, y)) : std::min(v, in(u, y));
      }
      tmp(x, y) = v;
    }
  }
  for (int y = 0; y < h; ++y) {
    for (int x = 0; x < w; ++x) {
      std::uint8_t v = tmp(x, y);
      for (int t = std::max(0, y - r); t <= std::min(h - 1, y + r); ++t) {
        v = kMax ? std::max(v, tmp(x, t)) : std::min(v, tmp(x, t));
      }
      out(x, y) = v;
    }
  }
}

}  // namespace

void close_mask(const Gray8& in, int radius, Gray8& out, Gray8& scratch) {
  if (radius <= 0) {
    out = in;
    return;
  }
  Gray8 dilated;
  square_filter<true>(in, radius, dilated, scratch);
  square_filter<false>(dilated, radius, out, scratch);
}

}  // namespace stereod
