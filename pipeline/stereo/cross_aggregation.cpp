#include "stereo/cross_aggregation.hpp"

#include <algorithm>
#include <limits>
#include <utility>

#include "cpu_features.hpp"
#include "stereo/adaptive_window.hpp"
#include "stereo/cross_ops.hpp"
#include "thread_pool.hpp"

namespace stereod {
namespace {

CrossAxis horizontal(const CrossArms& a) {
  return {&a.left, &a.right, 1, 0};
}
CrossAxis vertical(const CrossArms& a) {
  return {&a.up, &a.down, 0, 1};
}

// hull(q) = the hull of range(p) over every p whose `outer` arm covers q; empty (hi < lo) where
// none does. Scattered line by line (a column for a vertical axis): each line is one task.
void needed_hulls(const SearchRanges& ranges, const CrossAxis& outer, SearchRanges& hull,
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

namespace {

// One step k of the arms of a line of pixels: anchor[i] is pixel i's intensity, cand[i] that of
// the pixel k along its arm and last[i] that of pixel k - 1 (the anchor for k = 1). A pixel whose
// arm still reaches k - 1 (len[i] == k - 1) grows by one where Mei's rule (cross_arm_length in
// cross_ops.hpp) lets pixel k join. Written without branches on bytes, so that the compiler runs
// it on 16 or 32 pixels at once: an arm is found in l1 such steps over whole lines instead of a
// walk per pixel that stops at an unpredictable point.
template <bool kFar>
[[gnu::always_inline]] inline void arm_step(const std::uint8_t* anchor, const std::uint8_t* cand,
                                            const std::uint8_t* last, std::uint8_t* len, int n,
                                            std::uint8_t reached, std::uint8_t tau1,
                                            std::uint8_t tau2) {
  for (int i = 0; i < n; ++i) {
    const std::uint8_t a = anchor[i], v = cand[i], l = last[i];
    const std::uint8_t to_anchor = static_cast<std::uint8_t>(v > a ? v - a : a - v);
    const std::uint8_t step = static_cast<std::uint8_t>(v > l ? v - l : l - v);
    bool joins = len[i] == reached && to_anchor < tau1 && step < tau1;
    if (kFar) joins = joins && to_anchor < tau2;
    len[i] = static_cast<std::uint8_t>(len[i] + (joins ? 1 : 0));
  }
}

// The four arms of rows [y0, y1). Horizontal arms step along the row itself (the pixel k to the
// left of x is row[x - k]); vertical ones along the rows above and below.
[[gnu::always_inline]] inline void arms_of_rows(ImageView<const std::uint8_t> gray,
                                                const CrossOptions& o, CrossArms& arms, int y0,
                                                int y1) {
  const int w = gray.width, h = gray.height;
  const auto tau1 = static_cast<std::uint8_t>(o.tau1), tau2 = static_cast<std::uint8_t>(o.tau2);
  auto step = [&](const std::uint8_t* anchor, const std::uint8_t* cand, const std::uint8_t* last,
                  std::uint8_t* len, int n, int k) {
    const auto reached = static_cast<std::uint8_t>(k - 1);
    if (k > o.l2) {
      arm_step<true>(anchor, cand, last, len, n, reached, tau1, tau2);
    } else {
      arm_step<false>(anchor, cand, last, len, n, reached, tau1, tau2);
    }
  };
  for (int y = y0; y < y1; ++y) {
    const std::uint8_t* g = gray.row(y);
    std::uint8_t* left = arms.left.row(y);
    std::uint8_t* right = arms.right.row(y);
    std::uint8_t* up = arms.up.row(y);
    std::uint8_t* down = arms.down.row(y);
    for (int x = 0; x < w; ++x) left[x] = right[x] = up[x] = down[x] = 0;
    // Pixel x's left arm can reach k only for x >= k, its right arm only for x < w - k.
    for (int k = 1; k <= std::min(o.l1, w - 1); ++k) {
      step(g + k, g, g + 1, left + k, w - k, k);
      step(g, g + k, g + k - 1, right, w - k, k);
    }
    for (int k = 1; k <= std::min(o.l1, y); ++k) {
      step(g, gray.row(y - k), gray.row(y - k + 1), up, w, k);
    }
    for (int k = 1; k <= std::min(o.l1, h - 1 - y); ++k) {
      step(g, gray.row(y + k), gray.row(y + k - 1), down, w, k);
    }
  }
}

void arms_of_rows_baseline(ImageView<const std::uint8_t> gray, const CrossOptions& o,
                           CrossArms& arms, int y0, int y1) {
  arms_of_rows(gray, o, arms, y0, y1);
}

#if STEREOD_X86_AVX2_PATHS
STEREOD_TARGET_AVX2 void arms_of_rows_avx2(ImageView<const std::uint8_t> gray,
                                           const CrossOptions& o, CrossArms& arms, int y0, int y1) {
  arms_of_rows(gray, o, arms, y0, y1);
}
#endif

}  // namespace

void cross_arms(ImageView<const std::uint8_t> gray, const CrossOptions& o, CrossArms& arms,
                ThreadPool* pool) {
  const int w = gray.width, h = gray.height;
  for (Gray8* a : {&arms.left, &arms.right, &arms.up, &arms.down}) a->ensure_size(w, h);
  auto rows = arms_of_rows_baseline;
#if STEREOD_X86_AVX2_PATHS
  if (wide_vectors()) rows = arms_of_rows_avx2;
#endif
  for_rows(pool, h, [&](int y0, int y1) { rows(gray, o, arms, y0, y1); });
}

namespace {

// pc(x, y, d) of one row for x in [0, w), into out[x]: the table lookups where the partner is
// inside the image, the outside cost elsewhere.
void row_pixel_costs(const MatchSide& side, const CostTables& costs, int y, int d,
                     std::uint32_t* out) {
  const int w = side.ref.width;
  const int shift = side.direction * d;
  // Partners inside for x + shift in [0, w).
  const int x0 = std::max(0, -shift), x1 = std::min(w, w - shift);
  const std::uint8_t* ref = side.ref.row(y);
  const std::uint8_t* tgt = side.tgt.row(y);
  const bool census = !side.ref_census.empty();
  const std::uint64_t* ref_census = census ? side.ref_census.row(y) : nullptr;
  const std::uint64_t* tgt_census = census ? side.tgt_census.row(y) : nullptr;
  for (int x = 0; x < std::min(x0, w); ++x) out[x] = costs.outside;
  for (int x = x0; x < x1; ++x) {
    const int diff = ref[x] > tgt[x + shift] ? ref[x] - tgt[x + shift] : tgt[x + shift] - ref[x];
    const int bits = census ? popcount64(ref_census[x] ^ tgt_census[x + shift]) : 0;
    out[x] = std::uint32_t{costs.ad[diff]} + costs.census[bits];
  }
  for (int x = std::max(x1, 0); x < w; ++x) out[x] = costs.outside;
}

}  // namespace

void CrossAggregator::inner_pixel_pass(const MatchSide& side, const CostTables& costs,
                                       const CrossArms& arms, ThreadPool* pool) {
  const int w = hull_.lo.width(), h = hull_.lo.height();
  for_rows(pool, h, [&](int y0, int y1) {
    std::vector<std::uint32_t> prefix, row;
    row.resize(static_cast<std::size_t>(w));
    for (int y = y0; y < y1; ++y) {
      int rmin = std::numeric_limits<int>::max(), rmax = std::numeric_limits<int>::min();
      for (int x = 0; x < w; ++x) {
        if (hull_.hi(x, y) < hull_.lo(x, y)) continue;
        rmin = std::min(rmin, int{hull_.lo(x, y)});
        rmax = std::max(rmax, int{hull_.hi(x, y)});
      }
      if (rmax < rmin) continue;
      // Per disparity of the row's hull, the prefix sums of pc along the row: each arm's sum is
      // then one difference, whatever its length.
      const std::size_t stride = static_cast<std::size_t>(w) + 1;
      prefix.resize(static_cast<std::size_t>(rmax - rmin + 1) * stride);
      for (int d = rmin; d <= rmax; ++d) {
        std::uint32_t* p = prefix.data() + static_cast<std::size_t>(d - rmin) * stride;
        row_pixel_costs(side, costs, y, d, row.data());
        p[0] = 0;
        for (int x = 0; x < w; ++x) p[x + 1] = p[x] + row[static_cast<std::size_t>(x)];
      }
      for (int x = 0; x < w; ++x) {
        const int nlo = hull_.lo(x, y), nhi = hull_.hi(x, y);
        std::uint32_t* sum = partial_.at(x, y);
        const int a = x - arms.left(x, y), b = x + arms.right(x, y) + 1;
        for (int d = nlo; d <= nhi; ++d) {
          const std::uint32_t* p = prefix.data() + static_cast<std::size_t>(d - rmin) * stride;
          sum[d - nlo] = p[b] - p[a];
        }
      }
    }
  });
}

void CrossAggregator::inner_volume_pass(const SearchRanges& ranges, const CrossAxis& inner,
                                        ThreadPool* pool) {
  const int w = hull_.lo.width(), h = hull_.lo.height();
  for_rows(pool, h, [&](int y0, int y1) {
    for (int y = y0; y < y1; ++y) {
      for (int x = 0; x < w; ++x) {
        const int nlo = hull_.lo(x, y), nhi = hull_.hi(x, y);
        if (nhi < nlo) continue;
        const int n = nhi - nlo + 1;
        std::uint32_t* sum = partial_.at(x, y);
        std::uint16_t* count = counts_.data() + partial_.offset(x, y);
        std::fill(sum, sum + n, 0u);
        std::fill(count, count + n, std::uint16_t{0});
        for (int t = -(*inner.neg)(x, y); t <= (*inner.pos)(x, y); ++t) {
          const int qx = x + t * inner.dx, qy = y + t * inner.dy;
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
}

void CrossAggregator::outer_pass(const MatchSide& side, const SearchRanges& ranges,
                                 const CrossAxis& inner, const CrossAxis& outer, bool first,
                                 CostVolume& volume, ThreadPool* pool) {
  const int w = ranges.lo.width(), h = ranges.lo.height();
  // Line by line along the outer axis (a column for a vertical one): per disparity of the line's
  // hull, prefix sums of the inner sums (and counts) along the line, so that each pixel's outer
  // arm is one difference. Where a disparity is outside a pixel's hull the prefix adds 0: no arm
  // that needs that disparity covers that pixel (the hull is made so).
  const int lines = outer.dx ? h : w, length = outer.dx ? w : h;
  const std::size_t stride = static_cast<std::size_t>(length) + 1;
  for_rows(pool, lines, [&](int l0, int l1) {
    std::vector<std::uint32_t> sums, counts, region;
    region.resize(stride);
    for (int l = l0; l < l1; ++l) {
      auto at = [&](int i, int& x, int& y) {
        x = outer.dx ? i : l;
        y = outer.dx ? l : i;
      };
      int x, y;
      int lmin = std::numeric_limits<int>::max(), lmax = std::numeric_limits<int>::min();
      for (int i = 0; i < length; ++i) {
        at(i, x, y);
        if (hull_.hi(x, y) < hull_.lo(x, y)) continue;
        lmin = std::min(lmin, int{hull_.lo(x, y)});
        lmax = std::max(lmax, int{hull_.hi(x, y)});
      }
      if (lmax < lmin) continue;
      const std::size_t cells = static_cast<std::size_t>(lmax - lmin + 1) * stride;
      sums.assign(cells, 0u);
      if (!first) counts.assign(cells, 0u);
      // Inner sums into their disparity's row at i + 1, then the running sums.
      for (int i = 0; i < length; ++i) {
        at(i, x, y);
        region[static_cast<std::size_t>(i) + 1] =
            region[static_cast<std::size_t>(i)] + 1u + (*inner.neg)(x, y) + (*inner.pos)(x, y);
        const int nlo = hull_.lo(x, y), nhi = hull_.hi(x, y);
        const std::uint32_t* part = partial_.at(x, y);
        const std::uint16_t* c = first ? nullptr : counts_.data() + partial_.offset(x, y);
        for (int d = nlo; d <= nhi; ++d) {
          const std::size_t cell = static_cast<std::size_t>(d - lmin) * stride + i + 1;
          sums[cell] = part[d - nlo];
          if (c) counts[cell] = c[d - nlo];
        }
      }
      region[0] = 0;
      for (int d = lmin; d <= lmax; ++d) {
        std::uint32_t* s = sums.data() + static_cast<std::size_t>(d - lmin) * stride;
        for (std::size_t i = 1; i < stride; ++i) s[i] += s[i - 1];
        if (first) continue;
        std::uint32_t* c = counts.data() + static_cast<std::size_t>(d - lmin) * stride;
        for (std::size_t i = 1; i < stride; ++i) c[i] += c[i - 1];
      }
      for (int i = 0; i < length; ++i) {
        at(i, x, y);
        const int lo = ranges.lo(x, y), hi = ranges.hi(x, y);
        const std::size_t a = static_cast<std::size_t>(i - (*outer.neg)(x, y));
        const std::size_t b = static_cast<std::size_t>(i + (*outer.pos)(x, y)) + 1;
        std::uint32_t* out = volume.at(x, y);
        for (int d = lo; d <= hi; ++d) {
          const std::size_t row = static_cast<std::size_t>(d - lmin) * stride;
          const std::uint32_t sum = sums[row + b] - sums[row + a];
          const std::uint32_t count =
              first ? region[b] - region[a] : counts[row + b] - counts[row + a];
          out[d - lo] = candidate_allowed(side, x, y, d)
                            ? cross_average(sum, count, first ? kCrossScale : 1u)
                            : kNoCost;
        }
      }
    }
  });
}

void CrossAggregator::aggregate(const MatchSide& side, const CostTables& costs,
                                const SearchRanges& ranges, const CrossArms& arms, int iterations,
                                CostVolume& volume, ThreadPool* pool) {
  for (int k = 0; k < iterations; ++k) {
    const bool first = k == 0;
    if (!first) {
      std::swap(previous_, volume);
      volume.layout(ranges, Aggregation::kCross);
    }
    const CrossAxis inner = k % 2 == 0 ? horizontal(arms) : vertical(arms);
    const CrossAxis outer = k % 2 == 0 ? vertical(arms) : horizontal(arms);
    needed_hulls(ranges, outer, hull_, pool);
    partial_.layout(hull_, Aggregation::kCross);
    // Inner pass: at every pixel q, over hull(q), the sum along q's inner arm (and, after the
    // first iteration, how many values it holds); then p's sums of those along its outer arm.
    if (first) {
      inner_pixel_pass(side, costs, arms, pool);
    } else {
      counts_.resize(partial_.size());
      inner_volume_pass(ranges, inner, pool);
    }
    outer_pass(side, ranges, inner, outer, first, volume, pool);
  }
}

}  // namespace stereod
