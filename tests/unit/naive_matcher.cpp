#include "naive_matcher.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <functional>

#include "stereo/adaptive_window.hpp"
#include "stereo/confidence.hpp"
#include "stereo/cost.hpp"
#include "stereo/cross_ops.hpp"
#include "stereo/pixel_ops.hpp"

namespace stereod::testing {
namespace {

struct Views {
  Gray8 gray[2];
  Gray8 ad[2];  // the AD term's input
  Image<std::uint64_t> census[2];
};

Gray8 downsampled(const Gray8& fine) {
  Gray8 out((fine.width() + 1) / 2, (fine.height() + 1) / 2);
  for (int y = 0; y < out.height(); ++y) {
    for (int x = 0; x < out.width(); ++x) {
      out(x, y) = downsample_at(fine.data(), fine.width(), fine.height(), fine.width(), x, y);
    }
  }
  return out;
}

bool foreground(const std::vector<Gray8>& masks, int level, int x, int y) {
  return masks.empty() || masks[static_cast<std::size_t>(level)](x, y) != 0;
}

// Flood fill from each valid pixel; regions under min_size pixels lose their disparity.
void remove_speckles(Disparity16& d, int min_size, int max_step) {
  if (min_size <= 1) return;
  const int w = d.width(), h = d.height();
  std::vector<int> region(d.size(), -1);
  std::vector<int> sizes;
  for (int start = 0; start < w * h; ++start) {
    if (region[start] >= 0 || d.data()[start] == kInvalidDisparity) continue;
    const int id = static_cast<int>(sizes.size());
    sizes.push_back(0);
    std::vector<int> todo{start};
    region[start] = id;
    while (!todo.empty()) {
      const int i = todo.back();
      todo.pop_back();
      ++sizes[id];
      const int x = i % w, y = i / w;
      const int nx[4] = {x - 1, x + 1, x, x}, ny[4] = {y, y, y - 1, y + 1};
      for (int k = 0; k < 4; ++k) {
        if (nx[k] < 0 || ny[k] < 0 || nx[k] >= w || ny[k] >= h) continue;
        const int j = ny[k] * w + nx[k];
        if (region[j] >= 0 || d.data()[j] == kInvalidDisparity) continue;
        if (std::abs(d.data()[j] - d.data()[i]) > max_step) continue;
        region[j] = id;
        todo.push_back(j);
      }
    }
  }
  for (int i = 0; i < w * h; ++i) {
    if (region[i] >= 0 && sizes[region[i]] < min_size) d.data()[i] = kInvalidDisparity;
  }
}

constexpr std::uint32_t kNaiveNone = 0xFFFFFFFFu;

// Semi-global aggregation written out from its definition (docs/ALGORITHM.md "Semi-global
// aggregation"): for every path direction and pixel, L by recursion along the path (memoised), the
// textbook minimum over all of the predecessor's candidates with penalty 0, P1 or P2 by |k - d|.
// `cost[i]` holds pixel i's A over lo[i] .. lo[i] + size - 1 (kNaiveNone where not allowed).
// Returns S per pixel over the same candidates (kNaiveNone where not allowed).
std::vector<std::vector<std::uint32_t>> naive_sgm(
    const StereoParams& p, const Gray8& gray, const std::vector<int>& lo,
    const std::vector<std::vector<std::uint32_t>>& cost) {
  const int w = gray.width(), h = gray.height();
  const int n = p.sgm_cost == SgmCost::kCross
                    ? static_cast<int>(kCrossScale)
                    : (1 + sgm_best_k(p)) * sgm_subwindow(p) * sgm_subwindow(p);
  const std::uint32_t p1 = static_cast<std::uint32_t>(p.sgm_p1 * n);
  const std::uint32_t p2 = static_cast<std::uint32_t>(p.sgm_p2 * n);
  const int dirs8[8][2] = {{1, 0}, {-1, 0}, {0, 1}, {0, -1}, {1, 1}, {-1, -1}, {-1, 1}, {1, -1}};
  std::vector<std::vector<std::uint32_t>> total(cost.size());
  for (std::size_t i = 0; i < cost.size(); ++i) total[i].assign(cost[i].size(), 0);
  for (int r = 0; r < p.sgm_paths; ++r) {
    const int dx = dirs8[r][0], dy = dirs8[r][1];
    std::vector<std::vector<std::uint32_t>> memo(cost.size());
    std::vector<bool> done(cost.size(), false);
    // L along direction r at pixel (x, y).
    std::function<const std::vector<std::uint32_t>&(int, int)> path_cost =
        [&](int x, int y) -> const std::vector<std::uint32_t>& {
      const std::size_t i = static_cast<std::size_t>(y * w + x);
      if (done[i]) return memo[i];
      std::vector<std::uint32_t> l(cost[i].size(), kNaiveNone);
      const int qx = x - dx, qy = y - dy;
      const bool inside = qx >= 0 && qx < w && qy >= 0 && qy < h;
      std::vector<std::uint32_t> lq;
      int qlo = 0;
      std::uint32_t q_min = kNaiveNone;
      if (inside) {
        lq = path_cost(qx, qy);
        qlo = lo[static_cast<std::size_t>(qy * w + qx)];
        for (std::uint32_t v : lq) q_min = std::min(q_min, v);
      }
      std::uint32_t jump = p2;
      if (inside && p.sgm_gradient > 0) {
        const int step = std::abs(int{gray(x, y)} - int{gray(qx, qy)});
        jump = std::max<std::uint32_t>(
            p1, static_cast<std::uint32_t>(std::uint64_t{p2} * p.sgm_gradient /
                                           static_cast<std::uint64_t>(p.sgm_gradient + step)));
      }
      for (std::size_t j = 0; j < l.size(); ++j) {
        if (cost[i][j] == kNaiveNone) continue;
        if (q_min == kNaiveNone) {  // no predecessor with a candidate: the path starts here
          l[j] = cost[i][j];
          continue;
        }
        const int d = lo[i] + static_cast<int>(j);
        std::uint32_t best = kNaiveNone;
        for (std::size_t k = 0; k < lq.size(); ++k) {
          if (lq[k] == kNaiveNone) continue;
          const int step = std::abs(qlo + static_cast<int>(k) - d);
          const std::uint32_t pen = step == 0 ? 0 : (step == 1 ? p1 : jump);
          best = std::min(best, lq[k] + pen);
        }
        l[j] = cost[i][j] + best - q_min;
      }
      memo[i] = l;
      done[i] = true;
      return memo[i];
    };
    for (int y = 0; y < h; ++y) {
      for (int x = 0; x < w; ++x) {
        const auto& l = path_cost(x, y);
        auto& t = total[static_cast<std::size_t>(y * w + x)];
        for (std::size_t j = 0; j < l.size(); ++j)
          t[j] = l[j] == kNaiveNone ? kNaiveNone : t[j] + l[j];
      }
    }
  }
  return total;
}

// Cross-based aggregation from its definition (docs/ALGORITHM.md "Cross-based aggregation"): per
// pixel and candidate, the region listed pixel by pixel. Returns E over each pixel's range
// lo[i] .. hi[i], kNaiveNone where the candidate is not allowed.
std::vector<std::vector<std::uint32_t>> naive_cross(const StereoParams& p, const Gray8& gray,
                                                    const MatchSide& side, const CostTables& costs,
                                                    const std::vector<int>& lo,
                                                    const std::vector<int>& hi) {
  const int w = gray.width(), h = gray.height();
  auto index = [w](int x, int y) { return static_cast<std::size_t>(y * w + x); };
  std::vector<std::vector<std::uint32_t>> e(lo.size());
  for (int it = 0; it < p.cross_iterations; ++it) {
    std::vector<std::vector<std::uint32_t>> next(lo.size());
    for (int y = 0; y < h; ++y) {
      for (int x = 0; x < w; ++x) {
        // The region: the horizontal arms of the vertical arm's pixels (odd iterations the
        // other way round).
        std::vector<std::pair<int, int>> region;
        const bool h_first = it % 2 == 0;
        const int a0 =
            h_first ? -naive_arm(p, gray, x, y, 0, -1) : -naive_arm(p, gray, x, y, -1, 0);
        const int a1 = h_first ? naive_arm(p, gray, x, y, 0, 1) : naive_arm(p, gray, x, y, 1, 0);
        for (int t = a0; t <= a1; ++t) {
          const int ox = h_first ? x : x + t, oy = h_first ? y + t : y;
          const int b0 =
              h_first ? -naive_arm(p, gray, ox, oy, -1, 0) : -naive_arm(p, gray, ox, oy, 0, -1);
          const int b1 =
              h_first ? naive_arm(p, gray, ox, oy, 1, 0) : naive_arm(p, gray, ox, oy, 0, 1);
          for (int u = b0; u <= b1; ++u) {
            region.emplace_back(h_first ? ox + u : ox, h_first ? oy : oy + u);
          }
        }
        const std::size_t i = index(x, y);
        for (int d = lo[i]; d <= hi[i]; ++d) {
          if (!candidate_allowed(side, x, y, d)) {
            next[i].push_back(kNaiveNone);
            continue;
          }
          std::uint64_t sum = 0, count = 0;
          for (const auto& [qx, qy] : region) {
            if (it == 0) {
              sum += naive_subwindow_sum(side, costs, 1, qx, qy, d);
              ++count;
              continue;
            }
            const std::size_t j = index(qx, qy);
            if (d < lo[j] || d > hi[j] || e[j][static_cast<std::size_t>(d - lo[j])] == kNaiveNone)
              continue;
            sum += e[j][static_cast<std::size_t>(d - lo[j])];
            ++count;
          }
          const std::uint64_t scale = it == 0 ? kCrossScale : 1;
          next[i].push_back(static_cast<std::uint32_t>((sum * scale + count / 2) / count));
        }
      }
    }
    e = std::move(next);
  }
  return e;
}

}  // namespace

// Arm length from (x, y) in direction (dx, dy), Mei's rule written out: pixel k joins while it is
// inside the image, k <= l1, its intensity differs from the anchor's and from pixel k - 1's by less
// than tau1, and (beyond l2) from the anchor's by less than tau2.
int naive_arm(const StereoParams& p, const Gray8& g, int x, int y, int dx, int dy) {
  int k = 0;
  while (true) {
    const int nx = x + (k + 1) * dx, ny = y + (k + 1) * dy;
    if (nx < 0 || ny < 0 || nx >= g.width() || ny >= g.height() || k + 1 > p.cross_l1) break;
    const int to_anchor = std::abs(int{g(nx, ny)} - int{g(x, y)});
    const int step = std::abs(int{g(nx, ny)} - int{g(nx - dx, ny - dy)});
    if (to_anchor >= p.cross_tau1 || step >= p.cross_tau1) break;
    if (k + 1 > p.cross_l2 && to_anchor >= p.cross_tau2) break;
    ++k;
  }
  return k;
}

void naive_refine(const StereoParams& p, Disparity16& d, const Gray8& gray,
                  const std::vector<Gray8>& masks, const Image<std::int16_t>& partner_raw,
                  int sign) {
  const int w = d.width(), h = d.height();
  auto hole = [&](const Disparity16& m, int x, int y) {
    return m(x, y) == kInvalidDisparity && foreground(masks, 0, x, y);
  };
  for (int round = 0; round < p.refine_iterations; ++round) {
    const Disparity16 before = d;
    for (int y = 0; y < h; ++y) {
      for (int x = 0; x < w; ++x) {
        // Holes, and with refine_edges valid pixels at a horizontal step that large (with
        // refine_edges_near, a step down to the neighbour only).
        bool edge = false;
        if (before(x, y) != kInvalidDisparity && p.refine_edges > 0) {
          for (const int nx : {x - 1, x + 1}) {
            if (nx < 0 || nx >= w || before(nx, y) == kInvalidDisparity) continue;
            const long step = std::lround(before(nx, y) / 16.0) - std::lround(before(x, y) / 16.0);
            edge =
                edge || -step >= p.refine_edges || (!p.refine_edges_near && step >= p.refine_edges);
          }
        }
        if (!hole(before, x, y) && !edge) continue;
        std::vector<std::pair<int, int>> counts;  // (disparity, votes), in first-seen order
        int votes = 0;
        for (int t = -naive_arm(p, gray, x, y, 0, -1); t <= naive_arm(p, gray, x, y, 0, 1); ++t) {
          for (int u = -naive_arm(p, gray, x, y + t, -1, 0);
               u <= naive_arm(p, gray, x, y + t, 1, 0); ++u) {
            const std::uint16_t v = before(x + u, y + t);
            if (v == kInvalidDisparity) continue;
            const int bin = static_cast<int>(std::lround(v / 16.0));  // halves up
            auto it = std::find_if(counts.begin(), counts.end(),
                                   [bin](const auto& c) { return c.first == bin; });
            if (it == counts.end()) {
              counts.emplace_back(bin, 1);
            } else {
              ++it->second;
            }
            ++votes;
          }
        }
        if (counts.empty()) continue;
        std::pair<int, int> best = counts[0];
        for (const auto& c : counts) {
          if (c.second > best.second || (c.second == best.second && c.first < best.first)) best = c;
        }
        if (votes >= p.refine_votes && best.second * 100 > p.refine_share * votes) {
          d(x, y) = static_cast<std::uint16_t>(best.first * 16);
        }
      }
    }
  }
  if (!p.refine_interpolate) return;
  static const int kSteps[16][2] = {{1, 0},  {2, 1},  {1, 1},  {1, 2},   {0, 1},   {-1, 2},
                                    {-1, 1}, {-2, 1}, {-1, 0}, {-2, -1}, {-1, -1}, {-1, -2},
                                    {0, -1}, {1, -2}, {1, -1}, {2, -1}};
  const Disparity16 voted = d;
  for (int y = 0; y < h; ++y) {
    for (int x = 0; x < w; ++x) {
      if (!hole(voted, x, y)) continue;
      // Occluded unless some partner pixel's winner points back at x (within the tolerance).
      bool occluded = true;
      for (int xp = 0; xp < w; ++xp) {
        const int disparity = sign * (xp - x);
        if (disparity < 0 || disparity >= p.max_disparity) continue;
        const int dp = partner_raw(xp, y);
        if (dp != kNoDisparity && std::abs(dp - disparity) <= p.cross_check_tolerance) {
          occluded = false;
        }
      }
      bool found = false;
      int best_contrast = 0, best_value = 0;
      for (const auto& step : kSteps) {
        for (int k = 1;; ++k) {
          const int qx = x + k * step[0], qy = y + k * step[1];
          if (qx < 0 || qy < 0 || qx >= w || qy >= h || !foreground(masks, 0, qx, qy)) break;
          const int value = voted(qx, qy);
          if (value == kInvalidDisparity) continue;
          const int contrast = occluded ? 0 : std::abs(int{gray(qx, qy)} - int{gray(x, y)});
          if (!found || contrast < best_contrast ||
              (contrast == best_contrast && value < best_value)) {
            found = true;
            best_contrast = contrast;
            best_value = value;
          }
          break;
        }
      }
      if (found) d(x, y) = static_cast<std::uint16_t>(best_value);
    }
  }
}

NaiveResult naive_match(const StereoParams& p, const Gray8& left, const Gray8& right,
                        const std::vector<Gray8>& left_foreground,
                        const std::vector<Gray8>& right_foreground) {
  const int levels = effective_levels(p);
  const CostTables costs = make_cost_tables(p);
  const bool mean_removed = p.ad_mean_radius > 0 && p.cost != MatchingCost::kCensus;
  const std::vector<Gray8>* masks[2] = {&left_foreground, &right_foreground};

  std::vector<Views> lv(static_cast<std::size_t>(levels));
  lv[0].gray[0] = left;
  lv[0].gray[1] = right;
  for (int s = 1; s < levels; ++s) {
    for (int i = 0; i < 2; ++i) lv[s].gray[i] = downsampled(lv[s - 1].gray[i]);
  }
  for (auto& v : lv) {
    for (int i = 0; i < 2; ++i) {
      const Gray8& g = v.gray[i];
      const int w = g.width(), h = g.height();
      v.ad[i] = g;
      v.census[i].resize(w, h);
      for (int y = 0; y < h; ++y) {
        for (int x = 0; x < w; ++x) {
          if (mean_removed)
            v.ad[i](x, y) = mean_removed_at(g.data(), w, h, w, x, y, p.ad_mean_radius);
          if (costs.uses_census) {
            v.census[i](x, y) = census_at(g.data(), w, h, w, x, y, p.census_width, p.census_height);
          }
        }
      }
    }
  }

  NaiveResult out;
  for (auto& w : out.winners) w.resize(static_cast<std::size_t>(levels));
  std::vector<Image<std::int16_t>> checked[2];
  for (auto& c : checked) c.resize(static_cast<std::size_t>(levels));
  Disparity16 q4[2];
  out.confidence.resize(left.width(), left.height(), 0);
  for (int s = levels - 1; s >= 0; --s) {
    const int w = lv[s].gray[0].width(), h = lv[s].gray[0].height();
    const int disparities = level_disparities(p.max_disparity, s);
    for (int v = 0; v < 2; ++v) {
      const int o = 1 - v;
      MatchSide side{lv[s].ad[v].view(),
                     lv[s].ad[o].view(),
                     lv[s].census[v].view(),
                     lv[s].census[o].view(),
                     {},
                     v == 0 ? -1 : +1};
      if (!costs.uses_census) side.ref_census = side.tgt_census = {};
      Gray8 tgt_mask;
      if (!masks[o]->empty()) {
        tgt_mask = (*masks[o])[static_cast<std::size_t>(s)];
        side.tgt_foreground = tgt_mask.view();
      }
      Image<std::int16_t>& win = out.winners[v][static_cast<std::size_t>(s)];
      win.resize(w, h, kNoDisparity);
      if (s == 0) q4[v].resize(w, h, kInvalidDisparity);
      // Every pixel's range (hi < lo: not matched), then, with aggregation sgm, S over it.
      std::vector<int> los(static_cast<std::size_t>(w * h), 1), his(los.size(), 0);
      for (int y = 0; y < h; ++y) {
        for (int x = 0; x < w; ++x) {
          if (!foreground(*masks[v], s, x, y)) continue;
          int lo = 0, hi = disparities - 1;
          if (s < levels - 1) {
            const auto& parent = checked[v][static_cast<std::size_t>(s + 1)];
            parent_range([&](int u, int t) { return static_cast<int>(parent(u, t)); },
                         parent.width(), parent.height(), x, y, p.parent_radius, disparities, lo,
                         hi);
          }
          los[static_cast<std::size_t>(y * w + x)] = lo;
          his[static_cast<std::size_t>(y * w + x)] = hi;
        }
      }
      const bool sgm = p.aggregation == Aggregation::kSgm;
      const bool cross = p.aggregation == Aggregation::kCross;
      std::vector<std::vector<std::uint32_t>> sums;
      if (cross || (sgm && p.sgm_cost == SgmCost::kCross)) {
        sums = naive_cross(p, lv[s].gray[v], side, costs, los, his);
        if (sgm) sums = naive_sgm(p, lv[s].gray[v], los, sums);
      } else if (sgm) {
        std::vector<std::vector<std::uint32_t>> a(los.size());
        for (int y = 0; y < h; ++y) {
          for (int x = 0; x < w; ++x) {
            const std::size_t i = static_cast<std::size_t>(y * w + x);
            for (int d = los[i]; d <= his[i]; ++d) {
              a[i].push_back(
                  candidate_allowed(side, x, y, d)
                      ? naive_aggregated_cost(side, costs, sgm_subwindow(p), sgm_best_k(p), x, y, d)
                      : kNaiveNone);
            }
          }
        }
        sums = naive_sgm(p, lv[s].gray[v], los, a);
      }
      for (int y = 0; y < h; ++y) {
        for (int x = 0; x < w; ++x) {
          if (!foreground(*masks[v], s, x, y)) continue;
          const std::size_t i = static_cast<std::size_t>(y * w + x);
          const int lo = los[i], hi = his[i];
          // The window compares A of any allowed candidate (even just outside the range, for the
          // subpixel fit); sgm and cross have their costs only over the range.
          auto usable = [&](int d) {
            if (sgm || cross)
              return d >= lo && d <= hi && sums[i][static_cast<std::size_t>(d - lo)] != kNaiveNone;
            return candidate_allowed(side, x, y, d);
          };
          auto cost = [&](int d) {
            if (sgm || cross) return sums[i][static_cast<std::size_t>(d - lo)];
            return naive_aggregated_cost(side, costs, p.subwindow, p.best_k, x, y, d);
          };
          int best_d = kNoDisparity;
          std::uint32_t best = 0;
          for (int d = lo; d <= hi; ++d) {
            if (!usable(d)) continue;
            const std::uint32_t a = cost(d);
            if (best_d == kNoDisparity || a < best) best = a, best_d = d;
          }
          if (best_d != kNoDisparity && p.uniqueness > 0) {
            for (int d = lo; d <= hi; ++d) {
              if (std::abs(d - best_d) <= 1 || !usable(d)) continue;
              if (std::uint64_t{cost(d)} * (100 - p.uniqueness) < std::uint64_t{best} * 100) {
                best_d = kNoDisparity;
                break;
              }
            }
          }
          win(x, y) = static_cast<std::int16_t>(best_d);
          if (s == 0 && v == 0 && best_d != kNoDisparity) {
            bool has_second = false;
            std::uint32_t second = 0;
            for (int d = lo; d <= hi; ++d) {
              if (std::abs(d - best_d) <= 1 || !usable(d)) continue;
              const std::uint32_t a = cost(d);
              if (!has_second || a < second) second = a;
              has_second = true;
            }
            out.confidence(x, y) = match_confidence(best, second, has_second);
          }
          if (s == 0 && best_d != kNoDisparity) {
            // `subpixel` off: exactly 16 d. On: the parabola where both neighbours are allowed.
            int offset = 0;
            if (p.subpixel && best_d >= 1 && best_d + 1 < disparities && usable(best_d - 1) &&
                usable(best_d + 1)) {
              offset = subpixel_offset(cost(best_d - 1), best, cost(best_d + 1));
            }
            q4[v](x, y) = static_cast<std::uint16_t>(
                clamp_int(kSubpixelScale * best_d + offset, 0, kSubpixelScale * (disparities - 1)));
          }
        }
      }
    }
    // Cross-check: each view's winner must be matched back within the tolerance.
    for (int v = 0; v < 2; ++v) {
      const auto& mine = out.winners[v][static_cast<std::size_t>(s)];
      const auto& other = out.winners[1 - v][static_cast<std::size_t>(s)];
      auto& c = checked[v][static_cast<std::size_t>(s)];
      c = mine;
      if (!p.cross_check) continue;
      for (int y = 0; y < h; ++y) {
        for (int x = 0; x < w; ++x) {
          const int d = mine(x, y);
          if (d == kNoDisparity) continue;
          const int ox = x + (v == 0 ? -d : d);
          const bool ok = ox >= 0 && ox < w && other(ox, y) != kNoDisparity &&
                          std::abs(other(ox, y) - d) <= p.cross_check_tolerance;
          if (!ok) c(x, y) = kNoDisparity;
        }
      }
    }
  }

  const int w = left.width(), h = left.height();
  for (int v = 0; v < 2; ++v) {
    Disparity16& d = q4[v];
    for (int y = 0; y < h; ++y) {
      for (int x = 0; x < w; ++x) {
        if (checked[v][0](x, y) == kNoDisparity) d(x, y) = kInvalidDisparity;
      }
    }
    remove_speckles(d, p.speckle_size, p.speckle_range * kSubpixelScale);
    // The matcher's own disparities: the confidence is 0 where the refinement gave or changed one.
    Disparity16 confident = d;
    if (p.refine) {
      naive_refine(p, d, v == 0 ? left : right, *masks[v], out.winners[1 - v][0], v == 0 ? -1 : 1);
    }
    Disparity16 m = d;
    if (p.median) {
      for (int y = 0; y < h; ++y) {
        for (int x = 0; x < w; ++x) m(x, y) = median3x3_at(d.data(), w, h, x, y);
      }
    }
    if (v == 0) {  // confidence only where the matcher's own disparity survived the filters
      for (int y = 0; y < h; ++y) {
        for (int x = 0; x < w; ++x) {
          if (confident(x, y) == kInvalidDisparity || d(x, y) != confident(x, y) ||
              m(x, y) == kInvalidDisparity) {
            out.confidence(x, y) = 0;
          }
        }
      }
    }
    if (p.fill) {
      const Gray8& gray = v == 0 ? left : right;
      for (int y = 0; y < h; ++y) {
        fill_holes_row(
            m.row(y), w, gray.row(y), masks[v]->empty() ? nullptr : (*masks[v])[0].row(y),
            p.fill_mode == FillMode::kBackground, p.fill_interpolate_max * kSubpixelScale);
      }
    }
    (v == 0 ? out.left : out.right) = m;
  }
  return out;
}

}  // namespace stereod::testing
