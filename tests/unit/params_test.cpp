// Bad parameters and bad images give an error naming the parameter and the value.
#include <gtest/gtest.h>

#include "plane_scenes.hpp"
#include "stereo/matcher.hpp"
#include "stereo/params.hpp"

using namespace stereod;

namespace {

// Runs the matcher and returns the error message ("" when it succeeded).
std::string compute_error(const StereoParams& p, const Gray8& left, const Gray8& right) {
  try {
    CpuStereoMatcher m(p, 1);
    StereoInput in;
    in.left = left.view();
    in.right = right.view();
    StereoOutput out;
    m.compute(in, out);
    return "";
  } catch (const ParameterError& e) {
    return e.what();
  }
}

}  // namespace

TEST(Params, DefaultsAreValid) {
  EXPECT_TRUE(check_params(StereoParams{}).empty());
}

TEST(Params, EachOutOfRangeValueIsNamed) {
  struct Case {
    void (*set)(StereoParams&);
    const char* expect;
  };
  const Case cases[] = {
      {[](StereoParams& p) { p.max_disparity = 0; }, "stereo.max_disparity = 0"},
      {[](StereoParams& p) { p.max_disparity = 5000; }, "stereo.max_disparity = 5000"},
      {[](StereoParams& p) { p.levels = 0; }, "stereo.levels = 0"},
      {[](StereoParams& p) { p.levels = 7; }, "stereo.levels = 7"},
      {[](StereoParams& p) { p.subwindow = 4; }, "stereo.subwindow = 4: must be odd"},
      {[](StereoParams& p) { p.best_k = 9; }, "stereo.best_k = 9"},
      {[](StereoParams& p) { p.best_k = -1; }, "stereo.best_k = -1"},
      {[](StereoParams& p) { p.parent_radius = -1; }, "stereo.parent_radius = -1"},
      {[](StereoParams& p) { p.census_width = 9, p.census_height = 9; }, "64 bits"},
      {[](StereoParams& p) { p.census_width = 6; }, "stereo.census_width = 6"},
      {[](StereoParams& p) { p.uniqueness = 100; }, "stereo.uniqueness = 100"},
      {[](StereoParams& p) { p.ad_mean_radius = 4; }, "stereo.ad_mean_radius = 4"},
      {[](StereoParams& p) { p.speckle_size = -1; }, "stereo.speckle_size = -1"},
      {[](StereoParams& p) { p.speckle_range = 17; }, "stereo.speckle_range = 17"},
      {[](StereoParams& p) { p.sgm_paths = 6; }, "stereo.sgm_paths = 6: must be 4 or 8"},
      {[](StereoParams& p) { p.sgm_p1 = 1024; }, "stereo.sgm_p1 = 1024"},
      {[](StereoParams& p) { p.sgm_p2 = 1; }, "stereo.sgm_p2 = 1: must be at least sgm_p1"},
      {[](StereoParams& p) { p.sgm_gradient = -1; }, "stereo.sgm_gradient = -1"},
      {[](StereoParams& p) { p.cross_tau1 = 0; }, "stereo.cross_tau1 = 0"},
      {[](StereoParams& p) { p.cross_tau2 = 13; },
       "stereo.cross_tau2 = 13: must be at most cross_tau1"},
      {[](StereoParams& p) { p.cross_l1 = 65; }, "stereo.cross_l1 = 65"},
      {[](StereoParams& p) { p.cross_l2 = 35; }, "stereo.cross_l2 = 35: must be at most cross_l1"},
      {[](StereoParams& p) { p.cross_iterations = 0; }, "stereo.cross_iterations = 0"},
      {[](StereoParams& p) { p.cross_iterations = 5; }, "stereo.cross_iterations = 5"},
      {[](StereoParams& p) { p.refine_iterations = -1; }, "stereo.refine_iterations = -1"},
      {[](StereoParams& p) { p.refine_iterations = 17; }, "stereo.refine_iterations = 17"},
      {[](StereoParams& p) { p.refine_votes = 0; }, "stereo.refine_votes = 0"},
      {[](StereoParams& p) { p.refine_votes = 16642; }, "stereo.refine_votes = 16642"},
      {[](StereoParams& p) { p.refine_edges = -1; }, "stereo.refine_edges = -1"},
      {[](StereoParams& p) { p.refine_share = 100; },
       "stereo.refine_share = 100: must be between 0 and 99"},
  };
  for (const auto& c : cases) {
    StereoParams p;
    c.set(p);
    const auto errors = check_params(p);
    ASSERT_FALSE(errors.empty()) << c.expect;
    EXPECT_NE(std::string(errors.front().what()).find(c.expect), std::string::npos)
        << errors.front().what();
    EXPECT_THROW(validate_params(p), ParameterError);
    EXPECT_THROW(CpuStereoMatcher m(p, 1), ParameterError);
  }
}

