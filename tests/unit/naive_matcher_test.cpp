// The CPU engine's matcher against the naive one (naive_matcher.hpp), bit for bit, on random small
// images with random parameters (every stereo key, with and without foreground masks): the final
// maps of both views and every level's winners. The golden table (golden_outputs_test.cpp) covers
// larger images against recorded outputs; this test can draw as many new cases as wanted
// (STEREOD_NAIVE_CASES=N).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>

#include "cpu_cases.hpp"
#include "cpu_features.hpp"
#include "naive_matcher.hpp"
#include "stereo/confidence.hpp"
#include "stereo/matcher.hpp"
#include "stereo/sgm.hpp"

using namespace stereod;
using namespace stereod::testing;

namespace {

// The first place where the engine's last compute() differs from the naive result: every level's
// winners of both views, the final maps, the confidence.
std::string difference_from_naive(const NaiveResult& want, const CpuStereoMatcher& m,
                                  const StereoOutput& got) {
  if (got.levels_used != static_cast<int>(want.winners[0].size())) return "levels differ";
  for (int s = got.levels_used - 1; s >= 0; --s) {
    for (int v = 0; v < 2; ++v) {
      const std::string d = first_difference(want.winners[v][s], m.level_disparity(s, v));
      if (!d.empty()) {
        return "winners, level " + std::to_string(s) + (v == 0 ? " left: " : " right: ") + d;
      }
    }
  }
  std::string d = first_difference(want.left, got.left);
  if (!d.empty()) return "left output: " + d;
  d = first_difference(want.right, got.right);
  if (!d.empty()) return "right output: " + d;
  d = first_difference(want.confidence, got.confidence);
  return d.empty() ? d : "confidence: " + d;
}

// Runs the engine on case c (confidence and cost ratios included) into `got` and holds it to the
// naive matcher; returns the naive result.
NaiveResult expect_engine_equals_naive(const MatcherCase& c, StereoOutput& got) {
  NaiveResult want = naive_match(c.params, c.left, c.right, c.left_foreground, c.right_foreground);
  CpuStereoMatcher m(c.params);
  StereoInput in = stereo_input(c);
  in.confidence = true;
  in.cost_ratio_output = true;
  m.compute(in, got);
  EXPECT_EQ(difference_from_naive(want, m, got), "") << c.name;
  return want;
}

// As above, and returns at how many finest-level left pixels the winner differs from the naive
// matcher's with the parameters `other`: a mode the cases cannot tell from another is not being
// tested.
long long engine_equals_naive_and_differs_from(const MatcherCase& c, const StereoParams& other) {
  StereoOutput got;
  const NaiveResult want = expect_engine_equals_naive(c, got);
  const NaiveResult plain =
      naive_match(other, c.left, c.right, c.left_foreground, c.right_foreground);
  long long n = 0;
  for (std::size_t k = 0; k < plain.winners[0][0].size(); ++k) {
    n += plain.winners[0][0].data()[k] != want.winners[0][0].data()[k];
  }
  return n;
}

}  // namespace

// Once per vector path of the CPU engine (cpu_features.hpp): the baseline, and AVX2 where the CPU
// has it.
class NaiveMatcher : public ::testing::TestWithParam<bool> {
 protected:
  void SetUp() override { set_wide_vectors(GetParam()); }
  void TearDown() override { set_wide_vectors(true); }
};

TEST_P(NaiveMatcher, RandomCasesBitExact) {
  const char* env = std::getenv("STEREOD_NAIVE_CASES");
  const int cases = env ? std::atoi(env) : 100;
  ASSERT_GT(cases, 0);
  long long graded = 0;  // confidences strictly between "ambiguous" and "unrivalled"
  for (int i = 0; i < cases; ++i) {
    const std::uint64_t seed = 5000 + static_cast<std::uint64_t>(i);
    const MatcherCase c = random_matcher_case(seed, 72, 56);
    StereoOutput got;
    expect_engine_equals_naive(c, got);
    if (HasFailure()) return;
    for (std::uint8_t v : got.confidence.pixels()) graded += v > 1 && v < 255;
  }
  EXPECT_GT(graded, 0);
}

