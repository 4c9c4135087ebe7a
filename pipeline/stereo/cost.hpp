// Matching cost of one pixel pair. All three cost kinds are one formula,
//   cost = ad_table[|a - b|] + census_table[hamming(code_a, code_b)],
// with the unused term's table all zero: truncated AD is ad_table[v] = min(v, T); census is
// census_table[h] = h; AD-census fills both with saturating curves (Mei et al. 2011). The tables
// are built once on the host and copied to the GPU, so both engines look up the same integers.
#pragma once

#include <cstdint>

#include "stereo/params.hpp"
#include "stereo/pixel_ops.hpp"

namespace stereod {

struct CostTables {
  std::uint8_t ad[256] = {};
  std::uint8_t census[65] = {};
  bool uses_census = false;
  int census_bits = 0;
  // Cost charged where a window pixel's partner lies outside the image: the largest possible.
  std::uint32_t outside = 0;
};

CostTables make_cost_tables(const StereoParams& p);

STEREOD_HD std::uint32_t pixel_cost(const CostTables& t, std::uint8_t a, std::uint8_t b,
                                    std::uint64_t code_a, std::uint64_t code_b) {
  const int diff = a > b ? a - b : b - a;
  return static_cast<std::uint32_t>(t.ad[diff]) + t.census[popcount64(code_a ^ code_b)];
}

}  // namespace stereod