TEST(Params, SemiGlobalAggregationNamesItsChoices) {
  StereoParams p;
  p.aggregation = Aggregation::kSgm;
  EXPECT_TRUE(check_params(p).empty());
  EXPECT_EQ(parse_aggregation("sgm"), Aggregation::kSgm);
  EXPECT_EQ(to_string(Aggregation::kWindow), "window");
  EXPECT_EQ(parse_aggregation("cross"), Aggregation::kCross);
  EXPECT_EQ(to_string(Aggregation::kCross), "cross");
  EXPECT_EQ(to_string(SgmCost::kCross), "cross");
  EXPECT_THROW(parse_aggregation("crossed"), ParameterError);
}

TEST(Params, UnknownCostNameIsAnError) {
  try {
    parse_matching_cost("sad");
    FAIL();
  } catch (const ParameterError& e) {
    EXPECT_EQ(e.parameter(), "stereo.cost");
    EXPECT_NE(std::string(e.what()).find("\"sad\""), std::string::npos);
  }
  EXPECT_EQ(parse_matching_cost("census"), MatchingCost::kCensus);
  EXPECT_EQ(parse_matching_cost("ad-census"), MatchingCost::kAdCensus);
}

TEST(Params, LevelsStopWhereTheCoarsestRangeGetsTooSmall) {
  StereoParams p;
  p.max_disparity = 256;
  p.levels = 4;
  EXPECT_EQ(effective_levels(p), 4);  // 256, 128, 64, 32
  p.max_disparity = 16;
  EXPECT_EQ(effective_levels(p), 2);  // 16, 8 (4 would be under 8)
  p.max_disparity = 1;
  EXPECT_EQ(effective_levels(p), 1);
  p.max_disparity = 64;
  p.levels = 1;
  EXPECT_EQ(effective_levels(p), 1);
  EXPECT_EQ(level_side(17, 1), 9);
  EXPECT_EQ(level_side(17, 2), 5);
  EXPECT_EQ(level_disparities(73, 2), 19);
}

TEST(Params, BadImagesAreRejectedWithTheReason) {
  StereoParams p;
  p.max_disparity = 16;
  const Gray8 a = random_image(64, 48, 1);
  const Gray8 b = random_image(63, 48, 2);
  EXPECT_NE(compute_error(p, a, b).find("image sizes differ: left is 64x48, right is 63x48"),
            std::string::npos);
  EXPECT_NE(compute_error(p, Gray8{}, Gray8{}).find("left image is empty"), std::string::npos);
  const Gray8 tiny = random_image(15, 40, 3);
  EXPECT_NE(compute_error(p, tiny, tiny).find("at least 16"), std::string::npos);
  p.max_disparity = 64;
  EXPECT_NE(compute_error(p, a, a).find(
                "stereo.max_disparity = 64: must be smaller than the image width (64)"),
            std::string::npos);
  // 16 rows allow two levels of at least 8 pixels; 64 disparities would use four.
  p.max_disparity = 64;
  p.levels = 4;
  const Gray8 wide = random_image(256, 16, 4);
  const std::string e = compute_error(p, wide, wide);
  EXPECT_NE(e.find("stereo.levels = 4: a 256x16 image allows at most 2"), std::string::npos) << e;
  p.levels = 2;
  EXPECT_EQ(compute_error(p, wide, wide), "");
}

TEST(Params, SmallestAndOddSizesAndExtremeRanges) {
  StereoParams p;
  p.max_disparity = 1;
  const Gray8 s16 = random_image(16, 16, 5);
  EXPECT_EQ(compute_error(p, s16, s16), "");
  p.max_disparity = 15;
  EXPECT_EQ(compute_error(p, s16, s16), "");
  const Gray8 odd = random_image(17, 31, 6);
  p.max_disparity = 16;
  EXPECT_EQ(compute_error(p, odd, odd), "");
  p.max_disparity = 512;
  p.levels = 5;
  const Gray8 wide_l = random_image(600, 128, 7);
  const Gray8 wide_r = random_image(600, 128, 8);
  EXPECT_EQ(compute_error(p, wide_l, wide_r), "");
}
