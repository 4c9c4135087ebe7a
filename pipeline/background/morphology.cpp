#include "background/morphology.hpp"

#include <algorithm>

namespace stereod {
namespace {

template <bool kMax>
inline std::uint8_t pick(std::uint8_t a, std::uint8_t b) {
  return kMax ? (a > b ? a : b) : (a < b ? a : b);
}

// Max (dilate) or min (erode) over a (2r+1)^2 square of in-image pixels, as a row pass then a
// column pass (a square is separable). Interior pixels take their whole window in one vector
// loop; the r pixels at each end of a row clip theirs.
template <bool kMax>
void square_filter(const Gray8& in, int r, Gray8& out, Gray8& tmp) {
  const int w = in.width(), h = in.height();
  tmp.ensure_size(w, h);
  out.ensure_size(w, h);
  for (int y = 0; y < h; ++y) {
    const std::uint8_t* __restrict src = in.row(y);
    std::uint8_t* __restrict dst = tmp.row(y);
    const int x0 = std::min(r, w), x1 = std::max(x0, w - r);
    for (int x = x0; x < x1; ++x) dst[x] = src[x];
    for (int u = 1; u <= r; ++u) {
      for (int x = x0; x < x1; ++x) dst[x] = pick<kMax>(dst[x], pick<kMax>(src[x - u], src[x + u]));
    }
    auto clipped = [&](int x) {
      std::uint8_t v = src[x];
      for (int u = std::max(0, x - r); u <= std::min(w - 1, x + r); ++u) v = pick<kMax>(v, src[u]);
      dst[x] = v;
    };
    for (int x = 0; x < x0; ++x) clipped(x);
    for (int x = x1; x < w; ++x) clipped(x);
  }
  for (int y = 0; y < h; ++y) {
    std::uint8_t* dst = out.row(y);
    std::copy(tmp.row(y), tmp.row(y) + w, dst);
    for (int t = std::max(0, y - r); t <= std::min(h - 1, y + r); ++t) {
      const std::uint8_t* src = tmp.row(t);
      for (int x = 0; x < w; ++x) dst[x] = pick<kMax>(dst[x], src[x]);
    }
  }
}

}  // namespace

void close_mask(const Gray8& in, int radius, Gray8& out, Gray8& scratch) {
  if (radius <= 0) {
    out = in;
    return;
  }
  // Dilate into out (through scratch), then erode out into itself (through scratch): no buffer
  // beyond the two given.
  square_filter<true>(in, radius, out, scratch);
  square_filter<false>(out, radius, out, scratch);
}

void dilate_mask(const Gray8& in, int radius, Gray8& out, Gray8& scratch) {
  if (radius <= 0) {
    out = in;
    return;
  }
  square_filter<true>(in, radius, out, scratch);
}

}  // namespace stereod
