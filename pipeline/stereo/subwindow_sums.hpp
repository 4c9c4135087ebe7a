// Pixel costs and sub-window sums (adaptive_window.hpp: pc and S) of one view for a band of output
// rows, kept once per (pixel, disparity) that the plan (window_plan.hpp) asks for, row after row
// (the pixel costs are computed by PixelCosts, pixel_costs.hpp, for both views at once).
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

#include "stereo/window_plan.hpp"

namespace stereod {

class SubwindowSums {
 public:
  // Sizes the rings for a level whose plan is `plan` (kept by reference).
  void start(const WindowPlan& plan, int disparities);
  const WindowPlan& plan() const { return *plan_; }

  // Plane 0 of the pixel costs of row r, at x = 0 (PixelCosts fills them); plane d is
  // cost_stride() * d further, and each plane has cost_margin() pixels before x = 0 and after
  // x = width - 1.
  std::uint8_t* cost_row(int r) {
    const std::size_t slot = static_cast<std::size_t>(r % cost_rows_);
    return costs_.data() + slot * disparities_ * cost_stride_ + cost_margin_;
  }
  std::size_t cost_stride() const { return cost_stride_; }
  int cost_margin() const { return cost_margin_; }

  // The sub-window sums of row cy (-s <= cy < height + s) that the plan asks for, from the pixel
  // costs of rows cy - s/2 .. cy + s/2 (clamped to the image), which must be in the ring.
  void compute_sums(int cy);
  // Plane d of the sub-window sums of row cy (one of the 2s + 1 last computed), indexed by x
  // from -s.
  const std::uint16_t* row(int cy, int d) const { return row(cy) + d * sum_stride_; }
  // Plane 0 of row cy; plane d is plane_stride() * d further.
  const std::uint16_t* row(int cy) const {
    const std::size_t slot = static_cast<std::size_t>((cy + s_) % sum_rows_);
    return sums_.data() + slot * disparities_ * sum_stride_ + s_;
  }
  std::size_t plane_stride() const { return sum_stride_; }

 private:
  const WindowPlan* plan_ = nullptr;
  int disparities_ = 0, s_ = 0, half_ = 0, width_ = 0, height_ = 0;
  int cost_rows_ = 0, sum_rows_ = 0;  // ring sizes
  int cost_margin_ = 0;               // s + s/2
  std::size_t cost_stride_ = 0, sum_stride_ = 0;
  std::vector<std::uint8_t> costs_;
  std::vector<std::uint16_t> sums_;
  std::vector<std::uint16_t> column_;  // vertical sums of one run, scratch
};

}  // namespace stereod
