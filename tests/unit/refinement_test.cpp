// The multi-step refinement stage (stereo/refinement.hpp) on its own: against the naive one
// (naive_matcher.hpp) on random maps with many holes, and its rules case by case.
#include <gtest/gtest.h>

#include <cstdlib>

#include "cpu_cases.hpp"
#include "cpu_features.hpp"
#include "naive_matcher.hpp"
#include "stereo/refine_ops.hpp"
#include "stereo/refinement.hpp"
#include "thread_pool.hpp"

using namespace stereod;
using namespace stereod::testing;

namespace {

// Gray levels in a few flat patches with noise, so that arms have all lengths.
Gray8 patchy_gray(CaseRng& rng, int w, int h) {
  Gray8 g(w, h);
  const int cell = rng.range(2, 12), noise = rng.range(0, 20);
  for (int y = 0; y < h; ++y) {
    for (int x = 0; x < w; ++x) {
      const int base = ((x / cell) * 37 + (y / cell) * 91) % 200;
      g(x, y) = static_cast<std::uint8_t>(base + rng.range(0, noise));
    }
  }
  return g;
}

struct StageCase {
  StereoParams p;
  Gray8 gray;
  std::vector<Gray8> masks;
  Disparity16 map;
  Image<std::int16_t> partner;
  int sign = -1;
};

StageCase random_stage_case(std::uint64_t seed) {
  CaseRng rng(seed);
  StageCase c;
  const int w = rng.range(8, 60), h = rng.range(8, 40);
  c.p.max_disparity = rng.range(1, w - 1);
  random_cross_arms(rng, c.p, 16);
  c.p.cross_check_tolerance = rng.range(0, 2);
  random_refinement(rng, c.p);
  c.gray = patchy_gray(rng, w, h);
  c.sign = rng.chance(50) ? -1 : 1;
  // A map of a few disparity levels (and some fractions), with holes in runs and blobs.
  const int holes = rng.range(5, 70);
  const int levels = rng.range(1, 6);
  c.map.resize(w, h);
  for (int y = 0; y < h; ++y) {
    for (int x = 0; x < w; ++x) {
      const int d = rng.range(0, levels - 1) * (c.p.max_disparity - 1) / std::max(1, levels - 1);
      const int frac = rng.chance(30) ? rng.range(0, 15) : 0;
      c.map(x, y) = static_cast<std::uint16_t>(
          std::min(d * kSubpixelScale + frac, (c.p.max_disparity - 1) * kSubpixelScale));
      if (rng.chance(holes)) c.map(x, y) = kInvalidDisparity;
    }
  }
  c.partner.resize(w, h);
  for (int y = 0; y < h; ++y) {
    for (int x = 0; x < w; ++x) {
      c.partner(x, y) = rng.chance(20)
                            ? kNoDisparity
                            : static_cast<std::int16_t>(rng.range(0, c.p.max_disparity - 1));
    }
  }
  if (rng.chance(40)) {
    c.masks.resize(1);
    c.masks[0].resize(w, h, 1);
    const int boxes = rng.range(1, 4);
    for (int b = 0; b < boxes; ++b) {
      const int x0 = rng.range(0, w - 1), y0 = rng.range(0, h - 1);
      for (int y = y0; y < std::min(h, y0 + rng.range(1, h)); ++y) {
        for (int x = x0; x < std::min(w, x0 + rng.range(1, w)); ++x) c.masks[0](x, y) = 0;
      }
    }
    // The matcher gives background pixels no disparity.
    for (std::size_t i = 0; i < c.map.size(); ++i) {
      if (!c.masks[0].data()[i]) c.map.data()[i] = kInvalidDisparity;
    }
  }
  return c;
}

Disparity16 engine_refined(const StageCase& c, ThreadPool* pool) {
  CrossArms arms;
  cross_arms(c.gray.view(), cross_options(c.p), arms, pool);
  RefineInput in;
  in.gray = c.gray.view();
  if (!c.masks.empty()) in.foreground = c.masks[0].view();
  in.arms = &arms;
  in.partner = &c.partner;
  in.sign = c.sign;
  in.disparities = c.p.max_disparity;
  in.tolerance = c.p.cross_check_tolerance;
  Disparity16 out = c.map;
  Refiner r;
  r.refine(out, in, c.p, pool);
  return out;
}

}  // namespace

