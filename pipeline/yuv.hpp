// Camera frames in the YUV formats that USB and CSI cameras deliver (UYVY, NV12), and their one
// conversion to RGB: integer BT.601 (limited range, as GStreamer's videoconvert assumes for these
// formats by default). The per-pixel functions are STEREOD_HD, so the CPU engine (on the host)
// and the CUDA engine (in a kernel, after uploading the raw bytes: 2 bytes a pixel for UYVY, 1.5
// for NV12, instead of 3 for RGB) compute the very same pixels. A YUV frame is then, to both
// engines, exactly the color-only frame of its RGB: the background model sees that RGB and the
// matcher its luma_bt601.
#pragma once

#include <cstddef>
#include <cstdint>

#include "stereo/pixel_ops.hpp"

namespace stereod {

enum class YuvFormat : std::uint8_t {
  kUyvy,  // packed 4:2:2: U0 Y0 V0 Y1 for each two pixels of a row (GStreamer "UYVY")
  kNv12,  // planar 4:2:0: a Y plane, then one plane of U V pairs per two rows (GStreamer "NV12")
};

// A non-owning view of a YUV frame. UYVY: `data` rows of 2 * width bytes (`stride` apart);
// `chroma` unused. NV12: `data` the Y plane, `chroma` the interleaved U V plane of height / 2 rows
// (`chroma_stride` apart). Width is even (both formats), height too for NV12.
struct YuvView {
  YuvFormat format = YuvFormat::kUyvy;
  const std::uint8_t* data = nullptr;
  int width = 0;
  int height = 0;
  std::ptrdiff_t stride = 0;
  const std::uint8_t* chroma = nullptr;
  std::ptrdiff_t chroma_stride = 0;

  bool empty() const { return data == nullptr || width <= 0 || height <= 0; }
};

// Bytes of a frame with rows packed (what an upload of it moves).
inline std::size_t yuv_packed_bytes(YuvFormat format, int width, int height) {
  const std::size_t px = static_cast<std::size_t>(width) * static_cast<std::size_t>(height);
  return format == YuvFormat::kUyvy ? 2 * px : px + px / 2;
}

// "UYVY" / "NV12" (GStreamer's names).
inline const char* yuv_format_name(YuvFormat format) {
  return format == YuvFormat::kUyvy ? "UYVY" : "NV12";
}

// (v + 128) >> 8 clamped to [0, 255]; v may be negative.
STEREOD_HD std::uint8_t clamp_shift8(int v) {
  v += 128;
  if (v < 0) return 0;
  v >>= 8;
  return static_cast<std::uint8_t>(v > 255 ? 255 : v);
}

// BT.601 limited range (Y in [16, 235], U and V in [16, 240] around 128) to full-range RGB, with
// the coefficients scaled by 256: 1.164 -> 298, 1.596 -> 409, 0.391 -> 100, 0.813 -> 208,
// 2.018 -> 516.
STEREOD_HD void yuv_to_rgb_bt601(int y, int u, int v, std::uint8_t* rgb) {
  const int c = 298 * (y - 16);
  const int d = u - 128;
  const int e = v - 128;
  rgb[0] = clamp_shift8(c + 409 * e);
  rgb[1] = clamp_shift8(c - 100 * d - 208 * e);
  rgb[2] = clamp_shift8(c + 516 * d);
}

// The RGB of pixel (x, y) of a frame (chroma shared by each two pixels of a row, and for NV12
// by each two rows).
STEREOD_HD void yuv_pixel_rgb(const YuvView& f, int x, int y, std::uint8_t* rgb) {
  int luma, u, v;
  if (f.format == YuvFormat::kUyvy) {
    const std::uint8_t* pair = f.data + static_cast<std::ptrdiff_t>(y) * f.stride + 2 * (x & ~1);
    u = pair[0];
    luma = pair[1 + 2 * (x & 1)];
    v = pair[2];
  } else {
    luma = f.data[static_cast<std::ptrdiff_t>(y) * f.stride + x];
    const std::uint8_t* uv =
        f.chroma + static_cast<std::ptrdiff_t>(y >> 1) * f.chroma_stride + (x & ~1);
    u = uv[0];
    v = uv[1];
  }
  yuv_to_rgb_bt601(luma, u, v, rgb);
}

}  // namespace stereod
