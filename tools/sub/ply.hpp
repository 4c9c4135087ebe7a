// Point clouds as PLY files (binary little-endian, the form MeshLab, CloudCompare, Open3D and PCL
// read): one vertex per pixel that has a point, float x, y, z in metres (the left camera's frame:
// x right, y down, z forward) and, when colors are given, uchar red, green, blue.
#pragma once

#include <cstddef>
#include <string>

#include "image.hpp"

namespace stereod::sub {

// `points`: one point per pixel, `channels` floats each (3: X Y Z; 4: X Y Z and the packed
// 0x00RRGGBB color, written as red, green, blue). Points with a non-finite coordinate are left
// out. `comment` goes into the header (one line). Returns the number of vertices written. Throws
// std::runtime_error naming the file when it cannot be written.
std::size_t write_ply(const std::string& path, ImageView<const float> points, int channels,
                      const std::string& comment = "");

}  // namespace stereod::sub
