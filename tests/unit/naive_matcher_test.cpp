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
  for (int i = 0; i < cases; ++i) {
    const std::uint64_t seed = 5000 + static_cast<std::uint64_t>(i);
    const MatcherCase c = random_matcher_case(seed, 72, 56);
    const NaiveResult want =
        naive_match(c.params, c.left, c.right, c.left_foreground, c.right_foreground);
    CpuStereoMatcher m(c.params);
    StereoOutput got;
    m.compute(stereo_input(c), got);
    ASSERT_EQ(got.levels_used, static_cast<int>(want.winners[0].size())) << c.name;
    for (int s = got.levels_used - 1; s >= 0; --s) {
      for (int v = 0; v < 2; ++v) {
        ASSERT_EQ(first_difference(want.winners[v][s], m.level_disparity(s, v)), "")
            << c.name << ": winners, level " << s << (v == 0 ? " left" : " right");
      }
    }
    ASSERT_EQ(first_difference(want.left, got.left), "") << c.name << ": left output";
    ASSERT_EQ(first_difference(want.right, got.right), "") << c.name << ": right output";
  }
}

INSTANTIATE_TEST_SUITE_P(Vectors, NaiveMatcher, ::testing::Bool(),
                         [](const auto& tp) { return tp.param ? "wide" : "baseline"; });