// `subpixel: false` publishes exactly 16 d for the same winners (it was once read by neither
// engine: --check accepted it and the parabola was fitted anyway).
TEST(Subpixel, OffPublishesTheIntegerWinnersOnly) {
  long long fractional = 0, valid = 0;
  for (std::uint64_t seed = 7100; seed < 7110; ++seed) {
    MatcherCase c = random_matcher_case(seed, 96, 64);
    c.params.median = false, c.params.speckle_size = 0, c.params.fill = false;  // matcher only
    StereoOutput on, off;
    c.params.subpixel = true;
    CpuStereoMatcher(c.params).compute(stereo_input(c), on);
    c.params.subpixel = false;
    CpuStereoMatcher(c.params).compute(stereo_input(c), off);
    ASSERT_EQ(on.left.width(), off.left.width());
    for (int y = 0; y < on.left.height(); ++y) {
      for (int x = 0; x < on.left.width(); ++x) {
        const int a = on.left(x, y), b = off.left(x, y);
        ASSERT_EQ(a == kInvalidDisparity, b == kInvalidDisparity) << c.name << " " << x << "," << y;
        if (b == kInvalidDisparity) continue;
        ++valid;
        ASSERT_EQ(b % kSubpixelScale, 0) << c.name << " " << x << "," << y;
        ASSERT_LE(std::abs(a - b), kSubpixelScale / 2) << c.name << " " << x << "," << y;
        fractional += a % kSubpixelScale != 0;
      }
    }
  }
  EXPECT_GT(valid, 0);
  EXPECT_GT(fractional, 0);  // with it on, the parabola does move some answers
}

// Semi-global aggregation (aggregation: sgm) against the naive recursion, on the same random cases
// with random penalties, paths and gradient scaling (STEREOD_NAIVE_SGM_CASES=N for more).
TEST_P(NaiveMatcher, RandomSgmCasesBitExact) {
  const char* env = std::getenv("STEREOD_NAIVE_SGM_CASES");
  const int cases = env ? std::atoi(env) : 60;
  ASSERT_GT(cases, 0);
  long long smoothed = 0;  // pixels where sgm chose differently from the window alone
  for (int i = 0; i < cases; ++i) {
    const std::uint64_t seed = 8000 + static_cast<std::uint64_t>(i);
    MatcherCase c = random_matcher_case(seed, 56, 44);
    CaseRng rng(seed * 7 + 3);  // its own draws: the cases above stay what they were
    const StereoParams window = c.params;
    c.params.aggregation = Aggregation::kSgm;
    c.params.sgm_cost = rng.chance(50) ? SgmCost::kPixel : SgmCost::kWindow;
    c.params.sgm_paths = rng.chance(50) ? 4 : 8;
    const int p_max = c.params.sgm_cost == SgmCost::kPixel ? 120 : 8;
    c.params.sgm_p1 = rng.chance(20) ? 0 : rng.range(1, p_max);
    c.params.sgm_p2 =
        std::min(255, c.params.sgm_p1 + (rng.chance(20) ? 0 : rng.range(1, 8 * p_max)));
    c.params.sgm_gradient = rng.chance(30) ? 0 : rng.range(1, 64);
    c.name += std::string(" sgm ") + std::string(to_string(c.params.sgm_cost)) + " p1 " +
              std::to_string(c.params.sgm_p1) + " p2 " + std::to_string(c.params.sgm_p2) + " g " +
              std::to_string(c.params.sgm_gradient) + " paths " +
              std::to_string(c.params.sgm_paths);
    smoothed += engine_equals_naive_and_differs_from(c, window);
    if (HasFailure()) return;
  }
  EXPECT_GT(smoothed, 0) << "the cases never tell sgm from the window";
}

