#include "transpose.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "thread_pool.hpp"

namespace stereod {
namespace {

// The transpositions read a column of the source for each destination row; kStrip source rows
// at a time, their cache lines stay in L1 while the destination rows of a part are written.
constexpr int kStrip = 128;

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
// Gray in blocks of 8x8 pixels, each row of a block one 64-bit word (byte j = column j on a
// little-endian machine): three rounds of swapping halves, quarters and eighths of the words
// transpose the block in registers, 8 loads and 8 stores of 8 bytes where the byte loop makes 64 of
// each. Blocks go in column strips of 64 so that the 64 destination rows being filled stay in L1.
void transpose_block(const std::uint8_t* src, std::ptrdiff_t stride, int x, int y, int h, bool flip,
                     ImageView<std::uint8_t> dst) {
  std::uint64_t r[8];
  for (int i = 0; i < 8; ++i) std::memcpy(&r[i], src + i * stride, 8);
  auto swap = [&](int a, int b, int shift, std::uint64_t mask) {
    const std::uint64_t t = ((r[a] >> shift) ^ r[b]) & mask;
    r[a] ^= t << shift;
    r[b] ^= t;
  };
  for (int i = 0; i < 4; ++i) swap(i, i + 4, 32, 0x00000000FFFFFFFFull);
  for (int i : {0, 1, 4, 5}) swap(i, i + 2, 16, 0x0000FFFF0000FFFFull);
  for (int i : {0, 2, 4, 6}) swap(i, i + 1, 8, 0x00FF00FF00FF00FFull);
  // Word k now holds the source's column x + k, rows y .. y + 7: the destination's row x + k.
  for (int k = 0; k < 8; ++k) {
    if (flip) {
      const std::uint64_t v = __builtin_bswap64(r[k]);
      std::memcpy(dst.row(x + k) + (h - 8 - y), &v, 8);
    } else {
      std::memcpy(dst.row(x + k) + y, &r[k], 8);
    }
  }
}

#endif

// The byte loop for any pixel size.
template <int C>
void transpose_any(const std::uint8_t* src, std::ptrdiff_t src_stride, int w, int h, bool flip,
                   ImageView<std::uint8_t> dst, ThreadPool* pool) {
  for_rows(pool, w, [&](int x_begin, int x_end) {
    for (int y0 = 0; y0 < h; y0 += kStrip) {
      const int y1 = std::min(h, y0 + kStrip);
      for (int x = x_begin; x < x_end; ++x) {
        std::uint8_t* out = dst.row(x);
        const std::uint8_t* in = src + static_cast<std::ptrdiff_t>(C) * x;
        for (int y = y0; y < y1; ++y) {
          const std::uint8_t* p = in + y * src_stride;
          std::uint8_t* q = out + C * (flip ? h - 1 - y : y);
          for (int c = 0; c < C; ++c) q[c] = p[c];
        }
      }
    }
  });
}

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
// Gray by blocks (transpose_block), the rest byte by byte.
void transpose_gray(const std::uint8_t* src, std::ptrdiff_t src_stride, int w, int h, bool flip,
                    ImageView<std::uint8_t> dst, ThreadPool* pool) {
  constexpr int kStripColumns = 64;
  for_rows(pool, w, [&](int x_begin, int x_end) {
    for (int x0 = x_begin; x0 < x_end; x0 += kStripColumns) {
      const int x1 = std::min(x_end, x0 + kStripColumns);
      for (int y = 0; y < h; y += 8) {
        const int rows = std::min(8, h - y);
        int x = x0;
        if (rows == 8) {
          for (; x + 8 <= x1; x += 8)
            transpose_block(src + y * src_stride + x, src_stride, x, y, h, flip, dst);
        }
        for (; x < x1; ++x) {  // the strip's last columns, and the last rows, pixel by pixel
          std::uint8_t* out = dst.row(x);
          for (int j = y; j < y + rows; ++j) out[flip ? h - 1 - j : j] = src[j * src_stride + x];
        }
      }
    }
  });
}
#else
void transpose_gray(const std::uint8_t* src, std::ptrdiff_t src_stride, int w, int h, bool flip,
                    ImageView<std::uint8_t> dst, ThreadPool* pool) {
  transpose_any<1>(src, src_stride, w, h, flip, dst, pool);
}
#endif

}  // namespace

void transpose_pixels(const std::uint8_t* src, std::ptrdiff_t src_stride, int w, int h,
                      int bytes_per_pixel, bool flip, ImageView<std::uint8_t> dst,
                      ThreadPool* pool) {
  if (bytes_per_pixel == 1) {
    transpose_gray(src, src_stride, w, h, flip, dst, pool);
  } else {
    transpose_any<3>(src, src_stride, w, h, flip, dst, pool);
  }
}

}  // namespace stereod
