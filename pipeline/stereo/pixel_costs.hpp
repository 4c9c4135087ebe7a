// Pixel costs (adaptive_window.hpp: pc) of one row for both reference views at once. A pixel pair
// has one cost whichever view it is seen from: the left view's pc(x, d) pairs left x with right
// x - d, exactly the pair of the right view's pc(x - d, d), and the cost is symmetric. So each
// pair's cost is computed once, into the left view's cost planes, over the union of what the two
// views' plans ask for, and the right view's planes are copied from them, shifted by d.
#pragma once

#include <cstdint>
#include <vector>

#include "stereo/cost.hpp"
#include "stereo/match_side.hpp"
#include "stereo/subwindow_sums.hpp"

namespace stereod {

class PixelCosts {
 public:
  // left: the left reference view's side (its target is the right image).
  void start(const MatchSide& left, const CostTables& costs);
  // Row r of both views' cost planes, wherever their plans need it.
  void compute_row(int r, SubwindowSums& left, SubwindowSums& right);

 private:
  struct Span {
    int d, x0, x1;  // left-view pixels [x0, x1) at disparity d, every partner inside the image
    bool operator<(const Span& o) const { return d != o.d ? d < o.d : x0 < o.x0; }
  };
  struct Run {
    int d, k0, k1;  // chunks [k0, k1) of a plan row at disparity d
  };

  const MatchSide* left_ = nullptr;
  const CostTables* table_ = nullptr;
  std::uint8_t ad_by_difference_[511] = {};  // table_->ad[|a - b|] at index a - b + 255
  std::vector<Span> spans_;
  std::vector<Run> left_runs_, right_runs_;
};

}  // namespace stereod
