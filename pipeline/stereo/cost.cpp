#include "stereo/cost.hpp"

#include <algorithm>
#include <cmath>

namespace stereod {
namespace {

// round(64 * (1 - exp(-v / lambda))): robust, saturating, so neither term dominates the other.
std::uint8_t saturating(int v, int lambda) {
  return static_cast<std::uint8_t>(std::lround(64.0 * (1.0 - std::exp(-double(v) / lambda))));
}

}  // namespace

CostTables make_cost_tables(const StereoParams& p) {
  CostTables t;
  t.census_bits = p.census_width * p.census_height - 1;
  switch (p.cost) {
    case MatchingCost::kAbsDiff:
      for (int v = 0; v < 256; ++v)
        t.ad[v] = static_cast<std::uint8_t>(std::min(v, p.ad_truncation));
      break;
    case MatchingCost::kCensus:
      t.uses_census = true;
      for (int h = 0; h <= 64; ++h) t.census[h] = static_cast<std::uint8_t>(h);
      break;
    case MatchingCost::kAdCensus:
      t.uses_census = true;
      for (int v = 0; v < 256; ++v) t.ad[v] = saturating(v, p.lambda_ad);
      for (int h = 0; h <= 64; ++h) t.census[h] = saturating(h, p.lambda_census);
      break;
  }
  const int max_bits = t.uses_census ? t.census_bits : 0;
  t.outside = static_cast<std::uint32_t>(t.ad[255]) + t.census[max_bits];
  return t;
}

}  // namespace stereod
