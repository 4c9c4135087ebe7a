#include "stereo/mean_removal.hpp"

#include <cstring>
#include <stdexcept>
#include <vector>

#include "stereo/pixel_ops.hpp"
#include "thread_pool.hpp"

namespace stereod {
namespace {

// mean_removed_at (pixel_ops.hpp) for rows [y0, y1): the window sum as a column pass over rows
// whose edge pixels are repeated kR times on each side, then a row pass; the division by the
// compile-time window size becomes a multiply. All in 16 bits (49 * 255 fits), so the loops
// vectorise.
template <int kR>
void remove_mean_rows(ImageView<const std::uint8_t> img, int y0, int y1, Gray8& out) {
  constexpr int kSide = 2 * kR + 1;
  constexpr int kN = kSide * kSide;
  const int w = img.width, h = img.height;
  const int padded_w = w + 2 * kR;
  thread_local std::vector<std::uint8_t> padded;
  thread_local std::vector<std::uint16_t> column;
  padded.resize(static_cast<std::size_t>(kSide) * padded_w);
  column.resize(static_cast<std::size_t>(padded_w));
  for (int y = y0; y < y1; ++y) {
    const std::uint8_t* rows[kSide];
    for (int v = 0; v < kSide; ++v) {
      const std::uint8_t* src = img.row(clamp_int(y - kR + v, 0, h - 1));
      std::uint8_t* dst = padded.data() + static_cast<std::size_t>(v) * padded_w;
      std::memset(dst, src[0], kR);
      std::memcpy(dst + kR, src, static_cast<std::size_t>(w));
      std::memset(dst + kR + w, src[w - 1], kR);
      rows[v] = dst;
    }
    std::uint16_t* col = column.data();
    for (int x = 0; x < padded_w; ++x) {
      std::uint16_t sum = 0;
      for (int v = 0; v < kSide; ++v) sum = static_cast<std::uint16_t>(sum + rows[v][x]);
      col[x] = sum;
    }
    const std::uint8_t* centre = rows[kR] + kR;
    std::uint8_t* o = out.row(y);
    for (int x = 0; x < w; ++x) {
      std::uint16_t sum = 0;
      for (int u = 0; u < kSide; ++u) sum = static_cast<std::uint16_t>(sum + col[x + u]);
      const int v = centre[x] - sum / kN + 128;
      o[x] = static_cast<std::uint8_t>(v < 0 ? 0 : (v > 255 ? 255 : v));
    }
  }
}

}  // namespace

void remove_local_mean(ImageView<const std::uint8_t> img, int radius, Gray8& out,
                       ThreadPool* pool) {
  out.ensure_size(img.width, img.height);
  using Rows = void (*)(ImageView<const std::uint8_t>, int, int, Gray8&);
  constexpr Rows kRows[4] = {remove_mean_rows<0>, remove_mean_rows<1>, remove_mean_rows<2>,
                             remove_mean_rows<3>};
  if (radius < 0 || radius > 3) throw std::invalid_argument("mean removal radius must be 0 to 3");
  const Rows rows = kRows[radius];
  for_rows(pool, img.height, [&](int y0, int y1) { rows(img, y0, y1, out); });
}

}  // namespace stereod
