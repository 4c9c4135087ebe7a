// The CPU engine's matcher against the naive one (naive_matcher.hpp), bit for bit, on random small
// images with random parameters (every stereo key, with and without foreground masks): the final
// maps of both views and every level's winners. The golden table (golden_outputs_test.cpp) covers
// larger images against recorded outputs; this test can draw as many new cases as wanted
// (STEREOD_NAIVE_CASES=N).
#include <gtest/gtest.h>

#include <cstdlib>

#include "cpu_cases.hpp"
#include "cpu_features.hpp"
#include "naive_matcher.hpp"
#include "stereo/confidence.hpp"
#include "stereo/matcher.hpp"

using namespace stereod;
using namespace stereod::testing;

namespace {

template <typename T>
std::string first_difference(const Image<T>& want, const Image<T>& got) {
  if (want.width() != got.width() || want.height() != got.height()) return "sizes differ";
  for (int y = 0; y < want.height(); ++y) {
    for (int x = 0; x < want.width(); ++x) {
      if (want(x, y) != got(x, y)) {
        return std::to_string(x) + "," + std::to_string(y) + ": naive " +
               std::to_string(want(x, y)) + ", engine " + std::to_string(got(x, y));
      }
    }
  }
  return "";
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
    const NaiveResult want =
        naive_match(c.params, c.left, c.right, c.left_foreground, c.right_foreground);
    CpuStereoMatcher m(c.params);
    StereoOutput got;
    StereoInput in = stereo_input(c);
    in.confidence = true;
    m.compute(in, got);
    ASSERT_EQ(got.levels_used, static_cast<int>(want.winners[0].size())) << c.name;
    for (int s = got.levels_used - 1; s >= 0; --s) {
      for (int v = 0; v < 2; ++v) {
        ASSERT_EQ(first_difference(want.winners[v][s], m.level_disparity(s, v)), "")
            << c.name << ": winners, level " << s << (v == 0 ? " left" : " right");
      }
    }
    ASSERT_EQ(first_difference(want.left, got.left), "") << c.name << ": left output";
    ASSERT_EQ(first_difference(want.right, got.right), "") << c.name << ": right output";
    ASSERT_EQ(first_difference(want.confidence, got.confidence), "") << c.name << ": confidence";
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
