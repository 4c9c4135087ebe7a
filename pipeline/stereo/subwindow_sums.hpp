// Pixel costs and sub-window sums (adaptive_window.hpp: pc and S) for a band of output rows,
// computed once per (pixel, disparity) that the plan (window_plan.hpp) asks for, row after row.
//
// Rows live in two rings: the pixel costs of the s rows a sub-window spans, and the sub-window sums
// of the 2s + 1 rows an output row reads (its own and those s above and below). A ring row holds
// every disparity of the level as a plane of one row (disparity-major), so the aggregation reads
// the centre and its eight neighbours at one disparity as nine contiguous runs of pixels. Each row
// has margins: sums are kept for centres from -s to W - 1 + s, pixel costs from -(s + s/2) to
// W - 1 + s + s/2, the margins holding the edge pixel's value (coordinates clamp to the image).
// Plane entries that the plan did not ask for hold stale values that only unused lanes read.
#pragma once

#include <cstdint>
#include <vector>

#include "stereo/cost.hpp"
#include "stereo/match_side.hpp"
#include "stereo/window_plan.hpp"

namespace stereod {

class SubwindowSums {
 public:
  // Prepares to serve output rows [y0, y1) of a level.
  void start(const MatchSide& side, const CostTables& costs, const WindowPlan& plan,
             int disparities, int y0, int y1);
  // Computes what output row y reads (rows are served in increasing order, each once).
  void advance_to(int y);
  // Plane d of the sub-window sums of row cy (cy within subwindow of the row last advanced to),
  // indexed by x from -s.
  const std::uint16_t* row(int cy, int d) const { return row(cy) + d * sum_stride_; }
  // Plane 0 of row cy; plane d is plane_stride() * d further.
  const std::uint16_t* row(int cy) const {
    const std::size_t slot = static_cast<std::size_t>((cy + s_) % sum_rows_);
    return sums_.data() + slot * disparities_ * sum_stride_ + s_;
  }
  std::size_t plane_stride() const { return sum_stride_; }

 private:
  // Plane 0 of the pixel costs of row r; plane d is cost_stride_ * d further.
  std::uint8_t* cost_row(int r) {
    const std::size_t slot = static_cast<std::size_t>(r % cost_rows_);
    return costs_.data() + slot * disparities_ * cost_stride_ + cost_margin_;
  }
  void compute_costs(int r);
  void compute_sums(int cy);

  const MatchSide* side_ = nullptr;
  const CostTables* table_ = nullptr;
  std::uint8_t ad_by_difference_[511] = {};  // table_->ad[|a - b|] at index a - b + 255
  const WindowPlan* plan_ = nullptr;
  int disparities_ = 0, s_ = 0, half_ = 0, width_ = 0, height_ = 0;
  int cost_rows_ = 0, sum_rows_ = 0;  // ring sizes
  int cost_margin_ = 0;               // s + s/2
  std::size_t cost_stride_ = 0, sum_stride_ = 0;
  int next_cost_row_ = 0, next_sum_row_ = 0, last_sum_row_ = 0;
  std::vector<std::uint8_t> costs_;
  std::vector<std::uint16_t> sums_;
  std::vector<std::uint16_t> column_;  // vertical sums of one chunk, scratch
};

}  // namespace stereod
