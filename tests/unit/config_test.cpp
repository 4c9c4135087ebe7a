// YAML reading of stereo parameters: values land where they should; every error names the file,
// line, column and key, and says what was expected.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>

#include "stereo_yaml.hpp"

using namespace stereod;

namespace {

std::string write_temp(const std::string& text) {
  char name[] = "/tmp/stereod_config_XXXXXX";
  const int fd = mkstemp(name);
  EXPECT_GE(fd, 0);
  close(fd);
  std::ofstream(name) << text;
  return name;
}

std::vector<ConfigIssue> issues_of(const std::string& text) {
  const std::string file = write_temp(text);
  try {
    load_stereo_params_file(file);
  } catch (const ConfigError& e) {
    std::remove(file.c_str());
    return e.issues();
  }
  std::remove(file.c_str());
  return {};
}

}  // namespace

TEST(StereoYaml, ReadsEveryKey) {
  const std::string file = write_temp(
      "stereo:\n  max_disparity: 96\n  levels: 3\n  cost: census\n  census_width: 7\n"
      "  census_height: 5\n  subwindow: 5\n  best_k: 3\n  parent_radius: 0\n"
      "  cross_check: false\n  uniqueness: 10\n  subpixel: false\n  median: false\n"
      "  fill: true\n  fill_mode: intensity\n  fill_interpolate_max: 2\n  lambda_ad: 12\n"
      "  lambda_census: 25\n  ad_truncation: 40\n  min_coarse_disparities: 6\n"
      "  cross_check_tolerance: 0\n  ad_mean_radius: 2\n  speckle_size: 40\n  speckle_range: 2\n");
  const StereoParams p = load_stereo_params_file(file);
  std::remove(file.c_str());
  EXPECT_EQ(p.max_disparity, 96);
  EXPECT_EQ(p.levels, 3);
  EXPECT_EQ(p.cost, MatchingCost::kCensus);
  EXPECT_EQ(p.census_width, 7);
  EXPECT_EQ(p.census_height, 5);
  EXPECT_EQ(p.subwindow, 5);
  EXPECT_EQ(p.best_k, 3);
  EXPECT_EQ(p.parent_radius, 0);
  EXPECT_FALSE(p.cross_check);
  EXPECT_EQ(p.uniqueness, 10);
  EXPECT_FALSE(p.subpixel);
  EXPECT_FALSE(p.median);
  EXPECT_TRUE(p.fill);
  EXPECT_EQ(p.fill_mode, FillMode::kIntensity);
  EXPECT_EQ(p.fill_interpolate_max, 2);
  EXPECT_EQ(p.lambda_ad, 12);
  EXPECT_EQ(p.lambda_census, 25);
  EXPECT_EQ(p.ad_truncation, 40);
  EXPECT_EQ(p.min_coarse_disparities, 6);
  EXPECT_EQ(p.cross_check_tolerance, 0);
  EXPECT_EQ(p.ad_mean_radius, 2);
  EXPECT_EQ(p.speckle_size, 40);
  EXPECT_EQ(p.speckle_range, 2);
}

TEST(StereoYaml, ErrorsNameLineColumnAndKey) {
  const auto issues =
      issues_of("stereo:\n  levels: 9\n  cost: sadd\n  subwindw: 3\n  median: maybe\n");
  ASSERT_EQ(issues.size(), 4u);
  // Issues come in file order, so a user can fix them top to bottom.
  EXPECT_EQ(issues[0].key, "stereo.levels");
  EXPECT_EQ(issues[0].line, 2);
  EXPECT_EQ(issues[0].column, 11);
  EXPECT_NE(issues[0].message.find("out of range (expected 1 to 6)"), std::string::npos);
  EXPECT_EQ(issues[1].key, "stereo.cost");
  EXPECT_NE(issues[1].message.find("did you mean \"ad\""), std::string::npos);
  EXPECT_EQ(issues[2].key, "stereo.subwindw");
  EXPECT_EQ(issues[2].line, 4);
  EXPECT_EQ(issues[2].column, 3);
  EXPECT_NE(issues[2].message.find("did you mean \"subwindow\""), std::string::npos);
  EXPECT_EQ(issues[3].key, "stereo.median");
  EXPECT_NE(issues[3].message.find("expected true or false"), std::string::npos);
  EXPECT_NE(issues[3].to_string().find(":5:11: stereo.median: "), std::string::npos)
      << issues[3].to_string();
}

