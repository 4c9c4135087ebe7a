#include "stereo/cross_aggregation.hpp"

#include <algorithm>
#include <limits>
#include <utility>

#include "stereo/adaptive_window.hpp"
#include "stereo/cross_ops.hpp"
#include "thread_pool.hpp"

namespace stereod {
namespace {

// One arm direction pair: the arms towards -step and +step.
struct Axis {
  const Gray8* neg;
  const Gray8* pos;
  int dx, dy;
};

Axis horizontal(const CrossArms& a) {
  return {&a.left, &a.right, 1, 0};
}
Axis vertical(const CrossArms& a) {
  return {&a.up, &a.down, 0, 1};
}

// hull(q) = the hull of range(p) over every p whose `outer` arm covers q; empty (hi < lo) where
// none does. Scattered line by line (a column for a vertical axis): each line is one task.
void needed_hulls(const SearchRanges& ranges, const Axis& outer, SearchRanges& hull,
                  ThreadPool* pool) {
  const int w = ranges.lo.width(), h = ranges.lo.height();
  hull.lo.ensure_size(w, h);
  hull.hi.ensure_size(w, h);
  const int lines = outer.dx ? h : w, length = outer.dx ? w : h;
  for_rows(pool, lines, [&](int l0, int l1) {
    for (int l = l0; l < l1; ++l) {
      auto at = [&](int i, int& x, int& y) {
        x = outer.dx ? i : l;
        y = outer.dx ? l : i;
      };
      int x, y;
      for (int i = 0; i < length; ++i) {
        at(i, x, y);
        hull.lo(x, y) = std::numeric_limits<std::int16_t>::max();
        hull.hi(x, y) = std::numeric_limits<std::int16_t>::min();
      }
      for (int i = 0; i < length; ++i) {
        at(i, x, y);
        const std::int16_t lo = ranges.lo(x, y), hi = ranges.hi(x, y);
        if (hi < lo) continue;
        for (int j = i - (*outer.neg)(x, y); j <= i + (*outer.pos)(x, y); ++j) {
          int qx, qy;
          at(j, qx, qy);
          hull.lo(qx, qy) = std::min(hull.lo(qx, qy), lo);
          hull.hi(qx, qy) = std::max(hull.hi(qx, qy), hi);
        }
      }
    }
  });
}

}  // namespace

CrossOptions cross_options(const StereoParams& p) {
  CrossOptions o;
  o.tau1 = p.cross_tau1;
  o.tau2 = p.cross_tau2;
  o.l1 = p.cross_l1;
  o.l2 = p.cross_l2;
  o.iterations = p.cross_iterations;
  return o;
}

void cross_arms(ImageView<const std::uint8_t> gray, const CrossOptions& o, CrossArms& arms,
                ThreadPool* pool) {
  const int w = gray.width, h = gray.height;
  for (Gray8* a : {&arms.left, &arms.right, &arms.up, &arms.down}) a->ensure_size(w, h);
  for_rows(pool, h, [&](int y0, int y1) {
    for (int y = y0; y < y1; ++y) {
      for (int x = 0; x < w; ++x) {
        const int anchor = gray(x, y);
        auto arm = [&](int dx, int dy, int room) {
          return static_cast<std::uint8_t>(cross_arm_length(
              anchor, [&](int k) { return int{gray(x + k * dx, y + k * dy)}; }, room, o.tau1,
              o.tau2, o.l1, o.l2));
        };
        arms.left(x, y) = arm(-1, 0, x);
        arms.right(x, y) = arm(1, 0, w - 1 - x);
        arms.up(x, y) = arm(0, -1, y);
        arms.down(x, y) = arm(0, 1, h - 1 - y);
      }
    }
  });
}

void CrossAggregator::aggregate(const MatchSide& side, const CostTables& costs,
                                const SearchRanges& ranges, const CrossArms& arms, int iterations,
                                CostVolume& volume, ThreadPool* pool) {
  const int w = ranges.lo.width(), h = ranges.lo.height();
  for (int k = 0; k < iterations; ++k) {
    const bool first = k == 0;
    if (!first) {
      std::swap(previous_, volume);
      volume.layout(ranges);
    }
    const Axis inner = k % 2 == 0 ? horizontal(arms) : vertical(arms);
    const Axis outer = k % 2 == 0 ? vertical(arms) : horizontal(arms);
    needed_hulls(ranges, outer, hull_, pool);
    partial_.layout(hull_);
    if (!first) counts_.resize(partial_.size());
    // Inner pass: at every pixel q, over hull(q), the sum along q's inner arm (and, after the
    // first iteration, how many values it holds).
    for_rows(pool, h, [&](int y0, int y1) {
      for (int y = y0; y < y1; ++y) {
        for (int x = 0; x < w; ++x) {
          const int nlo = hull_.lo(x, y), nhi = hull_.hi(x, y);
          if (nhi < nlo) continue;
          std::uint32_t* sum = partial_.at(x, y);
          const int n = nhi - nlo + 1;
          std::fill(sum, sum + n, 0u);
          std::uint16_t* count = first ? nullptr : counts_.data() + partial_.offset(x, y);
          if (count) std::fill(count, count + n, std::uint16_t{0});
          for (int t = -(*inner.neg)(x, y); t <= (*inner.pos)(x, y); ++t) {
            const int qx = x + t * inner.dx, qy = y + t * inner.dy;
            if (first) {
              for (int d = nlo; d <= nhi; ++d)
                sum[d - nlo] += side_pixel_cost(side, costs, qx, qy, d);
              continue;
            }
            const int lo = std::max(nlo, int{ranges.lo(qx, qy)});
            const int hi = std::min(nhi, int{ranges.hi(qx, qy)});
            const std::uint32_t* e = previous_.at(qx, qy) - ranges.lo(qx, qy);
            for (int d = lo; d <= hi; ++d) {
              if (e[d] == kNoCost) continue;
              sum[d - nlo] += e[d];
              ++count[d - nlo];
            }
          }
        }
      }
    });
    // Outer pass: p's sum of the inner sums along its outer arm, averaged.
    for_rows(pool, h, [&](int y0, int y1) {
      for (int y = y0; y < y1; ++y) {
        for (int x = 0; x < w; ++x) {
          const int lo = ranges.lo(x, y), hi = ranges.hi(x, y);
          std::uint32_t* out = volume.at(x, y);
          for (int d = lo; d <= hi; ++d) {
            if (!candidate_allowed(side, x, y, d)) {
              out[d - lo] = kNoCost;
              continue;
            }
            std::uint32_t sum = 0, count = 0;
            for (int t = -(*outer.neg)(x, y); t <= (*outer.pos)(x, y); ++t) {
              const int qx = x + t * outer.dx, qy = y + t * outer.dy;
              const std::size_t cell = partial_.offset(qx, qy) + (d - hull_.lo(qx, qy));
              sum += partial_.at(qx, qy)[d - hull_.lo(qx, qy)];
              count += first ? 1u + (*inner.neg)(qx, qy) + (*inner.pos)(qx, qy) : counts_[cell];
            }
            out[d - lo] = cross_average(sum, count, first ? kCrossScale : 1u);
          }
        }
      }
    });
  }
}

}  // namespace stereod
