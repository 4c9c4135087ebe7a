// The camera model a pair's frame headers carry (issue 14): given in the configuration for
// rectified cameras, taken from the calibration file, or the synthetic scene's own; and the
// optional payloads chosen per pair.
#include <gtest/gtest.h>

#include <cmath>

#include "config_issues.hpp"
#include "daemon_config.hpp"
#include "synthetic/synthetic_scene.hpp"

using namespace stereod;

namespace {

std::string rig_with(const std::string& pair_keys, const std::string& extra = "") {
  return "cameras:\n"
         "  - {name: a, source: 'test://', width: 64, height: 48}\n"
         "  - {name: b, source: 'test://', width: 64, height: 48}\n"
         "pairs:\n"
         "  - {name: p, left: a, right: b, stereo: {max_disparity: 16}" +
         pair_keys + "}\n" + extra;
}

std::vector<ConfigIssue> issues(const std::string& text) {
  return test::config_issues(text);
}

using test::mentions;

std::string dump(const std::vector<ConfigIssue>& v) {
  return test::all_issues(v);
}

}  // namespace

TEST(CameraModel, RectifiedCamerasTakeTheirModelFromTheConfiguration) {
  const DaemonConfig c = parse_daemon_config(
      rig_with(", calibration: {rectified: {fx: 700, fy: 702.5, cx: 30.5, cy: 20, baseline: "
               "0.12, doffs: 1.5}}"),
      "t.yaml");
  const publish::DepthCalibration m = pair_camera_model(c.pairs[0], c.rigs[0], nullptr);
  EXPECT_DOUBLE_EQ(m.focal_px, 700);
  EXPECT_DOUBLE_EQ(m.fy_px, 702.5);
  EXPECT_DOUBLE_EQ(m.cx_px, 30.5);
  EXPECT_DOUBLE_EQ(m.cy_px, 20);
  EXPECT_DOUBLE_EQ(m.baseline_m, 0.12);
  EXPECT_DOUBLE_EQ(m.doffs_px, 1.5);
  EXPECT_FALSE(c.pairs[0].calibration.has_files());
  // Only fx and the baseline are required: square pixels, the principal point at the centre.
  const DaemonConfig d = parse_daemon_config(
      rig_with(", calibration: {rectified: {fx: 500, baseline: 0.2}}"), "t.yaml");
  const publish::DepthCalibration n = pair_camera_model(d.pairs[0], d.rigs[0], nullptr);
  EXPECT_DOUBLE_EQ(n.fy_px, 500);
  EXPECT_DOUBLE_EQ(n.cx_px, 31.5);
  EXPECT_DOUBLE_EQ(n.cy_px, 23.5);
  EXPECT_DOUBLE_EQ(n.doffs_px, 0);
  EXPECT_NEAR(n.depth_m(10), 10.0, 1e-12);  // 500 * 0.2 / 10
  // Without any model there is no depth.
  const DaemonConfig e = parse_daemon_config(rig_with(""), "t.yaml");
  EXPECT_FALSE(pair_camera_model(e.pairs[0], e.rigs[0], nullptr).usable());
  EXPECT_TRUE(std::isnan(pair_camera_model(e.pairs[0], e.rigs[0], nullptr).depth_m(10)));
}

TEST(CameraModel, RectifiedMistakesAreReportedAtTheirKey) {
  auto v = issues(rig_with(", calibration: {rectified: {cx: 3}}"));
  EXPECT_TRUE(mentions(v, "pairs[0].calibration.rectified.fx", "missing")) << dump(v);
  EXPECT_TRUE(mentions(v, "pairs[0].calibration.rectified.baseline", "missing")) << dump(v);
  v = issues(rig_with(", calibration: {rectified: {fx: -5, baseline: 0.1, fz: 2}}"));
  EXPECT_TRUE(mentions(v, "pairs[0].calibration.rectified.fx", "")) << dump(v);
  EXPECT_TRUE(mentions(v, "pairs[0].calibration.rectified.fz", "did you mean \"fx\"")) << dump(v);
  // A principal point more than an image away: pixels of another size, or normalised units.
  v = issues(rig_with(", calibration: {rectified: {fx: 500, baseline: 0.1, cx: 640}}"));
  EXPECT_TRUE(mentions(v, "pairs[0].calibration.rectified.cx", "more than an image away"))
      << dump(v);
  v = issues(rig_with(", calibration: {rectified: {fx: 500, baseline: 0.1}, opencv: x.yaml}"));
  EXPECT_TRUE(mentions(v, "pairs[0].calibration", "exactly one of")) << dump(v);
  ASSERT_FALSE(v.empty());
  EXPECT_GT(v[0].line, 0);
}