TEST(StereoYaml, ReadsTheSemiGlobalKeysAndNamesTheirMistakes) {
  const std::string file = write_temp(
      "stereo:\n  aggregation: sgm\n  sgm_paths: 8\n  sgm_p1: 3\n  sgm_p2: 40\n"
      "  sgm_gradient: 0\n  sgm_cost: window\n");
  const StereoParams p = load_stereo_params_file(file);
  std::remove(file.c_str());
  EXPECT_EQ(p.aggregation, Aggregation::kSgm);
  EXPECT_EQ(p.sgm_paths, 8);
  EXPECT_EQ(p.sgm_cost, SgmCost::kWindow);
  EXPECT_EQ(p.sgm_p1, 3);
  EXPECT_EQ(p.sgm_p2, 40);
  EXPECT_EQ(p.sgm_gradient, 0);
  const auto issues = issues_of(
      "stereo:\n  aggregation: sgn\n  sgm_paths: 6\n  sgm_p1: 9\n  sgm_p2: 8\n"
      "  sgm_gradient: 300\n");
  ASSERT_EQ(issues.size(), 4u);
  EXPECT_EQ(issues[0].key, "stereo.aggregation");
  EXPECT_EQ(issues[0].line, 2);
  EXPECT_NE(issues[0].message.find("did you mean \"sgm\""), std::string::npos) << issues[0].message;
  EXPECT_EQ(issues[1].key, "stereo.sgm_paths");
  EXPECT_EQ(issues[1].line, 3);
  EXPECT_NE(issues[1].message.find("must be 4 or 8"), std::string::npos) << issues[1].message;
  EXPECT_EQ(issues[2].key, "stereo.sgm_p2");
  EXPECT_EQ(issues[2].line, 5);
  EXPECT_EQ(issues[2].column, 11);
  EXPECT_NE(issues[2].message.find("at least sgm_p1 (9)"), std::string::npos) << issues[2].message;
  EXPECT_EQ(issues[3].key, "stereo.sgm_gradient");
  EXPECT_NE(issues[3].message.find("out of range"), std::string::npos) << issues[3].message;
}

TEST(StereoYaml, ReadsTheCrossKeysAndNamesTheirMistakes) {
  const std::string file = write_temp(
      "stereo:\n  aggregation: cross\n  cross_tau1: 30\n  cross_tau2: 10\n  cross_l1: 20\n"
      "  cross_l2: 8\n  cross_iterations: 2\n  sgm_cost: cross\n");
  const StereoParams p = load_stereo_params_file(file);
  std::remove(file.c_str());
  EXPECT_EQ(p.aggregation, Aggregation::kCross);
  EXPECT_EQ(p.sgm_cost, SgmCost::kCross);
  EXPECT_EQ(p.cross_tau1, 30);
  EXPECT_EQ(p.cross_tau2, 10);
  EXPECT_EQ(p.cross_l1, 20);
  EXPECT_EQ(p.cross_l2, 8);
  EXPECT_EQ(p.cross_iterations, 2);
  const auto issues = issues_of(
      "stereo:\n  aggregation: crosss\n  cross_tau1: 10\n  cross_tau2: 12\n  cross_l1: 65\n"
      "  cross_iterations: 0\n");
  ASSERT_EQ(issues.size(), 4u);
  EXPECT_EQ(issues[0].key, "stereo.aggregation");
  EXPECT_NE(issues[0].message.find("did you mean \"cross\""), std::string::npos)
      << issues[0].message;
  EXPECT_EQ(issues[1].key, "stereo.cross_tau2");
  EXPECT_EQ(issues[1].line, 4);
  EXPECT_EQ(issues[1].column, 15);
  EXPECT_NE(issues[1].message.find("at most cross_tau1 (10)"), std::string::npos)
      << issues[1].message;
  EXPECT_EQ(issues[2].key, "stereo.cross_l1");
  EXPECT_NE(issues[2].message.find("out of range"), std::string::npos) << issues[2].message;
  EXPECT_EQ(issues[3].key, "stereo.cross_iterations");
  EXPECT_EQ(issues[3].line, 6);
}

