#include "ply.hpp"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "publish/points.hpp"

namespace stereod::sub {

std::size_t write_ply(const std::string& path, ImageView<const float> points, int channels,
                      const std::string& comment) {
  if (channels != 3 && channels != 4) {
    throw std::invalid_argument(path + ": points have 3 or 4 channels, not " +
                                std::to_string(channels));
  }
  const bool color = channels == 4;
  const int width = points.width / channels;
  // The vertices first: the header states their number.
  std::vector<char> body;
  std::size_t count = 0;
  const std::size_t vertex = 3 * sizeof(float) + (color ? 3 : 0);
  for (int y = 0; y < points.height; ++y) {
    const float* p = points.row(y);
    for (int x = 0; x < width; ++x, p += channels) {
      if (!std::isfinite(p[0]) || !std::isfinite(p[1]) || !std::isfinite(p[2])) continue;
      const std::size_t at = body.size();
      body.resize(at + vertex);
      // Little-endian floats: the host's on every platform stereod runs on (x86-64, AArch64).
      std::memcpy(body.data() + at, p, 3 * sizeof(float));
      if (color) {
        const std::uint32_t rgb = publish::float_as_rgb(p[3]);
        body[at + 12] = static_cast<char>((rgb >> 16) & 0xFF);
        body[at + 13] = static_cast<char>((rgb >> 8) & 0xFF);
        body[at + 14] = static_cast<char>(rgb & 0xFF);
      }
      ++count;
    }
  }
  std::ofstream out(path, std::ios::binary);
  out << "ply\nformat binary_little_endian 1.0\n";
  if (!comment.empty()) {
    std::string line = comment;
    for (char& c : line) c = (c == '\n' || c == '\r') ? ' ' : c;
    out << "comment " << line << "\n";
  }
  out << "element vertex " << count << "\n"
      << "property float x\nproperty float y\nproperty float z\n";
  if (color) out << "property uchar red\nproperty uchar green\nproperty uchar blue\n";
  out << "end_header\n";
  out.write(body.data(), static_cast<std::streamsize>(body.size()));
  if (!out) throw std::runtime_error(path + ": cannot write");
  return count;
}

}  // namespace stereod::sub