TEST(CameraModel, ASyntheticRigCarriesItsScenesCameras) {
  const DaemonConfig c = parse_daemon_config(
      "cameras:\n"
      "  - {name: l, source: 'synthetic://left?max_disparity=32&baseline_m=0.25', width: 160, "
      "height: 120}\n"
      "  - {name: r, source: 'synthetic://right?max_disparity=32&baseline_m=0.25', width: 160, "
      "height: 120}\n"
      "pairs:\n"
      "  - {name: s, left: l, right: r, stereo: {max_disparity: 32}}\n",
      "t.yaml");
  const publish::DepthCalibration m = pair_camera_model(c.pairs[0], c.rigs[0], nullptr);
  SyntheticOptions o;
  o.width = 160;
  o.height = 120;
  o.baseline_m = 0.25;
  const SyntheticCamera s = synthetic_camera(o);
  EXPECT_DOUBLE_EQ(m.focal_px, 160);  // focal length = width unless focal_px says otherwise
  EXPECT_DOUBLE_EQ(m.focal_px, s.fx);
  EXPECT_DOUBLE_EQ(m.fy_px, s.fy);
  EXPECT_DOUBLE_EQ(m.cx_px, 79.5);
  EXPECT_DOUBLE_EQ(m.cy_px, 59.5);
  EXPECT_DOUBLE_EQ(m.baseline_m, 0.25);
  EXPECT_DOUBLE_EQ(m.doffs_px, 0);
  // The scene's true depth and the header's formula agree for every disparity.
  for (const double d : {8.0, 13.25, 31.5}) EXPECT_DOUBLE_EQ(m.depth_m(d), s.depth_m(d));
  o.focal_px = -1;
  EXPECT_THROW(SyntheticScene{o}, std::invalid_argument);
}

TEST(Outputs, OffByDefaultSetForAllAndOverriddenPerPair) {
  const DaemonConfig none = parse_daemon_config(rig_with(""), "t.yaml");
  EXPECT_EQ(none.pairs[0].outputs, publish::PublisherOutputs{});
  const DaemonConfig c = parse_daemon_config(
      rig_with(", outputs: {points: xyzrgb, depth: false}",
               "publish: {outputs: {depth: true, confidence: true, left: gray}}\n"),
      "t.yaml");
  const publish::PublisherOutputs& o = c.pairs[0].outputs;
  EXPECT_FALSE(o.depth);      // the pair's own key
  EXPECT_TRUE(o.confidence);  // from publish.outputs
  EXPECT_EQ(o.left, publish::LeftOutput::kGray);
  EXPECT_EQ(o.points, publish::PointsOutput::kXyzRgb);
  EXPECT_TRUE(o.wants_left_image());
  const auto v = issues(rig_with(", outputs: {points: xyzw, left: colour}"));
  EXPECT_TRUE(mentions(v, "pairs[0].outputs.points", "did you mean \"xyz\"")) << dump(v);
  EXPECT_TRUE(mentions(v, "pairs[0].outputs.left", "did you mean \"color\"")) << dump(v);
}

TEST(Outputs, AChangeAppliesLiveToThatPair) {
  const DaemonConfig a = parse_daemon_config(rig_with(""), "t.yaml");
  const DaemonConfig b = parse_daemon_config(rig_with(", outputs: {left: color}"), "t.yaml");
  const ConfigDiff d = diff_configs(a, b);
  EXPECT_EQ(d.pairs_outputs, std::vector<std::string>{"p"});
  EXPECT_TRUE(d.pairs_rebuilt.empty());
  EXPECT_TRUE(d.pairs_retuned.empty());
  EXPECT_NE(d.summary().find("pair outputs changed: p"), std::string::npos);
}
