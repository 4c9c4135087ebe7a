// Frames in the YUV formats cameras deliver, made from RGB: an RGB image encoded (BT.601 limited
// range, in floating point, independently of yuv.hpp's integer decoder, so the tests hold one
// against the other) into packed UYVY or NV12. Chroma is the mean of the pixels that share it.
// The tests' camera frames, and stereod-bench's (`speed --yuv`).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "frame.hpp"

namespace stereod {

struct YuvFrame {
  YuvFormat format = YuvFormat::kUyvy;
  int width = 0;
  int height = 0;
  std::vector<std::uint8_t> bytes;
  YuvView view() const { return packed_yuv(format, bytes.data(), width, height); }
};

inline std::uint8_t yuv_byte(double v) {
  return static_cast<std::uint8_t>(std::clamp(std::lround(v), 0L, 255L));
}

inline YuvFrame encode_yuv(const RgbImage& rgb, YuvFormat format) {
  YuvFrame out;
  out.format = format;
  out.width = rgb.width;
  out.height = rgb.height;
  out.bytes.assign(yuv_packed_bytes(format, rgb.width, rgb.height), 0);
  const int w = rgb.width, h = rgb.height;
  auto y_of = [&](int x, int y) {
    const std::uint8_t* p = rgb.row(y) + 3 * x;
    return 16 + (65.481 * p[0] + 128.553 * p[1] + 24.966 * p[2]) / 255.0;
  };
  auto uv_of = [&](int x0, int y0, int rows, double* u, double* v) {
    double su = 0, sv = 0;
    int n = 0;
    for (int y = y0; y < y0 + rows; ++y) {
      for (int x = x0; x < x0 + 2; ++x) {
        const std::uint8_t* p = rgb.row(y) + 3 * x;
        su += 128 + (-37.797 * p[0] - 74.203 * p[1] + 112.0 * p[2]) / 255.0;
        sv += 128 + (112.0 * p[0] - 93.786 * p[1] - 18.214 * p[2]) / 255.0;
        ++n;
      }
    }
    *u = su / n;
    *v = sv / n;
  };
  std::uint8_t* b = out.bytes.data();
  if (format == YuvFormat::kUyvy) {
    for (int y = 0; y < h; ++y) {
      for (int x = 0; x < w; x += 2) {
        double u, v;
        uv_of(x, y, 1, &u, &v);
        std::uint8_t* q = b + static_cast<std::size_t>(y) * 2 * w + 2 * x;
        q[0] = yuv_byte(u);
        q[1] = yuv_byte(y_of(x, y));
        q[2] = yuv_byte(v);
        q[3] = yuv_byte(y_of(x + 1, y));
      }
    }
  } else {
    for (int y = 0; y < h; ++y) {
      for (int x = 0; x < w; ++x) b[static_cast<std::size_t>(y) * w + x] = yuv_byte(y_of(x, y));
    }
    std::uint8_t* c = b + static_cast<std::size_t>(w) * h;
    for (int y = 0; y < h; y += 2) {
      for (int x = 0; x < w; x += 2) {
        double u, v;
        uv_of(x, y, 2, &u, &v);
        c[static_cast<std::size_t>(y / 2) * w + x] = yuv_byte(u);
        c[static_cast<std::size_t>(y / 2) * w + x + 1] = yuv_byte(v);
      }
    }
  }
  return out;
}

}  // namespace stereod
