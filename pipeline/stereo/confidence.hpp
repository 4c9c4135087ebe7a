// The matching confidence of a winner (docs/PROTOCOL.md "confidence8"), defined once for both
// engines: the CPU matcher (adaptive_window.cpp) and the CUDA kernels include this file, so the
// integers they produce cannot drift apart.
#pragma once

#include <cstdint>

#include "stereo/pixel_ops.hpp"

namespace stereod {

// `best` is C1, the winner's aggregated cost; `second` is C2, the lowest cost among the candidates
// compared at least 2 disparities from the winner (has_second: there was one). 255 when nothing
// else was compared, 1 for a fully ambiguous match (C2 = C1); 0 is left for pixels without a
// disparity.
STEREOD_HD std::uint8_t match_confidence(std::uint32_t best, std::uint32_t second,
                                         bool has_second) {
  if (!has_second) return 255;
  if (second == 0) return 1;
  const std::uint64_t gap = second > best ? second - best : 0;
  const std::uint64_t c = (255u * gap + second / 2) / second;
  return static_cast<std::uint8_t>(c < 1 ? 1 : c);
}

}  // namespace stereod