// The stage against the naive refinement, bit for bit, on one thread and on a pool; the cases
// must exercise both steps (holes voted, holes interpolated, edge pixels voted again) and leave
// some holes alone.
TEST(Refinement, RandomMapsBitExactWithTheNaiveOne) {
  const char* env = std::getenv("STEREOD_NAIVE_REFINE_CASES");
  const int cases = env ? std::atoi(env) : 300;
  const auto pool = ThreadPool::for_threads(3);
  long long voted = 0, interpolated = 0, kept = 0, revoted = 0;
  for (int i = 0; i < cases; ++i) {
    const StageCase c = random_stage_case(1000 + static_cast<std::uint64_t>(i));
    Disparity16 want = c.map;
    naive_refine(c.p, want, c.gray, c.masks, c.partner, c.sign);
    ASSERT_EQ(first_difference(want, engine_refined(c, nullptr)), "") << "case " << i;
    ASSERT_EQ(first_difference(want, engine_refined(c, pool.get())), "") << "case " << i;
    StereoParams votes_only = c.p;
    votes_only.refine_interpolate = false;
    Disparity16 after_votes = c.map;
    naive_refine(votes_only, after_votes, c.gray, c.masks, c.partner, c.sign);
    for (std::size_t k = 0; k < c.map.size(); ++k) {
      if (c.map.data()[k] != kInvalidDisparity) {
        revoted += after_votes.data()[k] != c.map.data()[k];
        continue;
      }
      if (after_votes.data()[k] != kInvalidDisparity) {
        ++voted;
      } else if (want.data()[k] != kInvalidDisparity) {
        ++interpolated;
      } else {
        ++kept;
      }
    }
  }
  EXPECT_GT(voted, 0);
  EXPECT_GT(interpolated, 0);
  EXPECT_GT(kept, 0);
  EXPECT_GT(revoted, 0);  // valid pixels at depth edges (refine_edges)
}

// cross_arms (a step of every arm over whole lines at once, on 16 or 32 lanes) against Mei's rule
// walked pixel by pixel, on both vector paths, one thread and a pool: random sizes (rows wider
// than a vector, and narrower), thresholds and lengths up to the largest cross_l1 allowed, on
// patchy images and on flat ones, where arms reach l1 and the image edges.
TEST(Refinement, CrossArmsEqualMeisRuleWalkedPixelByPixel) {
  const auto pool = ThreadPool::for_threads(3);
  long long at_l1 = 0, at_edge = 0, stopped = 0;
  for (const bool wide : {true, false}) {
    set_wide_vectors(wide);
    for (int i = 0; i < 60; ++i) {
      CaseRng rng(7000 + static_cast<std::uint64_t>(i));
      StereoParams p;
      p.cross_tau1 = rng.range(1, 255);
      p.cross_tau2 = rng.range(0, p.cross_tau1);
      p.cross_l1 = rng.range(1, kMaxCrossArm);
      p.cross_l2 = rng.range(0, p.cross_l1);
      const int w = rng.range(1, 150), h = rng.range(1, 90);
      Gray8 gray = patchy_gray(rng, w, h);
      if (rng.chance(20)) gray.resize(w, h, static_cast<std::uint8_t>(rng.range(0, 255)));
      CrossArms arms;
      cross_arms(gray.view(), cross_options(p), arms, i % 2 ? pool.get() : nullptr);
      for (int y = 0; y < h; ++y) {
        for (int x = 0; x < w; ++x) {
          const int want[4] = {naive_arm(p, gray, x, y, -1, 0), naive_arm(p, gray, x, y, 1, 0),
                               naive_arm(p, gray, x, y, 0, -1), naive_arm(p, gray, x, y, 0, 1)};
          const int got[4] = {arms.left(x, y), arms.right(x, y), arms.up(x, y), arms.down(x, y)};
          const int room[4] = {x, w - 1 - x, y, h - 1 - y};
          for (int a = 0; a < 4; ++a) {
            ASSERT_EQ(got[a], want[a]) << "case " << i << " wide " << wide << " arm " << a
                                       << " at (" << x << ", " << y << ") of " << w << "x" << h;
            at_l1 += want[a] == p.cross_l1;
            at_edge += want[a] == room[a] && room[a] < p.cross_l1;
            stopped += want[a] < std::min(room[a], p.cross_l1);
          }
        }
      }
    }
  }
  set_wide_vectors(true);
  EXPECT_GT(at_l1, 0);
  EXPECT_GT(at_edge, 0);
  EXPECT_GT(stopped, 0);
}

