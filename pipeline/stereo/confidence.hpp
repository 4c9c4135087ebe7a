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

// What every aggregation (the adaptive window, semi-global) does with a pixel's winner d
// (kNoDisparity: none) of cost `best` among its candidates lo..hi: the runner-up is the lowest cost
// of the candidates at least 2 from d (its own neighbours do not compete); with uniqueness > 0 a
// runner-up within that many percent makes the match ambiguous (kNoDisparity); `confidence`, when
// given, receives match_confidence (0 without a winner). `cost_at(dd)` is the aggregated cost of
// candidate dd, `none` (larger than any cost) where dd is not allowed. Returns the disparity kept.
template <typename T, typename CostAt>
STEREOD_HD int apply_winner_rules(int d, T best, int lo, int hi, const CostAt& cost_at, T none,
                                  int uniqueness, std::uint8_t* confidence) {
  T second = none;
  if (d != kNoDisparity && (uniqueness > 0 || confidence)) {
    for (int dd = lo; dd <= hi; ++dd) {
      const T a = cost_at(dd);
      if ((dd - d > 1 || d - dd > 1) && a < second) second = a;
    }
  }
  if (d != kNoDisparity && uniqueness > 0 && second != none &&
      rival_makes_ambiguous(second, best, uniqueness)) {
    d = kNoDisparity;
  }
  if (confidence) {
    *confidence =
        d == kNoDisparity ? std::uint8_t{0} : match_confidence(best, second, second != none);
  }
  return d;
}

}  // namespace stereod
