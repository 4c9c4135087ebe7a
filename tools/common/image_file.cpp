#include "image_file.hpp"

#include <png.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>
#include <stdexcept>

namespace stereod {
namespace {

struct FileCloser {
  void operator()(std::FILE* f) const {
    if (f) std::fclose(f);
  }
};
using File = std::unique_ptr<std::FILE, FileCloser>;

bool host_little_endian() {
  const std::uint16_t one = 1;
  std::uint8_t b;
  std::memcpy(&b, &one, 1);
  return b == 1;
}

[[noreturn]] void png_error_to_exception(png_structp png, png_const_charp message) {
  auto* what = static_cast<std::string*>(png_get_error_ptr(png));
  *what = message;
  png_longjmp(png, 1);
}

void png_warning_ignored(png_structp, png_const_charp) {}

ImageFile read_png(const std::string& path, std::FILE* f) {
  std::string error;
  png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, &error, png_error_to_exception,
                                           png_warning_ignored);
  if (!png) throw std::runtime_error(path + ": out of memory");
  png_infop info = png_create_info_struct(png);
  ImageFile img;
  std::vector<png_bytep> rows;
  if (setjmp(png_jmpbuf(png))) {
    png_destroy_read_struct(&png, &info, nullptr);
    throw std::runtime_error(path + ": bad PNG: " + error);
  }
  png_init_io(png, f);
  png_read_info(png, info);
  const int color = png_get_color_type(png, info);
  const int depth = png_get_bit_depth(png, info);
  if (color == PNG_COLOR_TYPE_PALETTE) png_set_palette_to_rgb(png);
  if (color == PNG_COLOR_TYPE_GRAY && depth < 8) png_set_expand_gray_1_2_4_to_8(png);
  if (png_get_valid(png, info, PNG_INFO_tRNS)) png_set_tRNS_to_alpha(png);
  if (depth == 16 && host_little_endian()) png_set_swap(png);
  png_read_update_info(png, info);
  img.width = static_cast<int>(png_get_image_width(png, info));
  img.height = static_cast<int>(png_get_image_height(png, info));
  img.channels = png_get_channels(png, info);
  img.bit_depth = png_get_bit_depth(png, info);
  const std::size_t row_bytes = png_get_rowbytes(png, info);
  img.data.resize(row_bytes * static_cast<std::size_t>(img.height));
  rows.resize(static_cast<std::size_t>(img.height));
  for (int y = 0; y < img.height; ++y) rows[y] = img.data.data() + row_bytes * y;
  png_read_image(png, rows.data());
  png_read_end(png, nullptr);
  png_destroy_read_struct(&png, &info, nullptr);
  return img;
}

// Binary PGM (P5) and PPM (P6), maxval up to 65535 (16-bit samples are big-endian in the file).
ImageFile read_pnm(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::string magic;
  in >> magic;
  auto next_number = [&]() {
    int v = -1;
    for (;;) {
      in >> std::ws;
      if (in.peek() == '#') {
        std::string comment;
        std::getline(in, comment);
        continue;
      }
      in >> v;
      return v;
    }
  };
  ImageFile img;
  img.width = next_number();
  img.height = next_number();
  const int maxval = next_number();
  if (!in || (magic != "P5" && magic != "P6") || img.width <= 0 || img.height <= 0 || maxval <= 0 ||
      maxval > 65535) {
    throw std::runtime_error(path + ": not a binary PGM/PPM file");
  }
  in.get();
  img.channels = magic == "P6" ? 3 : 1;
  img.bit_depth = maxval > 255 ? 16 : 8;
  const std::size_t samples = static_cast<std::size_t>(img.width) * img.height * img.channels;
  img.data.resize(samples * (img.bit_depth / 8));
  in.read(reinterpret_cast<char*>(img.data.data()), static_cast<std::streamsize>(img.data.size()));
  if (!in) throw std::runtime_error(path + ": truncated image data");
  if (img.bit_depth == 16 && host_little_endian()) {
    for (std::size_t i = 0; i < samples; ++i) std::swap(img.data[2 * i], img.data[2 * i + 1]);
  }
  return img;
}

}  // namespace

std::uint16_t ImageFile::sample16(std::size_t index) const {
  std::uint16_t v;
  std::memcpy(&v, data.data() + 2 * index, 2);
  return v;
}

ImageFile read_image_file(const std::string& path) {
  File f(std::fopen(path.c_str(), "rb"));
  if (!f) throw std::runtime_error(path + ": cannot open");
  unsigned char sig[8] = {};
  const std::size_t n = std::fread(sig, 1, 8, f.get());
  if (n == 8 && png_sig_cmp(sig, 0, 8) == 0) {
    std::rewind(f.get());
    return read_png(path, f.get());
  }
  if (n >= 2 && sig[0] == 'P' && (sig[1] == '5' || sig[1] == '6')) return read_pnm(path);
  throw std::runtime_error(path + ": unknown image format (expected PNG, PGM or PPM)");
}

void write_png_file(const std::string& path, const void* data, int width, int height, int channels,
                    int bit_depth) {
  if ((channels != 1 && channels != 3) || (bit_depth != 8 && bit_depth != 16)) {
    throw std::invalid_argument(path + ": can only write 1- or 3-channel, 8- or 16-bit PNGs");
  }
  File f(std::fopen(path.c_str(), "wb"));
  if (!f) throw std::runtime_error(path + ": cannot write");
  std::string error;
  png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, &error, png_error_to_exception,
                                            png_warning_ignored);
  if (!png) throw std::runtime_error(path + ": out of memory");
  png_infop info = png_create_info_struct(png);
  if (setjmp(png_jmpbuf(png))) {
    png_destroy_write_struct(&png, &info);
    throw std::runtime_error(path + ": cannot write the PNG: " + error);
  }
  png_init_io(png, f.get());
  png_set_IHDR(png, info, static_cast<png_uint_32>(width), static_cast<png_uint_32>(height),
               bit_depth, channels == 1 ? PNG_COLOR_TYPE_GRAY : PNG_COLOR_TYPE_RGB,
               PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
  png_set_compression_level(png, 3);  // fast; these are intermediate files
  png_write_info(png, info);
  if (bit_depth == 16 && host_little_endian()) png_set_swap(png);
  const std::size_t row_bytes = static_cast<std::size_t>(width) * channels * (bit_depth / 8);
  const auto* bytes = static_cast<const std::uint8_t*>(data);
  for (int y = 0; y < height; ++y) {
    png_write_row(png, const_cast<png_bytep>(bytes + row_bytes * y));
  }
  png_write_end(png, nullptr);
  png_destroy_write_struct(&png, &info);
  if (std::fflush(f.get()) != 0) throw std::runtime_error(path + ": write failed");
}

}  // namespace stereod
