#include "stereo/pixel_costs.hpp"

#include <algorithm>

#include "stereo/pixel_ops.hpp"

namespace stereod {
namespace {

// pc (pixel_cost, cost.hpp) over x in [x0, x1) of one row, the partner of x at x + shift, every
// partner inside the image. ad[a - b] is the AD table indexed by the signed difference (no abs).
// Out of line: inlined into the row loop, its pointers were reloaded from the stack each pixel.
[[gnu::noinline]] void inside_costs(const std::uint8_t* ad, const std::uint8_t* census_table,
                                    const std::uint8_t* ref, const std::uint8_t* tgt,
                                    const std::uint64_t* ref_census,
                                    const std::uint64_t* tgt_census, int shift, int x0, int x1,
                                    std::uint8_t* out) {
  if (ref_census) {
#pragma GCC unroll 4
    for (int x = x0; x < x1; ++x) {
      out[x] = static_cast<std::uint8_t>(
          ad[ref[x] - tgt[x + shift]] +
          census_table[popcount64(ref_census[x] ^ tgt_census[x + shift])]);
    }
  } else {
    const std::uint8_t no_census = census_table[0];  // codes 0 and 0: what pixel_cost adds
#pragma GCC unroll 4
    for (int x = x0; x < x1; ++x) {
      out[x] = static_cast<std::uint8_t>(ad[ref[x] - tgt[x + shift]] + no_census);
    }
  }
}

}  // namespace

void PixelCosts::start(const MatchSide& left, const CostTables& costs) {
  left_ = &left;
  table_ = &costs;
  for (int diff = -255; diff <= 255; ++diff) {
    ad_by_difference_[diff + 255] = costs.ad[diff < 0 ? -diff : diff];
  }
}

void PixelCosts::compute_row(int r, SubwindowSums& left, SubwindowSums& right) {
  const MatchSide& side = *left_;
  const CostTables& t = *table_;
  const int w = left.plan().width();
  const int chunks = left.plan().chunks();
  const std::uint8_t outside = static_cast<std::uint8_t>(t.outside);
  // What each view needs, as left-view spans whose partners are inside the image: the left
  // view's pixel x pairs with right x - d (inside from x = d on); the right view's pixel x pairs
  // with left x + d (inside up to x = width - d - 1).
  spans_.clear();
  left_runs_.clear();
  right_runs_.clear();
  for_each_run(left.plan().costs_row(r), chunks, [&](int d, int k0, int k1) {
    const int x0 = std::max(k0 * kWindowLanes, d), x1 = std::min(w, k1 * kWindowLanes);
    if (x0 < x1) spans_.push_back({d, x0, x1});
    left_runs_.push_back({d, k0, k1});
  });
  for_each_run(right.plan().costs_row(r), chunks, [&](int d, int k0, int k1) {
    const int x0 = k0 * kWindowLanes, x1 = std::min({w, k1 * kWindowLanes, w - d});
    if (x0 < x1) spans_.push_back({d, x0 + d, x1 + d});
    right_runs_.push_back({d, k0, k1});
  });
  // Each pair once: the union of the spans, disparity by disparity.
  std::sort(spans_.begin(), spans_.end());
  const bool census = !side.ref_census.empty();
  std::uint8_t* left_row = left.cost_row(r);
  const std::size_t stride = left.cost_stride();
  for (std::size_t i = 0; i < spans_.size();) {
    Span u = spans_[i++];
    while (i < spans_.size() && spans_[i].d == u.d && spans_[i].x0 <= u.x1) {
      u.x1 = std::max(u.x1, spans_[i++].x1);
    }
    inside_costs(ad_by_difference_ + 255, t.census, side.ref.row(r), side.tgt.row(r),
                 census ? side.ref_census.row(r) : nullptr,
                 census ? side.tgt_census.row(r) : nullptr, -u.d, u.x0, u.x1,
                 left_row + u.d * stride);
  }
  // Both views' planes: partners outside the image cost `outside`; the margins repeat the edge
  // pixels' costs; the right view's pairs are the left view's, d pixels to the right.
  const int margin = left.cost_margin();
  auto finish = [&](std::uint8_t* out, int k0, int k1) {
    if (k0 == 0) std::fill(out - margin, out, out[0]);
    if (k1 == chunks) std::fill(out + w, out + w + margin, out[w - 1]);
  };
  for (const Run& run : left_runs_) {
    std::uint8_t* out = left_row + run.d * stride;
    const int x0 = run.k0 * kWindowLanes, x1 = std::min(w, run.k1 * kWindowLanes);
    std::fill(out + x0, out + std::max(x0, std::min(x1, run.d)), outside);
    finish(out, run.k0, run.k1);
  }
  std::uint8_t* right_row = right.cost_row(r);
  for (const Run& run : right_runs_) {
    std::uint8_t* out = right_row + run.d * stride;
    const std::uint8_t* pairs = left_row + run.d * stride + run.d;
    const int x0 = run.k0 * kWindowLanes, x1 = std::min(w, run.k1 * kWindowLanes);
    const int inside = std::max(x0, std::min(x1, w - run.d));
    std::copy(pairs + x0, pairs + inside, out + x0);
    std::fill(out + inside, out + x1, outside);
    finish(out, run.k0, run.k1);
  }
}

}  // namespace stereod
