#include "disparity_io.hpp"

#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <sstream>
#include <stdexcept>

#include "image_file.hpp"
#include "stereo/pixel_ops.hpp"

namespace stereod {
namespace {

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

bool little_endian_host() {
  const std::uint16_t one = 1;
  std::uint8_t first;
  std::memcpy(&first, &one, 1);
  return first == 1;
}

float swap_bytes(float f) {
  std::uint32_t u;
  std::memcpy(&u, &f, 4);
  u = (u >> 24) | ((u >> 8) & 0xFF00u) | ((u << 8) & 0xFF0000u) | (u << 24);
  std::memcpy(&f, &u, 4);
  return f;
}

}  // namespace

namespace {

// One 8-bit image as RGB (gray repeated), or throws naming the file.
ImageFile read_8bit(const std::string& path) {
  ImageFile f = read_image_file(path);
  if (f.bit_depth != 8) throw std::runtime_error(path + ": expected an 8-bit image");
  return f;
}

// Sample c of pixel i, for 1-4 channel images: gray (and gray + alpha) gives every channel.
std::uint8_t channel(const ImageFile& f, std::size_t i, int c) {
  const int ch = f.channels <= 2 ? 0 : c;
  return f.data[i * static_cast<std::size_t>(f.channels) + ch];
}

}  // namespace

Gray8 load_gray(const std::string& path) {
  RgbImage rgb;
  Gray8 gray;
  load_color_and_gray(path, rgb, gray);
  return gray;
}

bool load_color_and_gray(const std::string& path, RgbImage& rgb, Gray8& gray) {
  const ImageFile f = read_8bit(path);
  if (f.channels <= 2) {
    rgb = RgbImage{};
    gray.ensure_size(f.width, f.height);
    for (std::size_t i = 0; i < gray.size(); ++i) gray.data()[i] = channel(f, i, 0);
    return false;
  }
  rgb.resize(f.width, f.height);
  for (std::size_t i = 0; i < static_cast<std::size_t>(f.width) * f.height; ++i) {
    for (int c = 0; c < 3; ++c) rgb.pixels[3 * i + c] = channel(f, i, c);
  }
  rgb_to_gray(rgb, gray);
  return true;
}

Gray8 load_mask(const std::string& path) {
  const ImageFile f = read_8bit(path);
  Gray8 out(f.width, f.height);
  for (std::size_t i = 0; i < out.size(); ++i) {
    out.data()[i] = f.channels <= 2 ? channel(f, i, 0)
                                    : luma(channel(f, i, 0), channel(f, i, 1), channel(f, i, 2));
  }
  return out;
}

RgbImage load_rgb(const std::string& path) {
  const ImageFile f = read_8bit(path);
  RgbImage out;
  out.resize(f.width, f.height);
  for (std::size_t i = 0; i < static_cast<std::size_t>(f.width) * f.height; ++i) {
    for (int c = 0; c < 3; ++c) out.pixels[3 * i + c] = channel(f, i, c);
  }
  return out;
}

void write_rgb(const std::string& path, const RgbImage& image) {
  write_png_file(path, image.pixels.data(), image.width, image.height, 3, 8);
}

Image<float> read_pfm(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(path + ": cannot open");
  std::string magic;
  int w = 0, h = 0;
  double scale = 0;
  in >> magic >> w >> h >> scale;
  if (magic != "Pf" || w <= 0 || h <= 0 || scale == 0 || !in) {
    throw std::runtime_error(path + ": not a one-channel PFM file");
  }
  in.get();  // the single whitespace byte before the data
  const bool file_le = scale < 0;
  Image<float> img(w, h);
  for (int y = h - 1; y >= 0; --y) {
    in.read(reinterpret_cast<char*>(img.row(y)), static_cast<std::streamsize>(w) * 4);
    if (!in) throw std::runtime_error(path + ": truncated PFM data");
    if (file_le != little_endian_host()) {
      for (int x = 0; x < w; ++x) img(x, y) = swap_bytes(img(x, y));
    }
  }
  return img;
}

void write_pfm(const std::string& path, const Image<float>& image) {
  std::ofstream out(path, std::ios::binary);
  if (!out) throw std::runtime_error(path + ": cannot write");
  out << "Pf\n" << image.width() << " " << image.height() << "\n-1\n";
  std::vector<float> row(static_cast<std::size_t>(image.width()));
  for (int y = image.height() - 1; y >= 0; --y) {
    for (int x = 0; x < image.width(); ++x) {
      row[x] = little_endian_host() ? image(x, y) : swap_bytes(image(x, y));
    }
    out.write(reinterpret_cast<const char*>(row.data()),
              static_cast<std::streamsize>(row.size() * sizeof(float)));
  }
  if (!out) throw std::runtime_error(path + ": write failed");
}

Image<float> to_float_disparity(const Disparity16& d) {
  Image<float> f(d.width(), d.height());
  for (std::size_t i = 0; i < d.size(); ++i) {
    const std::uint16_t v = d.data()[i];
    f.data()[i] = v == kInvalidDisparity ? std::numeric_limits<float>::infinity()
                                         : static_cast<float>(v) / kSubpixelScale;
  }
  return f;
}

void write_png16(const std::string& path, const Disparity16& d) {
  write_png_file(path, d.data(), d.width(), d.height(), 1, 16);
}

Disparity16 read_png16(const std::string& path) {
  const ImageFile f = read_image_file(path);
  if (f.bit_depth != 16 || f.channels != 1)
    throw std::runtime_error(path + ": not a 16-bit gray PNG");
  Disparity16 out(f.width, f.height);
  for (std::size_t i = 0; i < out.size(); ++i) out.data()[i] = f.sample16(i);
  return out;
}

void write_png8(const std::string& path, const Gray8& image) {
  write_png_file(path, image.data(), image.width(), image.height(), 1, 8);
}

void write_disparity(const std::string& path, const Disparity16& disparity) {
  if (ends_with(path, ".pfm")) {
    write_pfm(path, to_float_disparity(disparity));
  } else if (ends_with(path, ".png")) {
    write_png16(path, disparity);
  } else {
    throw std::runtime_error(path + ": unknown output format (expected .pfm or .png)");
  }
}

}  // namespace stereod
