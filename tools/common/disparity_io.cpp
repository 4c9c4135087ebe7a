#include "disparity_io.hpp"

#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <sstream>
#include <stdexcept>

#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>

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

Gray8 load_gray(const std::string& path) {
  cv::Mat m = cv::imread(path, cv::IMREAD_GRAYSCALE);
  if (m.empty()) throw std::runtime_error(path + ": cannot read the image");
  Gray8 out(m.cols, m.rows);
  for (int y = 0; y < m.rows; ++y) std::memcpy(out.row(y), m.ptr<std::uint8_t>(y), m.cols);
  return out;
}

bool load_color_and_gray(const std::string& path, RgbImage& rgb, Gray8& gray) {
  cv::Mat m = cv::imread(path, cv::IMREAD_UNCHANGED);
  if (m.empty()) throw std::runtime_error(path + ": cannot read the image");
  if (m.depth() != CV_8U) throw std::runtime_error(path + ": expected an 8-bit image");
  if (m.channels() == 1) {
    rgb = RgbImage{};
    gray.ensure_size(m.cols, m.rows);
    for (int y = 0; y < m.rows; ++y) std::memcpy(gray.row(y), m.ptr<std::uint8_t>(y), m.cols);
    return false;
  }
  if (m.channels() == 4) cv::cvtColor(m, m, cv::COLOR_BGRA2BGR);
  rgb.resize(m.cols, m.rows);
  for (int y = 0; y < m.rows; ++y) {
    const std::uint8_t* s = m.ptr<std::uint8_t>(y);
    std::uint8_t* d = rgb.row(y);
    for (int x = 0; x < m.cols; ++x) {
      d[3 * x] = s[3 * x + 2];
      d[3 * x + 1] = s[3 * x + 1];
      d[3 * x + 2] = s[3 * x];
    }
  }
  rgb_to_gray(rgb, gray);
  return true;
}

Gray8 load_mask(const std::string& path) {
  cv::Mat m = cv::imread(path, cv::IMREAD_UNCHANGED);
  if (m.empty()) throw std::runtime_error(path + ": cannot read the image");
  if (m.depth() != CV_8U) throw std::runtime_error(path + ": expected an 8-bit image");
  if (m.channels() == 3) cv::cvtColor(m, m, cv::COLOR_BGR2GRAY);
  if (m.channels() == 4) cv::cvtColor(m, m, cv::COLOR_BGRA2GRAY);
  Gray8 out(m.cols, m.rows);
  for (int y = 0; y < m.rows; ++y) std::memcpy(out.row(y), m.ptr<std::uint8_t>(y), m.cols);
  return out;
}

RgbImage load_rgb(const std::string& path) {
  cv::Mat m = cv::imread(path, cv::IMREAD_COLOR);
  if (m.empty()) throw std::runtime_error(path + ": cannot read the image");
  cv::cvtColor(m, m, cv::COLOR_BGR2RGB);
  RgbImage out;
  out.resize(m.cols, m.rows);
  for (int y = 0; y < m.rows; ++y) std::memcpy(out.row(y), m.ptr<std::uint8_t>(y), m.cols * 3);
  return out;
}

void write_rgb(const std::string& path, const RgbImage& image) {
  cv::Mat rgb(image.height, image.width, CV_8UC3, const_cast<std::uint8_t*>(image.pixels.data()));
  cv::Mat bgr;
  cv::cvtColor(rgb, bgr, cv::COLOR_RGB2BGR);
  if (!cv::imwrite(path, bgr)) throw std::runtime_error(path + ": cannot write the image");
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
  cv::Mat m(d.height(), d.width(), CV_16UC1, const_cast<std::uint16_t*>(d.data()));
  if (!cv::imwrite(path, m)) throw std::runtime_error(path + ": cannot write the PNG");
}

Disparity16 read_png16(const std::string& path) {
  cv::Mat m = cv::imread(path, cv::IMREAD_UNCHANGED);
  if (m.empty() || m.type() != CV_16UC1) throw std::runtime_error(path + ": not a 16-bit gray PNG");
  Disparity16 out(m.cols, m.rows);
  for (int y = 0; y < m.rows; ++y) std::memcpy(out.row(y), m.ptr<std::uint16_t>(y), m.cols * 2);
  return out;
}

void write_png8(const std::string& path, const Gray8& image) {
  cv::Mat m(image.height(), image.width(), CV_8UC1, const_cast<std::uint8_t*>(image.data()));
  if (!cv::imwrite(path, m)) throw std::runtime_error(path + ": cannot write the PNG");
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
