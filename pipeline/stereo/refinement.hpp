// Multi-step refinement of the finest level's 16*d map after the left-right check (Mei et al.
// 2011, "On building an accurate stereo matching system on graphics hardware", section 2.4;
// docs/ALGORITHM.md "Refinement"), after any aggregation. The integer rules are in refine_ops.hpp.
//
// 1. Iterative region voting: each foreground pixel without a disparity (a hole) collects the
//    rounded disparities of the valid pixels of its cross-based support region (the horizontal
//    arms of the pixels on its vertical arm, cross_aggregation.hpp's first iteration). With at
//    least refine_votes votes, the most frequent disparity d (ties: the smaller) that holds more
//    than refine_share percent of them becomes the hole's value, 16 * d. Every round reads the
//    map the previous round left (all holes at once), refine_iterations rounds. With
//    refine_edges = N > 0, a valid pixel whose left or right neighbour rounds to a disparity N or
//    more away from its own (with refine_edges_near, N or more below its own: the pixel is on the
//    nearer surface's side) is voted on in the same way (refine_at_edge): at a depth edge, the
//    region, which follows the intensity edges, decides which side the pixel belongs to. This is
//    our stand-in for Mei's depth-discontinuity adjustment, which compares matching costs
//    instead.
//    Rounds after the first vote again only where the last round changed a vote key (a rounded
//    disparity, or none) in the pixel's region or beside it: elsewhere the round would repeat the
//    last one's decision, which the map already holds.
// 2. Proper interpolation (refine_interpolate): each hole left is an occlusion or a mismatch by
//    Mei's test on the partner view's raw winners (refine_occluded); along each of 16 directions
//    the nearest valid pixel is a candidate (a search stops at the border and at background
//    pixels); an occlusion takes the candidate of smallest disparity, a mismatch the one of most
//    similar intensity. Candidates are read from the map after voting, not from each other.
#pragma once

#include <cstdint>
#include <vector>

#include "image.hpp"
#include "stereo/cross_aggregation.hpp"
#include "stereo/params.hpp"

namespace stereod {

class ThreadPool;

// What the refinement of one view reads besides its map.
struct RefineInput {
  ImageView<const std::uint8_t> gray;        // the view's finest-level raw intensities
  ImageView<const std::uint8_t> foreground;  // 1 = foreground; empty: every pixel
  const CrossArms* arms;                     // the view's arms on `gray`
  const Image<std::int16_t>* partner;        // the other view's finest-level raw winners
  int sign;                                  // partner pixel of x at disparity d: x + sign * d
  int disparities;                           // the finest level's D
  int tolerance;                             // the left-right check's
};

// Keeps its scratch between calls (one per view).
class Refiner {
 public:
  // p: the refine_* keys.
  void refine(Disparity16& map, const RefineInput& in, const StereoParams& p, ThreadPool* pool);

 private:
  // One voting round from previous_ into `map`; false when it changed nothing. `again`: not the
  // first round, so only the pixels near the last round's changes are voted on.
  bool vote(Disparity16& map, const RefineInput& in, const StereoParams& p, bool again,
            ThreadPool* pool);
  // flags_ (and flags_by_column_) of `map` for the next round; with `again`, previous_ is the map
  // before the last round.
  void mark_rows(const Disparity16& map, const RefineInput& in, const StereoParams& p, bool again,
                 ThreadPool* pool);

  // A round votes column by column; the planes it walks down a column are kept transposed
  // (column x at x * height), so that the walk reads them in order.
  static constexpr std::uint8_t kVoter = 1;          // a hole, or at a depth edge
  static constexpr std::uint8_t kStaleSegment = 2;   // its horizontal arm holds a change
  static constexpr std::uint8_t kChangedBeside = 4;  // it or a row neighbour changed
  void interpolate(Disparity16& map, const RefineInput& in, ThreadPool* pool);

  Disparity16 previous_;
  Image<std::uint16_t> runs_;  // per pixel of previous_, the pixels to the end of its run
  Gray8 flags_;  // per pixel, kVoter | kStaleSegment | kChangedBeside, for the round to come
  std::vector<std::uint8_t> flags_by_column_, up_, down_, left_, right_;  // transposed
  std::vector<std::int32_t> nearest_;  // per pixel, the nearest valid pixel along one direction
  std::vector<std::uint32_t> key_;     // per hole, the best candidate's key so far
  std::vector<std::uint8_t> occluded_;
};

}  // namespace stereod