// Cross-based aggregation (aggregation: cross, and sgm on its costs) against the naive region
// sums, on the same random cases with random arms and iterations (STEREOD_NAIVE_CROSS_CASES=N for
// more).
TEST_P(NaiveMatcher, RandomCrossCasesBitExact) {
  const char* env = std::getenv("STEREOD_NAIVE_CROSS_CASES");
  const int cases = env ? std::atoi(env) : 40;
  ASSERT_GT(cases, 0);
  long long differs = 0;  // pixels where cross chose differently from the window
  for (int i = 0; i < cases; ++i) {
    const std::uint64_t seed = 9000 + static_cast<std::uint64_t>(i);
    MatcherCase c = random_matcher_case(seed, 48, 40);
    CaseRng rng(seed * 11 + 5);
    const StereoParams window = c.params;
    c.params.aggregation = rng.chance(75) ? Aggregation::kCross : Aggregation::kSgm;
    c.params.sgm_cost = SgmCost::kCross;
    c.params.sgm_paths = rng.chance(50) ? 4 : 8;
    c.params.sgm_p1 = rng.range(0, 16);
    c.params.sgm_p2 = c.params.sgm_p1 + rng.range(0, 64);
    random_cross_arms(rng, c.params, 12);
    c.params.cross_iterations = rng.range(1, kMaxCrossIterations);
    c.name += std::string(" ") + std::string(to_string(c.params.aggregation)) + " tau " +
              std::to_string(c.params.cross_tau1) + "/" + std::to_string(c.params.cross_tau2) +
              " l " + std::to_string(c.params.cross_l1) + "/" + std::to_string(c.params.cross_l2) +
              " iterations " + std::to_string(c.params.cross_iterations);
    differs += engine_equals_naive_and_differs_from(c, window);
    if (HasFailure()) return;
  }
  EXPECT_GT(differs, 0) << "the cases never tell cross from the window";
}

// The multi-step refinement (refine: true) after each aggregation against the naive one (region
// votes counted pixel by pixel, the 16 directions walked step by step), on the same random cases
// with random voting thresholds, arms and rounds, interpolation on and off, masks included
// (STEREOD_NAIVE_REFINE_CASES=N for more).
TEST_P(NaiveMatcher, RandomRefineCasesBitExact) {
  const char* env = std::getenv("STEREOD_NAIVE_REFINE_CASES");
  const int cases = env ? std::atoi(env) : 60;
  ASSERT_GT(cases, 0);
  long long changed = 0;  // final left pixels the refinement changed
  for (int i = 0; i < cases; ++i) {
    const std::uint64_t seed = 9500 + static_cast<std::uint64_t>(i);
    MatcherCase c = random_matcher_case(seed, 48, 40);
    CaseRng rng(seed * 13 + 7);
    const int mode = rng.range(0, 3);
    c.params.aggregation =
        mode == 2 ? Aggregation::kSgm : (mode == 3 ? Aggregation::kCross : Aggregation::kWindow);
    c.params.sgm_p1 = rng.range(0, 64);
    c.params.sgm_p2 = c.params.sgm_p1 + rng.range(0, 128);
    random_cross_arms(rng, c.params, 12);
    const StereoParams plain = c.params;
    random_refinement(rng, c.params);
    c.name += std::string(" ") + std::string(to_string(c.params.aggregation)) + " refine " +
              std::to_string(c.params.refine_iterations) + " rounds, votes " +
              std::to_string(c.params.refine_votes) + ", share " +
              std::to_string(c.params.refine_share) + ", edges " +
              std::to_string(c.params.refine_edges) +
              (c.params.refine_edges_near ? " near side" : "") +
              (c.params.refine_interpolate ? ", interpolate" : "");
    StereoOutput got;
    const NaiveResult want = expect_engine_equals_naive(c, got);
    if (HasFailure()) return;
    const NaiveResult before =
        naive_match(plain, c.left, c.right, c.left_foreground, c.right_foreground);
    for (std::size_t k = 0; k < want.left.size(); ++k) {
      changed += want.left.data()[k] != before.left.data()[k];
    }
  }
  EXPECT_GT(changed, 0) << "the cases never tell the refinement from its absence";
}

