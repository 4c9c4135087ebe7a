// The whole matcher written out from docs/ALGORITHM.md, pixel by pixel, with nothing cached and
// nothing shared between pixels: every stage calls the per-pixel definitions (pixel_ops.hpp,
// naive_aggregated_cost, candidate_allowed) directly. Slow (each candidate sums 9 sub-windows from
// scratch), so only for small images; the tests hold the CPU engine to it bit for bit.
#pragma once

#include <cstdint>
#include <vector>

#include "image.hpp"
#include "stereo/params.hpp"

namespace stereod::testing {

struct NaiveResult {
  Disparity16 left, right;
  // The left view's confidence8 (docs/PROTOCOL.md): from the finest level's winner and the lowest
  // cost at least 2 disparities from it; 0 where the checked or the final map has no disparity.
  Gray8 confidence;
  // Per level (index 0 = finest) and view (0 = left reference): the winners before the
  // cross-check.
  std::vector<Image<std::int16_t>> winners[2];
};

// masks: per level, 1 = foreground; empty: every pixel.
NaiveResult naive_match(const StereoParams& p, const Gray8& left, const Gray8& right,
                        const std::vector<Gray8>& left_foreground,
                        const std::vector<Gray8>& right_foreground);

// The length of the arm of (x, y) in direction (dx, dy) by Mei's rule (docs/ALGORITHM.md
// "Cross-based aggregation"), walked pixel by pixel with the p.cross_* keys.
int naive_arm(const StereoParams& p, const Gray8& g, int x, int y, int dx, int dy);

// The multi-step refinement (docs/ALGORITHM.md "Refinement") of one view's 16*d map `d`, written
// out: each round lists every hole's region pixel by pixel and counts its votes; the interpolation
// walks each of the 16 directions step by step. masks: that view's, as above; partner_raw: the
// other view's finest winners; sign: the view's pixel x meets its partner at x + sign * d.
void naive_refine(const StereoParams& p, Disparity16& d, const Gray8& gray,
                  const std::vector<Gray8>& masks, const Image<std::int16_t>& partner_raw,
                  int sign);

}  // namespace stereod::testing
