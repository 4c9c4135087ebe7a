#include "frame.hpp"

#include <algorithm>
#include <atomic>
#include <cstring>

namespace stereod {

void copy_into(const RgbView& src, RgbImage& dst) {
  if (dst.width != src.width || dst.height != src.height) dst.resize(src.width, src.height);
  for (int y = 0; y < src.height; ++y) {
    std::copy(src.row(y), src.row(y) + 3 * src.width, dst.row(y));
  }
}

void rgb_to_gray(const RgbImage& rgb, Gray8& gray) {
  rgb_to_gray(view_of(rgb), gray);
}

void rgb_to_gray(const RgbView& rgb, Gray8& gray) {
  gray.ensure_size(rgb.width, rgb.height);
  rgb_to_gray(rgb, gray.data(), gray.width());
}

void rgb_to_gray(const RgbView& rgb, std::uint8_t* dst, std::ptrdiff_t dst_stride) {
  for (int y = 0; y < rgb.height; ++y) {
    const std::uint8_t* s = rgb.row(y);
    std::uint8_t* d = dst + y * dst_stride;
    for (int x = 0; x < rgb.width; ++x) d[x] = luma(s[3 * x], s[3 * x + 1], s[3 * x + 2]);
  }
}

void yuv_to_rgb(const YuvView& src, std::uint8_t* dst, std::ptrdiff_t dst_stride) {
  for (int y = 0; y < src.height; ++y) {
    std::uint8_t* d = dst + y * dst_stride;
    for (int x = 0; x < src.width; ++x) yuv_pixel_rgb(src, x, y, d + 3 * x);
  }
}

void yuv_to_rgb(const YuvView& src, RgbImage& dst) {
  if (dst.width != src.width || dst.height != src.height) dst.resize(src.width, src.height);
  yuv_to_rgb(src, dst.pixels.data(), static_cast<std::ptrdiff_t>(src.width) * 3);
}

YuvView packed_yuv(YuvFormat format, const std::uint8_t* data, int width, int height) {
  YuvView v;
  v.format = format;
  v.data = data;
  v.width = width;
  v.height = height;
  if (format == YuvFormat::kUyvy) {
    v.stride = 2 * static_cast<std::ptrdiff_t>(width);
  } else {
    v.stride = width;
    v.chroma = data + static_cast<std::size_t>(width) * static_cast<std::size_t>(height);
    v.chroma_stride = width;
  }
  return v;
}

void copy_packed(const YuvView& src, std::uint8_t* dst) {
  const YuvView d = packed_yuv(src.format, dst, src.width, src.height);
  auto plane = [](const std::uint8_t* s, std::ptrdiff_t ss, std::uint8_t* t, std::ptrdiff_t ts,
                  int rows) {
    for (int y = 0; y < rows; ++y)
      std::memcpy(t + y * ts, s + y * ss, static_cast<std::size_t>(ts));
  };
  std::uint8_t* luma = dst;
  plane(src.data, src.stride, luma, d.stride, src.height);
  if (src.format == YuvFormat::kNv12) {
    plane(src.chroma, src.chroma_stride, luma + (d.chroma - d.data), d.chroma_stride,
          src.height / 2);
  }
}

std::shared_ptr<std::uint8_t> allocate_pixels(std::size_t bytes) {
  return std::shared_ptr<std::uint8_t>(new std::uint8_t[bytes],
                                       std::default_delete<std::uint8_t[]>());
}

std::uint8_t* CameraFrame::reserve(std::size_t bytes, const PixelAllocator& allocate) {
  // A copy of this frame made earlier shares the storage: it is never written over.
  const bool shared = storage && storage.use_count() > 1;
  if (shared) std::atomic_thread_fence(std::memory_order_acquire);
  if (!storage || storage_bytes < bytes || shared) {
    storage.reset();  // the old buffer goes back before a bigger one is taken
    storage = allocate ? allocate(bytes) : allocate_pixels(bytes);
    storage_bytes = bytes;
  }
  return storage.get();
}

Gray8 gray_of(const CameraFrame& frame) {
  Gray8 out;
  if (!frame.gray.empty()) {
    copy_into(frame.gray, out);
    return out;
  }
  RgbImage rgb;
  if (!frame.yuv.empty()) {
    yuv_to_rgb(frame.yuv, rgb);
  } else {
    copy_into(frame.color, rgb);
  }
  rgb_to_gray(rgb, out);
  return out;
}

}  // namespace stereod