// A frame whose search ranges would need more than kSgmMaxCells in a view fails with an error
// that says so (the engine publishes an error frame) instead of taking the host's memory: one
// level, so every pixel searches the whole range, 1100 x 512 x 64 cells.
TEST(Sgm, AFrameBeyondTheCellLimitFailsWithAnError) {
  ASSERT_GT(1100ull * 512 * 64, kSgmMaxCells);
  // Cross-based aggregation keeps volumes over the same ranges (and wider): the same limit.
  for (const Aggregation mode : {Aggregation::kSgm, Aggregation::kCross}) {
    const std::string name(to_string(mode));
    StereoParams p;
    p.aggregation = mode;
    p.levels = 1;
    p.max_disparity = 64;
    Gray8 left(1100, 512), right(1100, 512);
    for (int y = 0; y < 512; ++y) {
      for (int x = 0; x < 1100; ++x) {
        left(x, y) = right(x, y) = static_cast<std::uint8_t>(x * 7 + y);
      }
    }
    StereoInput in;
    in.left = left.view();
    in.right = right.view();
    StereoOutput out;
    CpuStereoMatcher m(p);
    try {
      m.compute(in, out);
      ADD_FAILURE() << name << ": no error";
    } catch (const std::runtime_error& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("cost cells"), std::string::npos) << what;
      EXPECT_NE(what.find("stereo.aggregation " + name + ":"), std::string::npos) << what;
    }
    // Within the limit the same matcher goes on working.
    Gray8 small_left(320, 240), small_right(320, 240);
    for (int y = 0; y < 240; ++y) {
      for (int x = 0; x < 320; ++x) {
        small_left(x, y) = small_right(x, y) = static_cast<std::uint8_t>(x * 7 + y);
      }
    }
    in.left = small_left.view();
    in.right = small_right.view();
    EXPECT_NO_THROW(m.compute(in, out)) << name;
  }
}

// The formula of docs/PROTOCOL.md "confidence8", case by case.
TEST(MatchConfidence, TheDocumentedCases) {
  EXPECT_EQ(match_confidence(10, 0, false), 255);  // nothing else compared
  EXPECT_EQ(match_confidence(0, 0, true), 1);      // two perfect matches
  EXPECT_EQ(match_confidence(50, 50, true), 1);    // a tie far away: fully ambiguous
  EXPECT_EQ(match_confidence(0, 7, true), 255);    // a perfect match, nothing else near
  // (255 * (C2 - C1) + C2 / 2) / C2: 255 * 1 / 4 = 63.75 -> 64; 255 * 30 / 100 = 76.5 -> 77.
  EXPECT_EQ(match_confidence(3, 4, true), 64);
  EXPECT_EQ(match_confidence(70, 100, true), 77);
  EXPECT_EQ(match_confidence(1000, 1001, true), 1);  // 0.25 rounds to 0, kept at 1
}

// The confidence map is there only when asked for, and asking changes no disparity.
TEST_P(NaiveMatcher, ConfidenceOnlyWhenAskedAndWithoutEffectOnTheDisparities) {
  for (int i = 0; i < 20; ++i) {
    const MatcherCase c = random_matcher_case(7000 + static_cast<std::uint64_t>(i), 72, 56);
    CpuStereoMatcher m(c.params);
    StereoOutput plain, with;
    m.compute(stereo_input(c), plain);
    EXPECT_TRUE(plain.confidence.empty()) << c.name;
    StereoInput in = stereo_input(c);
    in.confidence = true;
    m.compute(in, with);
    ASSERT_EQ(with.confidence.width(), c.left.width()) << c.name;
    ASSERT_EQ(first_difference(plain.left, with.left), "") << c.name;
    ASSERT_EQ(first_difference(plain.right, with.right), "") << c.name;
    m.compute(stereo_input(c), plain);  // and off again
    EXPECT_TRUE(plain.confidence.empty()) << c.name;
  }
}

INSTANTIATE_TEST_SUITE_P(Vectors, NaiveMatcher, ::testing::Bool(),
                         [](const auto& tp) { return tp.param ? "wide" : "baseline"; });
