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
#pragma once

#include <cstdint>
#include <vector>

#include "image.hpp"
#include "stereo/cost.hpp"
#include "stereo/search_range.hpp"

namespace stereod {

class ThreadPool;

struct MatchSide {
  ImageView<const std::uint8_t> ref;
  ImageView<const std::uint8_t> tgt;
  ImageView<const std::uint64_t> ref_census;  // empty when the cost has no census term
  ImageView<const std::uint64_t> tgt_census;
  ImageView<const std::uint8_t> tgt_foreground;  // empty: every target pixel is foreground
  int direction = -1;  // -1: left reference (target x - d); +1: right reference (target x + d)
};

struct LevelMatchOptions {
  int disparities = 0;  // this level's range is 0 .. disparities-1
  int subwindow = 3;
  int best_k = 4;
  int uniqueness = 0;     // percent; 0 = off
  bool subpixel = false;  // also produce 16*d + parabola offset (the finest level)
};

// The matcher keeps its scratch buffers between calls: a frame allocates nothing once sizes settle.
class AdaptiveWindowMatcher {
 public:
  // disparity: integer winner or kNoDisparity. q4 (when options.subpixel): 16*d + offset, or
  // kInvalidDisparity.
  void match(const MatchSide& side, const SearchRanges& ranges, const CostTables& costs,
             const LevelMatchOptions& options, Image<std::int16_t>& disparity,
             Image<std::uint16_t>* q4, ThreadPool* pool);

  // Candidates evaluated by the last call (for statistics).
  long long candidates_evaluated() const { return candidates_; }

 private:
  void compute_extended_ranges(const SearchRanges& ranges, const LevelMatchOptions& o,
                               ThreadPool* pool);
  void compute_subwindow_sums(const MatchSide& side, const CostTables& costs,
                              const LevelMatchOptions& o, ThreadPool* pool);

  // Per pixel, the disparities for which some pixel needs this pixel's sub-window sum.
  Image<std::int16_t> ext_lo_, ext_hi_;
  std::vector<std::int64_t> offsets_;  // start of each pixel's sums in sums_
  std::vector<std::uint16_t> sums_;
  long long candidates_ = 0;
};

// The definitions above, computed the slow, obvious way: tests compare the matcher against these.
std::uint32_t naive_subwindow_sum(const MatchSide& side, const CostTables& costs, int subwindow,
                                  int cx, int cy, int d);
std::uint32_t naive_aggregated_cost(const MatchSide& side, const CostTables& costs, int subwindow,
                                    int best_k, int x, int y, int d);
// True when the candidate d of reference pixel (x, y) may be chosen at all.
bool candidate_allowed(const MatchSide& side, int x, int y, int d);

}  // namespace stereod
