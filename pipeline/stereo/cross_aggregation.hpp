// Cross-based (shape-adaptive) support regions over each pixel's own search range
// (docs/ALGORITHM.md "Cross-based aggregation"; Zhang et al. 2009, Mei et al. 2011).
//
// Arms: every pixel p of the reference view's raw intensities has four arms (left, right, up,
// down) of 0 .. cross_l1 pixels, by Mei's two-threshold rule (cross_arm_length in cross_ops.hpp).
// Regions alternate between two orders: iteration 1, 3 take the horizontal arms of the pixels on
// p's vertical arm (p included), iteration 2, 4 the vertical arms of the pixels on its horizontal
// arm.
//
// Iteration 1 averages the pixel costs pc (adaptive_window.hpp; the outside cost where a region
// pixel's partner is past the image edge) of p's candidate d over the whole region R(p):
//   E1(p, d) = round(kCrossScale * sum_{q in R(p)} pc(q, d) / |R(p)|).
// Each later iteration averages the previous one's E over the pixels q of R(p) whose range holds d
// and for which d is allowed (a neighbour that never tried d has no say about it):
//   Ek(p, d) = round(sum E(k-1)(q, d) / count),
// p itself always among them. E of a candidate that is not allowed (its target pixel is outside
// the image or background) is kNoCost; the winner takes the smallest E with the window's rules.
//
// Computed in two passes per iteration, each along one arm: the inner arms' sums at every pixel q
// for the candidates that some p whose outer arm covers q needs (the hull of those ranges), then
// p's sum of those along its outer arm.
#pragma once

#include <cstdint>
#include <vector>

#include "image.hpp"
#include "stereo/cost.hpp"
#include "stereo/match_side.hpp"
#include "stereo/search_range.hpp"
#include "stereo/sgm.hpp"

namespace stereod {

class ThreadPool;

struct CrossOptions {
  int tau1 = 12, tau2 = 6;
  int l1 = 34, l2 = 17;
  int iterations = 1;
};
CrossOptions cross_options(const StereoParams& p);

// Each pixel's arm lengths.
struct CrossArms {
  Gray8 left, right, up, down;
};
void cross_arms(ImageView<const std::uint8_t> gray, const CrossOptions& o, CrossArms& arms,
                ThreadPool* pool);

// One pair of opposite arms: towards -(dx, dy) and +(dx, dy).
struct CrossAxis {
  const Gray8* neg;
  const Gray8* pos;
  int dx, dy;
};

// Keeps its scratch between calls (one per reference view).
class CrossAggregator {
 public:
  // Fills `volume` (laid out for `ranges` by the caller) with E of the last iteration.
  void aggregate(const MatchSide& side, const CostTables& costs, const SearchRanges& ranges,
                 const CrossArms& arms, int iterations, CostVolume& volume, ThreadPool* pool);

 private:
  // The first iteration's inner pass (horizontal, over the pixel costs), by row prefix sums.
  void inner_pixel_pass(const MatchSide& side, const CostTables& costs, const CrossArms& arms,
                        ThreadPool* pool);
  // A later iteration's inner pass, over previous_ where each pixel's range holds the candidate.
  void inner_volume_pass(const SearchRanges& ranges, const CrossAxis& inner, ThreadPool* pool);
  // Sums the inner sums along each pixel's outer arm and averages them into `volume`.
  void outer_pass(const MatchSide& side, const SearchRanges& ranges, const CrossAxis& inner,
                  const CrossAxis& outer, bool first, CostVolume& volume, ThreadPool* pool);

  SearchRanges hull_;                  // per pixel, the candidates its inner sums are needed for
  CostVolume partial_;                 // inner-arm sums over hull_
  std::vector<std::uint16_t> counts_;  // how many values each partial sum holds (iteration >= 2)
  CostVolume previous_;                // E of the previous iteration
};

}  // namespace stereod