TEST(StereoYaml, ReadsTheRefinementKeysAndNamesTheirMistakes) {
  const std::string file = write_temp(
      "stereo:\n  refine: true\n  refine_iterations: 3\n  refine_votes: 12\n"
      "  refine_share: 55\n  refine_interpolate: true\n  refine_edges: 2\n"
      "  refine_edges_near: false\n");
  const StereoParams p = load_stereo_params_file(file);
  std::remove(file.c_str());
  EXPECT_TRUE(p.refine);
  EXPECT_EQ(p.refine_iterations, 3);
  EXPECT_EQ(p.refine_votes, 12);
  EXPECT_EQ(p.refine_share, 55);
  EXPECT_TRUE(p.refine_interpolate);
  EXPECT_EQ(p.refine_edges, 2);
  EXPECT_FALSE(p.refine_edges_near);
  EXPECT_TRUE(StereoParams{}.refine);  // on unless turned off, with three rounds
  EXPECT_EQ(StereoParams{}.refine_iterations, 3);
  EXPECT_TRUE(StereoParams{}.refine_edges_near);
  const auto issues = issues_of(
      "stereo:\n  refine: yes please\n  refine_iterations: 17\n  refine_votes: 0\n"
      "  refine_share: 100\n  refine_interpolat: true\n  refine_edges_near: 1\n");
  ASSERT_EQ(issues.size(), 6u);
  EXPECT_EQ(issues[0].key, "stereo.refine");
  EXPECT_NE(issues[0].message.find("expected true or false"), std::string::npos)
      << issues[0].message;
  EXPECT_EQ(issues[1].key, "stereo.refine_iterations");
  EXPECT_EQ(issues[1].line, 3);
  EXPECT_EQ(issues[1].column, 22);
  EXPECT_NE(issues[1].message.find("out of range (expected 0 to 16)"), std::string::npos)
      << issues[1].message;
  EXPECT_EQ(issues[2].key, "stereo.refine_votes");
  EXPECT_EQ(issues[2].line, 4);
  EXPECT_NE(issues[2].message.find("out of range"), std::string::npos) << issues[2].message;
  EXPECT_EQ(issues[3].key, "stereo.refine_share");
  EXPECT_NE(issues[3].to_string().find(":5:17: stereo.refine_share: "), std::string::npos)
      << issues[3].to_string();
  EXPECT_EQ(issues[4].key, "stereo.refine_interpolat");
  EXPECT_NE(issues[4].message.find("did you mean \"refine_interpolate\""), std::string::npos)
      << issues[4].message;
  EXPECT_NE(issues[5].to_string().find(":7:22: stereo.refine_edges_near: "), std::string::npos)
      << issues[5].to_string();
  EXPECT_NE(issues[5].message.find("expected true or false"), std::string::npos)
      << issues[5].message;
}

TEST(StereoYaml, RulesBetweenKeysAndWrongShapes) {
  auto issues = issues_of("stereo:\n  census_width: 9\n  census_height: 9\n");
  ASSERT_EQ(issues.size(), 1u);
  EXPECT_EQ(issues[0].key, "stereo.census_width");
  EXPECT_NE(issues[0].message.find("64 bits"), std::string::npos);
  issues = issues_of("stereo:\n  subwindow: 4\n");
  ASSERT_EQ(issues.size(), 1u);
  EXPECT_NE(issues[0].message.find("must be odd"), std::string::npos);
  issues = issues_of("stereo: [1, 2]\n");
  ASSERT_EQ(issues.size(), 1u);
  EXPECT_NE(issues[0].message.find("expected a map, got a list"), std::string::npos);
  issues = issues_of("stereo:\n  levels: [3]\n");
  ASSERT_EQ(issues.size(), 1u);
  EXPECT_NE(issues[0].message.find("expected an integer, got a list"), std::string::npos);
  issues = issues_of("stereo:\n  levels: 3\n   bad: indentation\n");
  ASSERT_EQ(issues.size(), 1u);
  EXPECT_NE(issues[0].message.find("not valid YAML"), std::string::npos);
  EXPECT_GT(issues[0].line, 0);
  issues = issues_of("stereoo:\n  levels: 3\n");
  ASSERT_EQ(issues.size(), 1u);
  EXPECT_NE(issues[0].message.find("did you mean \"stereo\""), std::string::npos);
}

TEST(StereoYaml, MissingFileIsAnError) {
  try {
    load_stereo_params_file("/nonexistent/stereod.yaml");
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/stereod.yaml: cannot open"),
              std::string::npos);
  }
}

TEST(ClosestMatch, SuggestsOnlyNearNames) {
  EXPECT_EQ(closest_match("levles", {"levels", "cost"}), "levels");
  EXPECT_EQ(closest_match("zzzzzz", {"levels", "cost"}), "");
}
