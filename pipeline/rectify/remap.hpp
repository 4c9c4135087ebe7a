// Rectification applied per frame: a bilinear remap through a fixed-point map, in plain integer
// arithmetic so that the CPU engine and the CUDA engine (which includes this header and calls
// remap_bilinear_at from its kernel) agree bit for bit.
//
// Definition. For each destination pixel the map holds the source position (sx, sy) in units of
// 1/256 pixel (int32, kRemapFracBits = 8 fractional bits; (0, 0) is the centre of the top-left
// source pixel). With x0 = floor(sx / 256), fx = sx - 256 x0 (0..255), and likewise y0, fy:
//
//   v = ( (256-fx)(256-fy) p(x0,y0) + fx(256-fy) p(x0+1,y0)
//       + (256-fx) fy     p(x0,y0+1) + fx fy     p(x0+1,y0+1) + 32768 ) >> 16
//
// where p(x, y) is the source pixel, or 0 for a tap outside the source (x < 0, x >= width, ...).
// The weights sum to 65536, so v is the bilinear interpolation rounded half up, and always in
// 0..255. A destination pixel whose source lies outside the image is 0 (black); one within half
// a pixel of the edge blends towards 0, as OpenCV's remap with BORDER_CONSTANT does.
//
// Map coordinates are clamped to [-2, size + 1] pixels when a map is made (quantize_map_coord),
// which keeps every sum in int32 and lands all four taps outside the image for any source
// position beyond the border.
#pragma once

#include <cstdint>
#include <vector>

#include "frame.hpp"
#include "image.hpp"
#include "stereo/pixel_ops.hpp"

namespace stereod {

constexpr int kRemapFracBits = 8;
constexpr int kRemapOne = 1 << kRemapFracBits;  // 1 pixel
constexpr int kRemapClampPixels = 2;            // coordinates are kept within [-2, size + 1]

// One camera's map: destination size = source size (rectification keeps the image size).
struct RectificationMap {
  int width = 0;
  int height = 0;
  std::vector<std::int32_t> xy;  // per destination pixel, row-major: sx, sy (1/256 pixel)

  bool empty() const { return xy.empty(); }
  void resize(int w, int h) {
    width = w;
    height = h;
    xy.assign(2 * static_cast<std::size_t>(w) * static_cast<std::size_t>(h), 0);
  }
  std::int32_t* at(int x, int y) {
    return xy.data() + 2 * (static_cast<std::size_t>(y) * width + x);
  }
  const std::int32_t* at(int x, int y) const {
    return xy.data() + 2 * (static_cast<std::size_t>(y) * width + x);
  }
};

// A source coordinate in pixels (along an axis of `size` pixels) as the map stores it: clamped
// to [-2, size + 1], then rounded to the nearest 1/256 (NaN becomes -2: outside).
std::int32_t quantize_map_coord(double pixels, int size);

// The identity map (for cameras that are already rectified, and for tests).
RectificationMap identity_map(int width, int height);

// One tap: the source pixel, or 0 outside the image. `step`: bytes from one pixel to the next
// (1 for gray; 3 for one channel of interleaved RGB, with src pointing at that channel).
STEREOD_HD int remap_tap(const std::uint8_t* src, int width, int height, int stride, int x, int y,
                         int step = 1) {
  return (x >= 0 && x < width && y >= 0 && y < height) ? src[y * stride + x * step] : 0;
}

// The destination value for source position (sx, sy) in 1/256 pixel (see the definition above),
// with the taps read through `tap(x, y)` (0 outside the image).
template <typename Tap>
STEREOD_HD std::uint8_t remap_bilinear_sampled(const Tap& tap, std::int32_t sx, std::int32_t sy) {
  // Shift non-negative values only: the bias moves the clamped range [-2, size + 1] above 0.
  const int bias = kRemapClampPixels * kRemapOne;
  const int bx = sx + bias;
  const int by = sy + bias;
  const int x0 = (bx >> kRemapFracBits) - kRemapClampPixels;
  const int y0 = (by >> kRemapFracBits) - kRemapClampPixels;
  const int fx = bx & (kRemapOne - 1);
  const int fy = by & (kRemapOne - 1);
  const int top = tap(x0, y0) * (kRemapOne - fx) + tap(x0 + 1, y0) * fx;
  const int bottom = tap(x0, y0 + 1) * (kRemapOne - fx) + tap(x0 + 1, y0 + 1) * fx;
  const int sum = top * (kRemapOne - fy) + bottom * fy;  // <= 255 * 65536
  return static_cast<std::uint8_t>((sum + (1 << (2 * kRemapFracBits - 1))) >> (2 * kRemapFracBits));
}

// The same for the pixels of one plane (`step` as in remap_tap).
STEREOD_HD std::uint8_t remap_bilinear_at(const std::uint8_t* src, int width, int height,
                                          int stride, std::int32_t sx, std::int32_t sy,
                                          int step = 1) {
  return remap_bilinear_sampled(
      [&](int x, int y) { return remap_tap(src, width, height, stride, x, y, step); }, sx, sy);
}

// dst = src remapped through `map` (dst takes the map's size). Throws std::invalid_argument when
// src does not have the map's size.
void remap(ImageView<const std::uint8_t> src, const RectificationMap& map, Gray8& dst);
void remap(ImageView<const std::uint8_t> src, const RectificationMap& map,
           ImageView<std::uint8_t> dst);
// Interleaved RGB, each channel through the same map.
void remap_rgb(const RgbView& src, const RectificationMap& map, RgbImage& dst);

}  // namespace stereod
