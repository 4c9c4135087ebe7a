// The integer rules of cross-based aggregation (cross_aggregation.hpp, docs/ALGORITHM.md
// "Cross-based aggregation"), written once so that a second engine can include the very same
// source and cannot drift from the CPU matcher.
#pragma once

#include <cstdint>

#include "stereo/pixel_ops.hpp"

namespace stereod {

// The first iteration's averages are kept with this many fractions of a pixel cost: a region's
// mean cost as an integer would tie candidates that differ by less than one pixel cost, which
// happens all the time on large regions. Semi-global penalties on these averages (sgm_cost cross)
// are multiplied by it.
constexpr std::uint32_t kCrossScale = 16;

// Length (0 .. l1) of the arm of the pixel whose intensity is `anchor`, `at(k)` giving the
// intensity k pixels along the arm for k = 1 .. `room` (the pixels left before the image edge).
// Mei et al. 2011: pixel k joins while |I(k) - anchor| < tau1, |I(k) - I(k - 1)| < tau1, k <= l1,
// and, beyond l2, |I(k) - anchor| < tau2.
template <typename At>
STEREOD_HD int cross_arm_length(int anchor, const At& at, int room, int tau1, int tau2, int l1,
                                int l2) {
  const int limit = room < l1 ? room : l1;
  int previous = anchor;
  for (int k = 1; k <= limit; ++k) {
    const int v = at(k);
    const int to_anchor = v > anchor ? v - anchor : anchor - v;
    const int step = v > previous ? v - previous : previous - v;
    if (to_anchor >= tau1 || step >= tau1 || (k > l2 && to_anchor >= tau2)) return k - 1;
    previous = v;
  }
  return limit;
}

// The average of `count` (>= 1) values summing to `sum`, times `scale`, rounded to nearest.
STEREOD_HD std::uint32_t cross_average(std::uint32_t sum, std::uint32_t count,
                                       std::uint32_t scale) {
  return (sum * scale + count / 2) / count;
}

}  // namespace stereod
