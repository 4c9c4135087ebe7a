#include "trinocular/fusion.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#if defined(__SSE4_2__)
#include <nmmintrin.h>
#endif

#include "stereo/params.hpp"
#include "stereo/pixel_ops.hpp"
#include "thread_pool.hpp"
#include "transpose.hpp"

namespace stereod {
namespace {

std::string size_text(int w, int h) {
  return std::to_string(w) + "x" + std::to_string(h);
}

template <typename T>
void check_size(const ImageView<T>& img, int w, int h, const char* name) {
  if (img.width != w || img.height != h) {
    throw ParameterError(name, std::string(name) + " is " + size_text(img.width, img.height) +
                                   ", expected " + size_text(w, h));
  }
}

// The fusion's tiles: kTileRows reference rows by kTileColumns columns. A tile reads kTileColumns
// rows of the vertical pair's maps (its row v = x holds the reference's column x), kTileRows
// values each, and writes runs of kTileColumns along the reference's rows: long enough for the
// hardware to stream them (32 columns measured half as fast as 128), short enough that the
// vertical rows' cache lines are still there for the tile's next reference row.
constexpr int kTileRows = 32, kTileColumns = 128;

// scale_vertical_disparity for every vertical disparity a frame can hold below the range's end,
// looked up instead of computed per pixel (the floating-point rounding is the slow part); above
// it, the function itself.
class ScaleTable {
 public:
  ScaleTable(double scale, int max_q4) : scale_(scale), max_q4_(max_q4) {
    // Scaled values above max_q4 are dropped, so larger inputs rarely matter: the table stops
    // just past where the scaled value passes max_q4 (or at the largest disparity).
    const double end = scale > 0 ? (max_q4 + 2.0) / scale + 2.0 : 0.0;
    const int n = end < 0xFFFF ? static_cast<int>(end) : 0xFFFF;
    table_.resize(static_cast<std::size_t>(n));
    for (int q = 0; q < n; ++q) {
      table_[static_cast<std::size_t>(q)] =
          scale_vertical_disparity(static_cast<std::uint16_t>(q), scale, max_q4);
    }
  }
  struct View {
    const std::uint16_t* table;
    int size;
    double scale;
    int max_q4;
    std::uint16_t operator()(std::uint16_t q4) const {
      return q4 < size ? table[q4] : scale_vertical_disparity(q4, scale, max_q4);
    }
  };
  View view() const { return {table_.data(), static_cast<int>(table_.size()), scale_, max_q4_}; }