// The 16 directions: distinct, counter-clockwise from +x, each its opposite 8 later.
TEST(Refinement, SixteenDirections) {
  const int want[16][2] = {{1, 0},  {2, 1},  {1, 1},  {1, 2},   {0, 1},   {-1, 2},
                           {-1, 1}, {-2, 1}, {-1, 0}, {-2, -1}, {-1, -1}, {-1, -2},
                           {0, -1}, {1, -2}, {1, -1}, {2, -1}};
  for (int i = 0; i < kRefineDirections; ++i) {
    int dx, dy;
    refine_direction(i, dx, dy);
    EXPECT_EQ(dx, want[i][0]) << i;
    EXPECT_EQ(dy, want[i][1]) << i;
  }
}

// Votes round half up; the winner needs tau_S votes and strictly more than tau_H of them.
TEST(Refinement, VotingRules) {
  EXPECT_EQ(refine_vote_bin(16 * 5), 5);
  EXPECT_EQ(refine_vote_bin(16 * 5 + 7), 5);
  EXPECT_EQ(refine_vote_bin(16 * 5 + 8), 6);
  EXPECT_FALSE(refine_vote_accepted(19, 19, 20, 40));  // too few votes
  EXPECT_TRUE(refine_vote_accepted(9, 20, 20, 40));    // 45 % > 40 %
  EXPECT_FALSE(refine_vote_accepted(8, 20, 20, 40));   // 40 % is not more than 40 %
}

// A valid pixel is at an edge when a horizontal neighbour rounds `step` or more away.
TEST(Refinement, EdgeRule) {
  const std::uint16_t none = kInvalidDisparity;
  const bool both = false;
  EXPECT_FALSE(refine_at_edge(16 * 5, 16 * 9, 16 * 1, 0, both));  // off
  EXPECT_TRUE(refine_at_edge(16 * 5, 16 * 6, none, 1, both));
  EXPECT_FALSE(refine_at_edge(16 * 5, 16 * 6, 16 * 4, 2, both));
  EXPECT_TRUE(refine_at_edge(16 * 5, none, 16 * 3, 2, both));
  EXPECT_FALSE(refine_at_edge(16 * 5, none, none, 1, both));
  EXPECT_TRUE(refine_at_edge(16 * 5 + 7, 16 * 6 - 8, none, 1, both));   // 5.44 -> 5, 5.5 -> 6
  EXPECT_FALSE(refine_at_edge(16 * 5 + 8, 16 * 6 - 8, none, 1, both));  // both 5.5: 6
}

