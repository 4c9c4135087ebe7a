// Reading and writing images and disparity maps in the formats the field uses (PNG, PGM/PPM, PFM).
// Color becomes gray through the integer BT.601 luma of frame.hpp, as in the daemon.
#pragma once

#include <string>

#include "frame.hpp"
#include "image.hpp"

namespace stereod {

// 8-bit gray (color files are converted to luma). Throws std::runtime_error naming the file.
Gray8 load_gray(const std::string& path);
// An image file as color (RGB) when it has color; `gray` is its luma either way (the integer
// BT.601 luma of frame.hpp, as the daemon computes it). Returns false for a one-channel file (then
// `rgb` is left empty). Throws std::runtime_error naming the file.
bool load_color_and_gray(const std::string& path, RgbImage& rgb, Gray8& gray);

// Any 8-bit image as stored, one channel (palette PNGs expanded). Throws std::runtime_error.
Gray8 load_mask(const std::string& path);
// 8-bit colour (grey files repeated on R, G and B). Throws std::runtime_error naming the file.
RgbImage load_rgb(const std::string& path);
// 8-bit colour PNG.
void write_rgb(const std::string& path, const RgbImage& image);

// Middlebury 2014 PFM: float32 little-endian, rows bottom-to-top, +inf where there is no value.
Image<float> read_pfm(const std::string& path);
void write_pfm(const std::string& path, const Image<float>& image);
// 16*d fixed point to float disparity, kInvalidDisparity -> +inf.
Image<float> to_float_disparity(const Disparity16& disparity);

// 16-bit PNG holding 16*d (0xFFFF = none).
void write_png16(const std::string& path, const Disparity16& disparity);
Disparity16 read_png16(const std::string& path);
void write_png8(const std::string& path, const Gray8& image);

// A disparity map written by file extension: .pfm (float) or .png (16-bit 16*d).
void write_disparity(const std::string& path, const Disparity16& disparity);

}  // namespace stereod