 private:
  double scale_;
  int max_q4_;
  std::vector<std::uint16_t> table_;
};

// The rule over n pixels of one reference row, the vertical pair's values already gathered and
// scaled (dv) next to the horizontal pair's (dh, rh): fused_direction and fused_disparity, 8
// pixels at a time where SSE4.2 is there (the default x86-64 build), one at a time otherwise.
void fuse_run(const std::uint16_t* dh, const std::uint32_t* rh, const std::uint16_t* dv,
              const std::uint32_t* rv, const std::uint8_t* fg, int n, std::uint32_t ratio_q8,
              std::uint16_t* fused, std::uint8_t* direction) {
  int i = 0;
#if defined(__SSE4_2__)
  const __m128i ones = _mm_set1_epi16(-1);
  const __m128i ratio = _mm_set1_epi32(static_cast<int>(ratio_q8));
  // Four pixels' "rv * 256 < ratio * rh" in 64 bits (both sides stay below 2^63, so the signed
  // compare is exact), as four 32-bit masks.
  auto sharper4 = [&](const std::uint32_t* v, const std::uint32_t* h) {
    const __m128i rv4 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(v));
    const __m128i rh4 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(h));
    const __m128i low = _mm_set_epi32(0, -1, 0, -1);
    const __m128i even =
        _mm_cmpgt_epi64(_mm_mul_epu32(rh4, ratio), _mm_slli_epi64(_mm_and_si128(rv4, low), 8));
    const __m128i odd = _mm_cmpgt_epi64(_mm_mul_epu32(_mm_srli_epi64(rh4, 32), ratio),
                                        _mm_slli_epi64(_mm_srli_epi64(rv4, 32), 8));
    return _mm_blend_epi16(even, odd, 0xCC);  // pixels 1 and 3 from the odd products
  };
  for (; i + 8 <= n; i += 8) {
    const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(dh + i));
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(dv + i));
    const __m128i h_ok = _mm_xor_si128(_mm_cmpeq_epi16(h, ones), ones);
    const __m128i v_ok = _mm_xor_si128(_mm_cmpeq_epi16(v, ones), ones);
    const __m128i sharper =
        _mm_packs_epi32(sharper4(rv + i, rh + i), sharper4(rv + i + 4, rh + i + 4));
    const __m128i f = _mm_cvtepu8_epi16(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(fg + i)));
    const __m128i fg_ok = _mm_xor_si128(_mm_cmpeq_epi16(f, _mm_setzero_si128()), ones);
    const __m128i vertical =
        _mm_and_si128(_mm_and_si128(v_ok, fg_ok), _mm_or_si128(_mm_xor_si128(h_ok, ones), sharper));
    const __m128i horizontal = _mm_andnot_si128(vertical, _mm_and_si128(h_ok, fg_ok));
    const __m128i which = _mm_or_si128(_mm_and_si128(vertical, _mm_set1_epi16(kFusedVertical)),
                                       _mm_and_si128(horizontal, _mm_set1_epi16(kFusedHorizontal)));
    _mm_storel_epi64(reinterpret_cast<__m128i*>(direction + i), _mm_packus_epi16(which, which));
    const __m128i none = _mm_xor_si128(_mm_or_si128(vertical, horizontal), ones);
    const __m128i d =
        _mm_or_si128(_mm_or_si128(_mm_and_si128(vertical, v), _mm_and_si128(horizontal, h)), none);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(fused + i), d);
  }
#endif
  for (; i < n; ++i) {
    // The reference camera's background model decides: background carries no disparity.
    const std::uint8_t which =
        fused_direction(dh[i], dv[i], rh[i], rv[i], ratio_q8) & (0u - unsigned{fg[i] != 0});
    direction[i] = which;
    fused[i] = fused_disparity(which, dh[i], dv[i]);
  }
}

}  // namespace

void to_vertical_frame(ImageView<const std::uint8_t> src, const VerticalLayout& l, Gray8& dst,
                       ThreadPool* pool) {
  dst.ensure_size(src.height, src.width);
  to_vertical_frame(src, l, dst.view(), pool);
}

void to_vertical_frame(const RgbView& src, const VerticalLayout& l, RgbImage& dst,
                       ThreadPool* pool) {
  if (dst.width != src.height || dst.height != src.width) dst.resize(src.height, src.width);
  to_vertical_frame(src, l, ImageView<std::uint8_t>{dst.pixels.data(), 3 * dst.width, dst.height},
                    pool);
}

void to_vertical_frame(ImageView<const std::uint8_t> src, const VerticalLayout& l,
                       ImageView<std::uint8_t> dst, ThreadPool* pool) {
  check_size(dst, src.height, src.width, "vertical frame");
  transpose_pixels(src.data, src.stride, src.width, src.height, 1, l.flip, dst, pool);
}

void to_vertical_frame(const RgbView& src, const VerticalLayout& l,
                       ImageView<std::uint8_t> dst_bytes, ThreadPool* pool) {
  check_size(dst_bytes, 3 * src.height, src.width, "vertical frame (RGB bytes)");
  transpose_pixels(src.data, src.stride, src.width, src.height, 3, l.flip, dst_bytes, pool);
}

int vertical_max_disparity(int horizontal_max_disparity, double scale) {
  if (!(scale > 0)) return horizontal_max_disparity;
  const double d = std::ceil(horizontal_max_disparity / scale - 1e-9);
  return d < 1 ? 1 : d > 1e6 ? 1000000 : static_cast<int>(d);
}

