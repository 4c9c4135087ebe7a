// Reads every pixel of a decoded view, so that a sanitizer sees any read outside its message part
// (the corruption tests and the decoder's fuzz target).
#pragma once

#include <cstdint>

#include "image.hpp"

namespace stereod::test {

template <typename T>
std::uint64_t touch(ImageView<const T> v) {
  std::uint64_t sum = 0;
  for (int y = 0; y < v.height; ++y) {
    for (int x = 0; x < v.width; ++x) sum += v(x, y);
  }
  return sum;
}

}  // namespace stereod::test
