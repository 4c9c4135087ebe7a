// Adaptive-window aggregation and winner-takes-all for one level and one reference view
// (docs/ALGORITHM.md steps 4-5, Zhao & Taubin 2011 section 3.3).
//
// Definitions (docs/ALGORITHM.md gives the reasons):
//   pc(x, y, d)  = cost(ref(x, y), tgt(x + dir*d, y)), or CostTables::outside past the image edge
//   S(cx, cy, d) = sum of pc over the s x s sub-window centred on (cx, cy); pixel coordinates are
//                  clamped to the image, so a sub-window past the edge repeats the edge
//   A(x, y, d)   = S(x, y, d) + the k smallest of S(x + s*i, y + s*j, d), (i, j) the 8 neighbours
// A pixel tries the candidates of its search range, except those whose target pixel lies outside
// the image or is background; the smallest A wins, ties to the smaller d.
//
// How the work is laid out (docs/PERFORMANCE.md has the measurements behind it): each row is cut
// into chunks of kWindowLanes pixels; a chunk works on the band of disparities its pixels need
// (window_plan.hpp), and within a band every step runs on all the chunk's pixels at once, one
// disparity at a time, which the compiler turns into vector instructions. Pixel costs and
// sub-window sums are computed once per (pixel, disparity) a chunk needs, row by row, into rings of
// rows (subwindow_sums.hpp), and each row band of the image is one task on the thread pool.
#pragma once

#include <cstdint>
#include <vector>

#include "image.hpp"
#include "stereo/cost.hpp"
#include "stereo/match_side.hpp"
#include "stereo/search_range.hpp"
#include "stereo/subwindow_sums.hpp"
#include "stereo/window_plan.hpp"

namespace stereod {

class ThreadPool;
class CostVolume;

// One reference view of a level: what it reads and where its results go.
struct ViewMatch {
  MatchSide side;
  const SearchRanges* ranges = nullptr;
  Image<std::int16_t>* disparity = nullptr;  // integer winner or kNoDisparity
  Image<std::uint16_t>* q4 = nullptr;  // with options.subpixel: 16*d + offset, or kInvalidDisparity
  // Optional, with options.subpixel (the finest level): the winner's cost ratio
  // (winner_cost_ratio in pixel_ops.hpp), kNoCost where there is no winner. Only computed where
  // asked for (the trinocular fusion).
  Image<std::uint32_t>* cost_ratio = nullptr;
  // Optional: each winner's confidence (confidence.hpp, from A of the winner and the lowest A of
  // the candidates at least 2 away from it), 0 where there is no winner.
  Image<std::uint8_t>* confidence = nullptr;
  // Optional: every candidate's A over the pixel's range (kNoCost where not allowed), laid out
  // for these ranges by the caller: the semi-global pass's input (sgm.hpp).
  CostVolume* volume = nullptr;
};

// The matcher keeps its scratch buffers between calls: a frame allocates nothing once sizes settle.
class AdaptiveWindowMatcher {
 public:
  // Both views of one level at once, so they share their pixel costs (pixel_costs.hpp):
  // views[0] is the left reference (direction -1), views[1] the right (+1), reading the same two
  // images the other way round.
  void match(const ViewMatch (&views)[2], const CostTables& costs, const LevelMatchOptions& options,
             ThreadPool* pool);

  // Candidates evaluated by the last call, both views (for statistics).
  long long candidates_evaluated() const { return candidates_; }

  AdaptiveWindowMatcher();
  ~AdaptiveWindowMatcher();
  AdaptiveWindowMatcher(AdaptiveWindowMatcher&&) noexcept;
  AdaptiveWindowMatcher& operator=(AdaptiveWindowMatcher&&) noexcept;

  struct Part;  // one row band's scratch

 private:
  // Cuts the rows into about equal work for `parts` tasks; returns parts + 1 row boundaries.
  std::vector<int> split_rows(int parts) const;

  WindowPlan plans_[2];
  std::vector<Part> parts_;
  long long candidates_ = 0;
};

// The definitions above, computed the slow, obvious way: tests compare the matcher against these.
std::uint32_t naive_subwindow_sum(const MatchSide& side, const CostTables& costs, int subwindow,
                                  int cx, int cy, int d);
std::uint32_t naive_aggregated_cost(const MatchSide& side, const CostTables& costs, int subwindow,
                                    int best_k, int x, int y, int d);
// True when the candidate d of reference pixel (x, y) may be chosen at all.
bool candidate_allowed(const MatchSide& side, int x, int y, int d);

// pc(x, y, d) of the definitions above, for one pixel inside the image.
inline std::uint32_t side_pixel_cost(const MatchSide& side, const CostTables& costs, int x, int y,
                                     int d) {
  const int tx = x + side.direction * d;
  if (tx < 0 || tx >= side.ref.width) return costs.outside;
  const bool census = !side.ref_census.empty();
  const std::uint64_t a = census ? side.ref_census(x, y) : 0;
  const std::uint64_t b = census ? side.tgt_census(tx, y) : 0;
  return pixel_cost(costs, side.ref(x, y), side.tgt(tx, y), a, b);
}

}  // namespace stereod
