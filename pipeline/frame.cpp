#include "frame.hpp"

#include <algorithm>
#include <atomic>

namespace stereod {

void copy_into(const RgbView& src, RgbImage& dst) {
  if (dst.width != src.width || dst.height != src.height) dst.resize(src.width, src.height);
  for (int y = 0; y < src.height; ++y) {
    std::copy(src.row(y), src.row(y) + 3 * src.width, dst.row(y));
  }
}

void rgb_to_gray(const RgbImage& rgb, Gray8& gray) {
  gray.ensure_size(rgb.width, rgb.height);
  for (int y = 0; y < rgb.height; ++y) {
    const std::uint8_t* s = rgb.row(y);
    std::uint8_t* d = gray.row(y);
    for (int x = 0; x < rgb.width; ++x) d[x] = luma(s[3 * x], s[3 * x + 1], s[3 * x + 2]);
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
  out.ensure_size(frame.color.width, frame.color.height);
  for (int y = 0; y < frame.color.height; ++y) {
    const std::uint8_t* s = frame.color.row(y);
    std::uint8_t* d = out.row(y);
    for (int x = 0; x < frame.color.width; ++x) d[x] = luma(s[3 * x], s[3 * x + 1], s[3 * x + 2]);
  }
  return out;
}

}  // namespace stereod
