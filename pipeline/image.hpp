// Plain 2-D image containers used on the host side of the frame path.
//
// ImageView is a non-owning window onto pixels with an explicit row stride (in elements), so that
// buffers handed over by GStreamer or a pinned slot can be read in place. Image owns tightly packed
// pixels (stride == width); every stage of the CPU reference works on those.
#pragma once

#include <cassert>
#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <vector>

namespace stereod {

template <typename T>
struct ImageView {
  T* data = nullptr;
  int width = 0;
  int height = 0;
  std::ptrdiff_t stride = 0;  // elements between the starts of two rows

  ImageView() = default;
  ImageView(T* d, int w, int h, std::ptrdiff_t s) : data(d), width(w), height(h), stride(s) {}
  ImageView(T* d, int w, int h) : ImageView(d, w, h, w) {}

  // A view of mutable pixels converts to a view of const pixels, never the other way.
  template <typename U, typename = std::enable_if_t<std::is_same_v<const U, T>>>
  ImageView(const ImageView<U>& o)
      : data(o.data), width(o.width), height(o.height), stride(o.stride) {}

  bool empty() const { return data == nullptr || width <= 0 || height <= 0; }
  T* row(int y) const { return data + static_cast<std::ptrdiff_t>(y) * stride; }
  T& operator()(int x, int y) const {
    assert(x >= 0 && x < width && y >= 0 && y < height);
    return row(y)[x];
  }
};

template <typename T>
class Image {
 public:
  Image() = default;
  Image(int width, int height, T fill = T{}) { resize(width, height, fill); }

  void resize(int width, int height, T fill = T{}) {
    width_ = width;
    height_ = height;
    pixels_.assign(static_cast<std::size_t>(width) * static_cast<std::size_t>(height), fill);
  }
  // Keeps the allocation when the size is unchanged: per-frame buffers are sized once.
  void ensure_size(int width, int height) {
    if (width != width_ || height != height_) resize(width, height);
  }
  void fill(T value) { pixels_.assign(pixels_.size(), value); }

  int width() const { return width_; }
  int height() const { return height_; }
  bool empty() const { return pixels_.empty(); }
  std::size_t size() const { return pixels_.size(); }
  T* data() { return pixels_.data(); }
  const T* data() const { return pixels_.data(); }
  T* row(int y) { return pixels_.data() + static_cast<std::size_t>(y) * width_; }
  const T* row(int y) const { return pixels_.data() + static_cast<std::size_t>(y) * width_; }
  T& operator()(int x, int y) {
    assert(x >= 0 && x < width_ && y >= 0 && y < height_);
    return pixels_[static_cast<std::size_t>(y) * width_ + x];
  }
  const T& operator()(int x, int y) const {
    assert(x >= 0 && x < width_ && y >= 0 && y < height_);
    return pixels_[static_cast<std::size_t>(y) * width_ + x];
  }
  ImageView<T> view() { return {pixels_.data(), width_, height_, width_}; }
  ImageView<const T> view() const { return {pixels_.data(), width_, height_, width_}; }
  std::vector<T>& pixels() { return pixels_; }
  const std::vector<T>& pixels() const { return pixels_; }

  bool operator==(const Image& o) const {
    return width_ == o.width_ && height_ == o.height_ && pixels_ == o.pixels_;
  }
  bool operator!=(const Image& o) const { return !(*this == o); }

 private:
  int width_ = 0;
  int height_ = 0;
  std::vector<T> pixels_;
};

// Copies a strided view into a packed image (resizing it if needed).
template <typename T>
void copy_into(ImageView<const T> src, Image<T>& dst) {
  dst.ensure_size(src.width, src.height);
  for (int y = 0; y < src.height; ++y) {
    const T* s = src.row(y);
    T* d = dst.row(y);
    for (int x = 0; x < src.width; ++x) d[x] = s[x];
  }
}

using Gray8 = Image<std::uint8_t>;
using Disparity16 = Image<std::uint16_t>;

}  // namespace stereod