std::uint32_t cost_ratio_q8(double cost_ratio) {
  const double q = std::floor(cost_ratio * 256.0 + 0.5);
  return q < 0 ? 0u : q > 1e6 ? 1000000u : static_cast<std::uint32_t>(q);
}

std::uint16_t scale_vertical_disparity(std::uint16_t q4, double scale, int max_q4) {
  if (q4 == kInvalidDisparity) return kInvalidDisparity;
  const double v = std::floor(q4 * scale + 0.5);
  if (!(v >= 0) || v > max_q4) return kInvalidDisparity;
  return static_cast<std::uint16_t>(v);
}

void fuse_trinocular(const FusionInput& in, const FusionParams& p, FusionOutput& out,
                     ThreadPool* pool) {
  const int w = in.layout.width, h = in.layout.height;
  check_size(in.horizontal, w, h, "horizontal disparity");
  check_size(in.horizontal_ratio, w, h, "horizontal cost ratio");
  check_size(in.vertical, h, w, "vertical disparity");
  check_size(in.vertical_ratio, h, w, "vertical cost ratio");
  const bool masked = !in.foreground.empty();
  if (masked) check_size(in.foreground, w, h, "foreground mask");
  out.fused.ensure_size(w, h);
  out.direction.ensure_size(w, h);
  out.vertical.ensure_size(w, h);
  const std::uint32_t ratio = cost_ratio_q8(p.cost_ratio);
  const int max_q4 = p.max_disparity_q4 < 0xFFFE ? p.max_disparity_q4 : 0xFFFE;
  const ScaleTable scaled(p.scale, max_q4);
  // Without a mask every pixel is foreground: one row of 255 stands for every row.
  const std::vector<std::uint8_t> all_foreground(masked ? 0 : static_cast<std::size_t>(w), 255);
  const ImageView<const std::uint8_t> mask =
      masked ? in.foreground : ImageView<const std::uint8_t>{all_foreground.data(), w, h, 0};
  for_rows(pool, h, [&](int y_begin, int y_end) {
    // Locals: the byte stores below may alias anything the loop reads through a reference, and
    // the compiler would fetch every pointer and stride again for each pixel.
    const ImageView<const std::uint16_t> vd = in.vertical, hd_all = in.horizontal;
    const ImageView<const std::uint32_t> vr = in.vertical_ratio, hr_all = in.horizontal_ratio;
    const ImageView<const std::uint8_t> fg_all = mask;
    const VerticalLayout layout = in.layout;
    const ScaleTable::View table = scaled.view();
    const std::uint32_t ratio_q8 = ratio;
    std::uint32_t ratios[128];
    for (int y0 = y_begin; y0 < y_end; y0 += kTileRows) {
      const int y1 = std::min(y_end, y0 + kTileRows);
      for (int x0 = 0; x0 < w; x0 += 128) {
        const int x1 = std::min(w, x0 + 128);
        for (int y = y0; y < y1; ++y) {
          const int u = layout.u(y);
          const std::uint16_t* hd = hd_all.row(y);
          const std::uint32_t* hr = hr_all.row(y);
          const std::uint8_t* fg = fg_all.row(y);
          std::uint16_t* fused = out.fused.row(y);
          std::uint8_t* direction = out.direction.row(y);
          std::uint16_t* vertical = out.vertical.row(y);
          // The vertical pair's column of this tile, scaled into the vertical map's row (an
          // output anyway) and its cost ratios into a row of their own; then the rule.
          for (int x = x0; x < x1; ++x) {
            vertical[x] = table(vd.row(x)[u]);
            ratios[x - x0] = vr.row(x)[u];
          }
          fuse_run(hd + x0, hr + x0, vertical + x0, ratios, fg + x0, x1 - x0, ratio_q8, fused + x0,
                   direction + x0);
        }
      }
    }
  });
}

}  // namespace stereod
