// The integer rules of semi-global aggregation (sgm.hpp, docs/ALGORITHM.md "Semi-global
// aggregation"), defined once for both engines: the CPU matcher (sgm.cpp) and the CUDA kernels
// (cuda/kernels/sgm.cu) include this file, so the integers they produce cannot drift apart.
#pragma once

#include <cstdint>

#include "stereo/confidence.hpp"
#include "stereo/params.hpp"
#include "stereo/pixel_ops.hpp"

namespace stereod {

// L of a candidate that is not allowed: larger than any real L, and small enough that adding a
// penalty cannot overflow (L <= C + P2 < 2^20 for real candidates).
constexpr std::uint32_t kSgmInfinite = 0x3FFFFFFFu;

// P1 or P2 of a per-pixel-cost value for a window of `subwindow` and `best_k`.
STEREOD_HD std::uint32_t sgm_penalty(int per_pixel_cost, int subwindow, int best_k) {
  return static_cast<std::uint32_t>(per_pixel_cost * (1 + best_k) * subwindow * subwindow);
}

// P2 between neighbours whose intensities differ by `step`: max(P1, P2 g / (g + step)), rounded
// down; P2 itself with g = 0.
STEREOD_HD std::uint32_t sgm_jump_penalty(std::uint32_t p1, std::uint32_t p2, int gradient,
                                          int step) {
  if (gradient <= 0) return p2;
  const std::uint64_t scaled = static_cast<std::uint64_t>(p2) *
                               static_cast<std::uint64_t>(gradient) /
                               static_cast<std::uint64_t>(gradient + step);
  const std::uint32_t s = static_cast<std::uint32_t>(scaled);
  return p1 > s ? p1 : s;
}

// L_r(p, d) from C(p, d) (kNoCost: not allowed) and the predecessor's L at d, d - 1 and d + 1
// (kSgmInfinite where q did not try them or they are not allowed), its minimum q_min (finite) and
// the jump q_min + P2(p, q).
STEREOD_HD std::uint32_t sgm_path_cost(std::uint32_t c, std::uint32_t l_same, std::uint32_t l_below,
                                       std::uint32_t l_above, std::uint32_t q_min, std::uint32_t p1,
                                       std::uint32_t jump) {
  const std::uint32_t near = (l_below < l_above ? l_below : l_above) + p1;
  std::uint32_t best = l_same < near ? l_same : near;
  best = best < jump ? best : jump;
  return c == kNoCost ? kSgmInfinite : c + best - q_min;
}

// A path that starts afresh at p (no usable predecessor): L = C.
STEREOD_HD std::uint32_t sgm_start_cost(std::uint32_t c) {
  return c == kNoCost ? kSgmInfinite : c;
}

// What a pixel's L adds to S: nothing for a candidate that is not allowed (S is read only where C
// is allowed).
STEREOD_HD std::uint32_t sgm_sum_term(std::uint32_t l) {
  return l == kSgmInfinite ? 0u : l;
}

// Everything the winner of one pixel decides, from S over its range.
struct SgmWinner {
  int d = kNoDisparity;
  std::uint16_t q4 = kInvalidDisparity;  // with `subpixel`
  std::uint32_t cost_ratio = kNoCost;    // with `subpixel`
  std::uint8_t confidence = 0;
};

// The winner of a pixel with candidates lo..hi: `cost_at(d)` is S(d), kNoCost where d is not
// allowed or outside the range. The window's rules (confidence.hpp, pixel_ops.hpp) on S.
template <typename CostAt>
STEREOD_HD SgmWinner sgm_pick_winner(int lo, int hi, const CostAt& cost_at, int disparities,
                                     int uniqueness, bool subpixel, bool refine_subpixel,
                                     bool want_confidence, bool want_ratio) {
  SgmWinner r;
  std::uint32_t best = kNoCost;
  for (int dd = lo; dd <= hi; ++dd) {
    const std::uint32_t v = cost_at(dd);
    if (v < best) best = v, r.d = dd;  // ties: the smaller d
  }
  r.d = apply_winner_rules(r.d, best, lo, hi, cost_at, kNoCost, uniqueness,
                           want_confidence ? &r.confidence : nullptr);
  if (!subpixel || r.d == kNoDisparity) return r;
  r.q4 = subpixel_disparity(r.d, disparities, best, cost_at, kNoCost, refine_subpixel);
  if (want_ratio) r.cost_ratio = winner_cost_ratio_at(r.d, disparities, best, cost_at, kNoCost);
  return r;
}

}  // namespace stereod
