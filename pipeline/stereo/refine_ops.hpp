// The integer rules of the multi-step refinement (refinement.hpp, docs/ALGORITHM.md
// "Refinement"; Mei et al. 2011), written once so that a second engine can include the very same
// source and cannot drift from the CPU matcher.
#pragma once

#include <cstdint>

#include "stereo/pixel_ops.hpp"

namespace stereod {

// The integer disparity a 16*d value votes for: rounded to nearest, halves up.
STEREOD_HD int refine_vote_bin(std::uint16_t q4) {
  return (int{q4} + kSubpixelScale / 2) >> kSubpixelBits;
}

// Region voting takes the most frequent disparity (`winner` of the `votes` valid pixels of the
// region) when there are at least `min_votes` votes and it holds more than `share` percent of
// them (Mei's tau_S and tau_H).
STEREOD_HD bool refine_vote_accepted(int winner, int votes, int min_votes, int share) {
  return votes >= min_votes && 100 * winner > share * votes;
}

// A pixel's vote key: the disparity it votes for, or -1 without one.
STEREOD_HD int refine_vote_key(std::uint16_t q4) {
  return q4 == kInvalidDisparity ? -1 : refine_vote_bin(q4);
}

// refine_at_edge's test on the three pixels' vote keys: `left` and `right` -1 where there is
// none or it has no disparity, `own` >= 0. Written without branches (the CPU tests a row of
// pixels at once).
STEREOD_HD bool refine_edge_keys(int own, int left, int right, int step, bool near_only) {
  const int l = left < 0 ? own : left, r = right < 0 ? own : right;
  const bool below = (own - l >= step) | (own - r >= step);
  const bool above = (l - own >= step) | (r - own >= step);
  return (step != 0) & (below | (!near_only & above));
}

// Whether a valid pixel of value `q4` is at a depth edge and so voted on as a hole is: its left or
// right neighbour (`left`, `right`; kInvalidDisparity where there is none or it has no disparity)
// rounds to a disparity at least `step` away from its own (step 0: never). With `near_only`, only
// a neighbour at least `step` *smaller* counts: the pixel is on the nearer surface's side of the
// step, where aggregation's fattening puts the wrong values (the farther side's pixels keep
// theirs).
STEREOD_HD bool refine_at_edge(std::uint16_t q4, std::uint16_t left, std::uint16_t right, int step,
                               bool near_only) {
  return refine_edge_keys(refine_vote_bin(q4), refine_vote_key(left), refine_vote_key(right), step,
                          near_only);
}

constexpr int kRefineDirections = 16;

// Direction i (0 .. 15) of the interpolation's search, counter-clockwise from +x in image
// coordinates: (1, 0), (2, 1), (1, 1), (1, 2), then the same four turned by 90 degrees, three
// times. A search walks whole multiples of the step.
STEREOD_HD void refine_direction(int i, int& dx, int& dy) {
  const int j = i & 3;
  int x = j == 0 ? 1 : (j == 1 ? 2 : 1);
  int y = j == 0 ? 0 : (j == 3 ? 2 : 1);
  for (int turn = 0; turn < (i >> 2); ++turn) {
    const int t = x;
    x = -y;
    y = t;
  }
  dx = x;
  dy = y;
}

// Mei's occlusion test for a hole at column x of a view whose partner pixel for disparity d is
// x + sign * d (sign -1: left reference, +1: right): the hole is a mismatch when some partner
// pixel's own winner (`partner(x')`, kNoDisparity for none) points back at x within `tolerance`,
// i.e. its epipolar line meets the partner's disparity map; otherwise it is an occlusion.
template <typename Partner>
STEREOD_HD bool refine_occluded(int x, int width, int sign, int disparities, int tolerance,
                                const Partner& partner) {
  for (int d = 0; d < disparities; ++d) {
    const int xp = x + sign * d;
    if (xp < 0 || xp >= width) break;
    const int dp = partner(xp);
    if (dp == kNoDisparity) continue;
    const int diff = dp > d ? dp - d : d - dp;
    if (diff <= tolerance) return false;
  }
  return true;
}

// The key an interpolation candidate (a valid pixel of value `q4` and intensity difference
// `contrast` to the hole) is ranked by, smaller is better: an occluded hole takes the smallest
// disparity (it belongs to the farther surface), a mismatched one the most similar intensity and,
// among those, the smaller disparity. Ties go to the earlier direction.
STEREOD_HD std::uint32_t refine_candidate_key(bool occluded, int contrast, std::uint16_t q4) {
  return occluded ? std::uint32_t{q4} : (static_cast<std::uint32_t>(contrast) << 16) | q4;
}

}  // namespace stereod