// Near side only: a neighbour `step` or more *below* the pixel (the pixel is on the nearer
// surface's side of the step) makes it an edge pixel; one above does not.
TEST(Refinement, NearSideEdgeRule) {
  const std::uint16_t none = kInvalidDisparity;
  const bool near = true;
  EXPECT_FALSE(refine_at_edge(16 * 5, 16 * 1, none, 0, near));  // off
  EXPECT_FALSE(refine_at_edge(16 * 5, 16 * 6, none, 1, near));  // the farther side
  EXPECT_FALSE(refine_at_edge(16 * 5, none, 16 * 9, 1, near));
  EXPECT_TRUE(refine_at_edge(16 * 5, 16 * 4, none, 1, near));
  EXPECT_TRUE(refine_at_edge(16 * 5, 16 * 9, 16 * 3, 2, near));  // right is 2 below
  EXPECT_FALSE(refine_at_edge(16 * 5, 16 * 9, 16 * 4, 2, near));
  EXPECT_FALSE(refine_at_edge(16 * 5, none, none, 1, near));
  EXPECT_TRUE(refine_at_edge(16 * 5 + 8, 16 * 5 + 7, none, 1, near));   // 6 over 5
  EXPECT_FALSE(refine_at_edge(16 * 5 + 7, 16 * 5 + 8, none, 1, near));  // 5 under 6
}

// Mei's test: a hole is a mismatch when a partner pixel's winner points back at it, an occlusion
// otherwise; only partners within the disparity range and the image count.
TEST(Refinement, OcclusionTest) {
  //                    x' = 0   1   2   3   4   5
  const int partner[6] = {-1, 3, 0, 9, 1, kNoDisparity};
  auto at = [&](int xp) { return partner[xp]; };
  // Left view, x = 4: partner x' = 4 - d. d = 3 at x' = 1 has winner 3: a mismatch.
  EXPECT_FALSE(refine_occluded(4, 6, -1, 8, 0, at));
  // With only 3 disparities (d 0..2: x' 4, 3, 2 with winners 1, 9, 0): an occlusion at tolerance
  // 0, a mismatch at tolerance 1 (x' = 4 has 1 for d = 0).
  EXPECT_TRUE(refine_occluded(4, 6, -1, 3, 0, at));
  EXPECT_FALSE(refine_occluded(4, 6, -1, 3, 1, at));
  // Right view, x = 1: partner x' = 1 + d; d = 0 .. 3 at x' = 1 .. 4 have 3, 0, 9, 1,
  // d = 4 at x' = 5 none, and d = 5 is past the image: an occlusion.
  EXPECT_TRUE(refine_occluded(1, 6, +1, 8, 0, at));
}

// Interpolation on a hand-made row: an occluded hole takes the smaller disparity around it, a
// mismatched one the neighbour of closer intensity.
TEST(Refinement, InterpolationTakesBackgroundOrSimilarIntensity) {
  const int w = 9, h = 1;
  Gray8 gray(w, h);
  const std::uint8_t g[9] = {10, 10, 10, 10, 200, 200, 200, 200, 200};
  for (int x = 0; x < w; ++x) gray(x, 0) = g[x];
  Disparity16 map(w, h, kInvalidDisparity);
  map(3, 0) = 16 * 2;  // dark, far
  map(5, 0) = 16 * 6;  // bright, near
  StereoParams p;
  p.max_disparity = 8;
  p.refine_iterations = 0;
  p.refine_interpolate = true;
  CrossArms arms;
  cross_arms(gray.view(), cross_options(p), arms, nullptr);
  RefineInput in;
  in.gray = gray.view();
  in.arms = &arms;
  in.sign = -1;
  in.disparities = 8;
  in.tolerance = 0;
  Refiner r;
  // No partner points anywhere: every hole is occluded and takes the far side's 2.
  Image<std::int16_t> none(w, h, kNoDisparity);
  in.partner = &none;
  Disparity16 occluded = map;
  r.refine(occluded, in, p, nullptr);
  EXPECT_EQ(occluded(4, 0), 16 * 2);
  EXPECT_EQ(occluded(8, 0), 16 * 6);  // one side only
  // Every pixel's partner at d = 0 points back: mismatches, the bright hole takes the bright side.
  Image<std::int16_t> zero(w, h, 0);
  in.partner = &zero;
  Disparity16 mismatched = map;
  r.refine(mismatched, in, p, nullptr);
  EXPECT_EQ(mismatched(4, 0), 16 * 6);
  EXPECT_EQ(mismatched(0, 0), 16 * 2);
}
