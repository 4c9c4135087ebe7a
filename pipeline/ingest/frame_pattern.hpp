// Numbered file names from a printf-style pattern with exactly one integer conversion
// ("dir/left_%06d.png"), checked rather than handed to printf. Header-only: the images:// source
// (ImageFeeder) and the tools (stereod-synth, stereod-bench sequence) share it without the tools
// linking GStreamer.
#pragma once

#include <cctype>
#include <stdexcept>
#include <string>

namespace stereod {

// Throws std::invalid_argument when the pattern has no integer conversion, more than one, or any
// other conversion.
inline std::string format_frame_path(const std::string& pattern, long long index) {
  std::string out;
  int conversions = 0;
  for (std::size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] != '%') {
      out += pattern[i];
      continue;
    }
    if (i + 1 < pattern.size() && pattern[i + 1] == '%') {
      out += '%';
      ++i;
      continue;
    }
    std::size_t j = i + 1;
    const bool zero = j < pattern.size() && pattern[j] == '0';
    int width = 0;
    while (j < pattern.size() && std::isdigit(static_cast<unsigned char>(pattern[j]))) {
      width = width * 10 + (pattern[j] - '0');
      if (width > 32) throw std::invalid_argument(pattern + ": field width too large");
      ++j;
    }
    if (j >= pattern.size() || (pattern[j] != 'd' && pattern[j] != 'u')) {
      throw std::invalid_argument(pattern + ": only one %d-style conversion is allowed");
    }
    if (++conversions > 1) throw std::invalid_argument(pattern + ": more than one %d conversion");
    std::string num = std::to_string(index < 0 ? -index : index);
    while (static_cast<int>(num.size()) + (index < 0 ? 1 : 0) < width) {
      num.insert(num.begin(), zero ? '0' : ' ');
    }
    if (index < 0) num.insert(num.begin(), '-');
    out += num;
    i = j;
  }
  if (conversions != 1) throw std::invalid_argument(pattern + ": needs one %d conversion");
  return out;
}

}  // namespace stereod
