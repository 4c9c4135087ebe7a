// PNG (libpng) and binary PNM (P5/P6) image files: the little the tools and tests need, without
// OpenCV's image codecs (which pull in a hundred libraries: too much to carry to a GPU machine).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace stereod {

struct ImageFile {
  int width = 0;
  int height = 0;
  int channels = 0;   // 1 (gray), 2 (gray + alpha), 3 (RGB) or 4 (RGBA); palettes become RGB(A)
  int bit_depth = 0;  // 8 or 16
  // Row-major, channels interleaved; 16-bit samples as host-endian uint16 (2 bytes each).
  std::vector<std::uint8_t> data;

  std::uint16_t sample16(std::size_t index) const;
};

// Throws std::runtime_error naming the file and what is wrong with it.
ImageFile read_image_file(const std::string& path);
// channels 1 or 3; bit_depth 8 or 16 (16-bit samples host-endian).
void write_png_file(const std::string& path, const void* data, int width, int height, int channels,
                    int bit_depth);

}  // namespace stereod
