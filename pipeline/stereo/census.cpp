#include "stereo/census.hpp"

#include <algorithm>
#include <cstring>
#include <vector>

#include "cpu_features.hpp"
#include "stereo/pixel_ops.hpp"
#include "thread_pool.hpp"

namespace stereod {
namespace {

// Census codes of rows [y0, y1), the same bits as census_at (pixel_ops.hpp). The code of a row is
// built as eight byte planes (byte j of every pixel's code side by side): each window neighbour
// shifts its comparison into one plane for all pixels of the row at once, a loop the compiler
// vectorises; then the planes are interleaved into the 64-bit codes. Rows are read with their edge
// pixels repeated hw times on each side, so no pixel needs a clamp.
[[gnu::always_inline]] inline void census_rows(ImageView<const std::uint8_t> img, int window_w,
                                               int window_h, int y0, int y1,
                                               Image<std::uint64_t>& codes) {
  const int w = img.width, h = img.height;
  const int hw = window_w / 2, hh = window_h / 2;
  const int bits = window_w * window_h - 1;
  const int planes = (bits + 7) / 8;
  const int padded_w = w + 2 * hw;
  thread_local std::vector<std::uint8_t> padded, plane;
  padded.resize(static_cast<std::size_t>(y1 - y0 + 2 * hh) * padded_w);
  plane.resize(static_cast<std::size_t>(std::max(planes, 1)) * w);
  auto padded_row = [&](int r) {  // x = 0 of image row r, r in [y0 - hh, y1 + hh)
    return padded.data() + static_cast<std::size_t>(r - y0 + hh) * padded_w + hw;
  };
  for (int r = y0 - hh; r < y1 + hh; ++r) {
    const std::uint8_t* src = img.row(clamp_int(r, 0, h - 1));
    std::uint8_t* dst = padded_row(r);
    std::memcpy(dst, src, static_cast<std::size_t>(w));
    std::fill(dst - hw, dst, src[0]);
    std::fill(dst + w, dst + w + hw, src[w - 1]);
  }
  for (int y = y0; y < y1; ++y) {
    const std::uint8_t* centre = padded_row(y);
    int k = 0;  // the k-th neighbour in window order lands at bit bits - 1 - k
    for (int v = -hh; v <= hh; ++v) {
      const std::uint8_t* row = padded_row(y + v);
      for (int u = -hw; u <= hw; ++u) {
        if (u == 0 && v == 0) continue;
        const int pos = bits - 1 - k++;
        std::uint8_t* p = plane.data() + static_cast<std::size_t>(pos / 8) * w;
        const std::uint8_t* n = row + u;
        // The first (highest) bit of a plane starts it; the others shift in below it.
        const bool first = pos == bits - 1 || pos % 8 == 7;
        const int keep = first ? 0 : 0xFF;
        for (int x = 0; x < w; ++x) {
          p[x] = static_cast<std::uint8_t>(((p[x] & keep) << 1) | (n[x] < centre[x] ? 1 : 0));
        }
      }
    }
    std::uint64_t* out = codes.row(y);
    for (int x = 0; x < w; ++x) out[x] = 0;
    for (int j = 0; j < planes; ++j) {
      const std::uint8_t* p = plane.data() + static_cast<std::size_t>(j) * w;
      for (int x = 0; x < w; ++x) out[x] |= static_cast<std::uint64_t>(p[x]) << (8 * j);
    }
  }
}

// The same rows compiled for the baseline and, on x86-64, for AVX2 (cpu_features.hpp).
void census_rows_baseline(ImageView<const std::uint8_t> img, int window_w, int window_h, int y0,
                          int y1, Image<std::uint64_t>& codes) {
  census_rows(img, window_w, window_h, y0, y1, codes);
}

#if STEREOD_X86_AVX2_PATHS
STEREOD_TARGET_AVX2 void census_rows_avx2(ImageView<const std::uint8_t> img, int window_w,
                                          int window_h, int y0, int y1,
                                          Image<std::uint64_t>& codes) {
  census_rows(img, window_w, window_h, y0, y1, codes);
}
#endif

}  // namespace

void census_transform(ImageView<const std::uint8_t> img, int window_w, int window_h,
                      Image<std::uint64_t>& codes, ThreadPool* pool) {
  codes.ensure_size(img.width, img.height);
  auto rows = census_rows_baseline;
#if STEREOD_X86_AVX2_PATHS
  if (wide_vectors()) rows = census_rows_avx2;
#endif
  for_rows(pool, img.height, [&](int y0, int y1) { rows(img, window_w, window_h, y0, y1, codes); });
}

}  // namespace stereod
