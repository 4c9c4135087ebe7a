// The loader refuses what the running daemon would refuse (issue 15: "anything --check accepts,
// the daemon runs"): names the protocol cannot carry, scene options the synthetic source refuses,
// and the policies of docs/CONFIG.md.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "config_issues.hpp"
#include "daemon_config.hpp"
#include "ingest/camera_config.hpp"

using namespace stereod;

namespace {

using test::all_issues;
using test::mentions;

std::vector<ConfigIssue> issues_of(const std::string& text) {
  return test::config_issues(text);
}

std::string two_cameras(const std::string& left_name, const std::string& pair_name) {
  return "cameras:\n"
         "  - {name: " +
         left_name +
         ", source: 'test://', width: 64, height: 48}\n"
         "  - {name: b, source: 'test://', width: 64, height: 48}\n"
         "pairs:\n"
         "  - {name: " +
         pair_name + ", left: " + left_name + ", right: b, stereo: {max_disparity: 16}}\n";
}

}  // namespace

// Issue 15, defect 2: a pair or camera name of 257 characters passed --check, and the daemon
// aborted at its first frame (the protocol carries names of up to 256 bytes).
TEST(ConfigLimits, NamesLongerThanTheProtocolCarriesAreRefused) {
  const std::string longest(256, 'n');
  EXPECT_TRUE(issues_of(two_cameras(longest, longest)).empty());
  const std::string too_long(257, 'n');
  auto v = issues_of(two_cameras("a", too_long));
  EXPECT_TRUE(mentions(v, "pairs[0].name", "1 to 256")) << all_issues(v);
  EXPECT_TRUE(mentions(v, "pairs[0].name", "got 257 characters")) << all_issues(v);
  v = issues_of(two_cameras(too_long, "p"));
  EXPECT_TRUE(mentions(v, "cameras[0].name", "1 to 256")) << all_issues(v);
}

// Pair names become topics and file names of stereod-sub --save: the same rule as cameras.
TEST(ConfigLimits, PairNamesFollowTheCameraNameRule) {
  auto v = issues_of(two_cameras("a", "'front left'"));
  EXPECT_TRUE(mentions(v, "pairs[0].name", "letters, digits")) << all_issues(v);
  v = issues_of(two_cameras("a", "'../../x'"));
  EXPECT_TRUE(mentions(v, "pairs[0].name", "letters, digits")) << all_issues(v);
  EXPECT_TRUE(issues_of(two_cameras("a", "front_1.left-2")).empty());
}

// Found while reproducing defect 1: synthetic://...?max_disparity=16 passed --check, and the daemon
// then refused to start ("must exceed synthetic.min_disparity + 8").
TEST(ConfigLimits, SyntheticOptionsTheSceneRefusesAreRefused) {
  const std::string text =
      "cameras:\n"
      "  - {name: l, source: 'synthetic://left?max_disparity=16', width: 320, height: 240}\n"
      "  - {name: r, source: 'synthetic://right?max_disparity=16', width: 320, height: 240}\n"
      "pairs: [{name: p, left: l, right: r, stereo: {max_disparity: 16}}]\n";
  const auto v = issues_of(text);
  EXPECT_TRUE(mentions(v, "cameras[0].source", "synthetic.max_disparity = 16")) << all_issues(v);
}
