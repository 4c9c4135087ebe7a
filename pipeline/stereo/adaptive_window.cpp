#include "stereo/adaptive_window.hpp"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <functional>

#include "stereo/pixel_ops.hpp"
#include "thread_pool.hpp"

namespace stereod {
namespace {

// The 8 neighbouring sub-windows, in units of s; the centre one is handled on its own.
constexpr int kNeighbourDx[8] = {-1, 0, 1, -1, 1, -1, 0, 1};
constexpr int kNeighbourDy[8] = {-1, -1, -1, 0, 0, 1, 1, 1};

struct PixelCost {
  const MatchSide& side;
  const CostTables& costs;
  bool census;

  std::uint32_t operator()(int x, int y, int d) const {
    const int tx = x + side.direction * d;
    if (tx < 0 || tx >= side.ref.width) return costs.outside;
    const std::uint64_t a = census ? side.ref_census(x, y) : 0;
    const std::uint64_t b = census ? side.tgt_census(tx, y) : 0;
    return pixel_cost(costs, side.ref(x, y), side.tgt(tx, y), a, b);
  }
};

std::uint32_t box_sum(const PixelCost& pc, int subwindow, int cx, int cy, int d) {
  const int h = subwindow / 2;
  const int w = pc.side.ref.width, ht = pc.side.ref.height;
  std::uint32_t sum = 0;
  // Inside the image, with every partner inside too: no clamping and no range checks (the same
  // sum, computed directly from the rows).
  const int lo_t = cx - h + pc.side.direction * d, hi_t = cx + h + pc.side.direction * d;
  if (cx - h >= 0 && cx + h < w && cy - h >= 0 && cy + h < ht && lo_t >= 0 && hi_t < w) {
    const CostTables& t = pc.costs;
    for (int v = -h; v <= h; ++v) {
      const std::uint8_t* ref = pc.side.ref.row(cy + v) + cx - h;
      const std::uint8_t* tgt = pc.side.tgt.row(cy + v) + lo_t;
      if (pc.census) {
        const std::uint64_t* rc = pc.side.ref_census.row(cy + v) + cx - h;
        const std::uint64_t* tc = pc.side.tgt_census.row(cy + v) + lo_t;
        for (int u = 0; u < subwindow; ++u) sum += pixel_cost(t, ref[u], tgt[u], rc[u], tc[u]);
      } else {
        for (int u = 0; u < subwindow; ++u) sum += pixel_cost(t, ref[u], tgt[u], 0, 0);
      }
    }
    return sum;
  }
  for (int v = -h; v <= h; ++v) {
    const int y = clamp_int(cy + v, 0, ht - 1);
    for (int u = -h; u <= h; ++u) sum += pc(clamp_int(cx + u, 0, w - 1), y, d);
  }
  return sum;
}

}  // namespace

bool candidate_allowed(const MatchSide& side, int x, int y, int d) {
  const int tx = x + side.direction * d;
  if (tx < 0 || tx >= side.ref.width) return false;
  return side.tgt_foreground.empty() || side.tgt_foreground(tx, y) != 0;
}

std::uint32_t naive_subwindow_sum(const MatchSide& side, const CostTables& costs, int subwindow,
                                  int cx, int cy, int d) {
  // The definition, clamping every coordinate: the reference the tests hold box_sum to.
  const PixelCost pc{side, costs, costs.uses_census};
  const int h = subwindow / 2;
  std::uint32_t sum = 0;
  for (int v = -h; v <= h; ++v) {
    for (int u = -h; u <= h; ++u) {
      sum += pc(clamp_int(cx + u, 0, side.ref.width - 1), clamp_int(cy + v, 0, side.ref.height - 1),
                d);
    }
  }
  return sum;
}

std::uint32_t naive_aggregated_cost(const MatchSide& side, const CostTables& costs, int subwindow,
                                    int best_k, int x, int y, int d) {
  std::vector<std::uint32_t> nb;
  for (int j = 0; j < 8; ++j) {
    nb.push_back(naive_subwindow_sum(side, costs, subwindow, x + subwindow * kNeighbourDx[j],
                                     y + subwindow * kNeighbourDy[j], d));
  }
  std::sort(nb.begin(), nb.end());
  std::uint32_t total = naive_subwindow_sum(side, costs, subwindow, x, y, d);
  for (int i = 0; i < best_k; ++i) total += nb[i];
  return total;
}

void AdaptiveWindowMatcher::compute_extended_ranges(const SearchRanges& ranges,
                                                    const LevelMatchOptions& o, ThreadPool* pool) {
  const int w = ranges.lo.width(), h = ranges.lo.height();
  const int s = o.subwindow;
  const int pad = o.subpixel ? 1 : 0;  // the parabola also needs d - 1 and d + 1
  ext_lo_.ensure_size(w, h);
  ext_hi_.ensure_size(w, h);
  // A pixel's sub-window sum is read by itself and by the 8 pixels whose neighbour it is.
  for_rows(pool, h, [&](int y0, int y1) {
    for (int y = y0; y < y1; ++y) {
      for (int x = 0; x < w; ++x) {
        int lo = 1 << 30, hi = -1;
        for (int j = -1; j < 8; ++j) {
          const int px = j < 0 ? x : x - s * kNeighbourDx[j];
          const int py = j < 0 ? y : y - s * kNeighbourDy[j];
          if (px < 0 || px >= w || py < 0 || py >= h || !ranges.matched(px, py)) continue;
          lo = std::min(lo, ranges.lo(px, py) - pad);
          hi = std::max(hi, ranges.hi(px, py) + pad);
        }
        ext_lo_(x, y) = static_cast<std::int16_t>(std::max(lo, 0));
        ext_hi_(x, y) = static_cast<std::int16_t>(std::min(hi, o.disparities - 1));
      }
    }
  });
  offsets_.resize(static_cast<std::size_t>(w) * h + 1);
  std::int64_t total = 0;
  for (int i = 0; i < w * h; ++i) {
    offsets_[i] = total;
    total += std::max(0, ext_hi_.data()[i] - ext_lo_.data()[i] + 1);
  }
  offsets_[static_cast<std::size_t>(w) * h] = total;
  sums_.resize(static_cast<std::size_t>(total));
}

void AdaptiveWindowMatcher::compute_subwindow_sums(const MatchSide& side, const CostTables& costs,
                                                   const LevelMatchOptions& o, ThreadPool* pool) {
  const int w = side.ref.width, h = side.ref.height;
  const PixelCost pc{side, costs, costs.uses_census};
  for_rows(pool, h, [&](int y0, int y1) {
    for (int y = y0; y < y1; ++y) {
      for (int x = 0; x < w; ++x) {
        const int i = y * w + x;
        std::uint16_t* out = sums_.data() + offsets_[i];
        for (int d = ext_lo_.data()[i]; d <= ext_hi_.data()[i]; ++d) {
          *out++ = static_cast<std::uint16_t>(box_sum(pc, o.subwindow, x, y, d));
        }
      }
    }
  });
}

void AdaptiveWindowMatcher::match(const MatchSide& side, const SearchRanges& ranges,
                                  const CostTables& costs, const LevelMatchOptions& o,
                                  Image<std::int16_t>& disparity, Image<std::uint16_t>* q4,
                                  ThreadPool* pool) {
  const int w = side.ref.width, h = side.ref.height;
  const int s = o.subwindow;
  compute_extended_ranges(ranges, o, pool);
  compute_subwindow_sums(side, costs, o, pool);
  disparity.ensure_size(w, h);
  if (q4) q4->ensure_size(w, h);
  const PixelCost pc{side, costs, costs.uses_census};
  std::atomic<long long> evaluated{0};

  for_rows(pool, h, [&](int y0, int y1) {
    std::vector<std::uint32_t> cost_of;  // A over the pixel's range, for the uniqueness test
    long long local_evaluated = 0;
    // S at (cx, cy): from the table when the centre is inside the image, else computed directly.
    auto sum_at = [&](int cx, int cy, int d) -> std::uint32_t {
      if (cx < 0 || cx >= w || cy < 0 || cy >= h) return box_sum(pc, s, cx, cy, d);
      const int i = cy * w + cx;
      return sums_[offsets_[i] + (d - ext_lo_.data()[i])];
    };
    auto aggregated = [&](int x, int y, int d) {
      std::uint32_t nb[8];
      for (int j = 0; j < 8; ++j)
        nb[j] = sum_at(x + s * kNeighbourDx[j], y + s * kNeighbourDy[j], d);
      return sum_at(x, y, d) + sum_smallest_k_of_8(nb, o.best_k);
    };
    for (int y = y0; y < y1; ++y) {
      for (int x = 0; x < w; ++x) {
        std::int16_t best_d = kNoDisparity;
        std::uint16_t best_q4 = kInvalidDisparity;
        const int lo = ranges.lo(x, y), hi = ranges.hi(x, y);
        if (hi >= lo) {
          cost_of.assign(static_cast<std::size_t>(hi - lo + 1), UINT32_MAX);
          std::uint32_t best = UINT32_MAX;
          for (int d = lo; d <= hi; ++d) {
            if (!candidate_allowed(side, x, y, d)) continue;
            const std::uint32_t a = aggregated(x, y, d);
            ++local_evaluated;
            cost_of[d - lo] = a;
            if (a < best) {
              best = a;
              best_d = static_cast<std::int16_t>(d);
            }
          }
          if (best_d != kNoDisparity && o.uniqueness > 0) {
            for (int d = lo; d <= hi; ++d) {
              const std::uint32_t a = cost_of[d - lo];
              if (a == UINT32_MAX || std::abs(d - best_d) <= 1) continue;
              if (static_cast<std::uint64_t>(a) * (100 - o.uniqueness) <
                  static_cast<std::uint64_t>(best) * 100) {
                best_d = kNoDisparity;
                break;
              }
            }
          }
          if (best_d != kNoDisparity && q4) {
            int offset = 0;
            const int d = best_d;
            if (d >= 1 && d + 1 < o.disparities && candidate_allowed(side, x, y, d - 1) &&
                candidate_allowed(side, x, y, d + 1)) {
              const std::uint32_t cm = d - 1 >= lo ? cost_of[d - 1 - lo] : aggregated(x, y, d - 1);
              const std::uint32_t cp = d + 1 <= hi ? cost_of[d + 1 - lo] : aggregated(x, y, d + 1);
              offset = subpixel_offset(cm, best, cp);
            }
            const int v = kSubpixelScale * d + offset;
            best_q4 =
                static_cast<std::uint16_t>(clamp_int(v, 0, kSubpixelScale * (o.disparities - 1)));
          }
        }
        disparity(x, y) = best_d;
        if (q4) (*q4)(x, y) = best_q4;
      }
    }
    evaluated += local_evaluated;
  });
  candidates_ = evaluated.load();
}

}  // namespace stereod
