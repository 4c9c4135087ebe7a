// The daemon's configuration: the shipped files load, each kind of mistake is reported at its
// place, and diff_configs says what a reload has to do.
#include <gtest/gtest.h>

#include "config_issues.hpp"
#include "daemon_config.hpp"

using namespace stereod;

namespace {

const std::string kBase =
    "cameras:\n"
    "  - {name: a, source: 'test://', width: 64, height: 48}\n"
    "  - {name: b, source: 'test://', width: 64, height: 48}\n"
    "pairs:\n"
    "  - {name: p, left: a, right: b, stereo: {max_disparity: 16}}\n";

std::vector<ConfigIssue> issues(const std::string& text) {
  return test::config_issues(text, STEREOD_CONFIG_DIR "/examples");
}

using test::mentions;

// kBase with the pair's stereo: section in block style, its aggregation on line 10, column 20.
std::string pair_with_aggregation(const std::string& aggregation) {
  return "cameras:\n"
         "  - {name: a, source: 'test://', width: 64, height: 48}\n"
         "  - {name: b, source: 'test://', width: 64, height: 48}\n"
         "pairs:\n"
         "  - name: p\n"
         "    left: a\n"
         "    right: b\n"
         "    stereo:\n"
         "      max_disparity: 16\n"
         "      aggregation: " +
         aggregation + "\n";
}

}  // namespace

TEST(DaemonConfig, ShippedFilesLoad) {
  const DaemonConfig d = load_daemon_config(STEREOD_CONFIG_DIR "/stereod.yaml");
  ASSERT_EQ(d.pairs.size(), 1u);
  EXPECT_EQ(d.pairs[0].rig, "demo");
  EXPECT_EQ(d.rigs[0].cameras.size(), 2u);
  EXPECT_NO_THROW(load_daemon_config(STEREOD_CONFIG_DIR "/examples/usb-pair.yaml"));
  EXPECT_NO_THROW(load_daemon_config(STEREOD_CONFIG_DIR "/examples/replay-images.yaml"));
  EXPECT_NO_THROW(load_daemon_config(STEREOD_CONFIG_DIR "/examples/trinocular-synthetic.yaml"));
  // The Jetson example's calibration loads; its CURVE key is made on the board, so here its
  // absence is the only issue.
  try {
    load_daemon_config(STEREOD_CONFIG_DIR "/examples/jetson-csi-pair.yaml");
    FAIL();
  } catch (const ConfigError& e) {
    ASSERT_EQ(e.issues().size(), 1u) << e.what();
    EXPECT_EQ(e.issues()[0].key, "publish.curve.server_key");
  }
}

TEST(DaemonConfig, DefaultsAndOverrides) {
  const DaemonConfig d = parse_daemon_config(
      kBase + "stereo: {levels: 2, median: false}\nbackground: {warmup: 7}\n", "t.yaml");
  ASSERT_EQ(d.pairs.size(), 1u);
  EXPECT_EQ(d.pairs[0].stereo.levels, 2);  // file-wide default
  EXPECT_FALSE(d.pairs[0].stereo.median);
  EXPECT_EQ(d.pairs[0].stereo.max_disparity, 16);  // the pair's own
  EXPECT_EQ(d.pairs[0].background.warmup, 7);
  EXPECT_EQ(d.rigs.size(), 1u);  // no rigs: one rig of every camera
  EXPECT_EQ(d.rigs[0].name, "main");
  EXPECT_EQ(d.engine, "auto");
  EXPECT_EQ(d.log_level, "info");
  EXPECT_TRUE(d.gpu.watch_ends);
  EXPECT_FALSE(parse_daemon_config(kBase + "gpu: {watch_ends: false}\n", "t.yaml").gpu.watch_ends);
}

TEST(DaemonConfig, MistakesAreReportedAtTheirKey) {
  auto v = issues(kBase + "engine: gpu\nlogging: {level: verbose}\ngpu: {inflight: 0}\n");
  EXPECT_TRUE(mentions(v, "engine", "unknown value \"gpu\""));
  EXPECT_TRUE(mentions(v, "logging.level", "unknown level"));
  EXPECT_TRUE(mentions(v, "gpu.inflight", "out of range"));
  EXPECT_TRUE(mentions(issues(kBase + "gpu: {watch_ends: sometimes}\n"), "gpu.watch_ends", ""));
  v = issues(
      "cameras:\n  - {name: a, source: 'test://', width: 64, height: 48}\n"
      "  - {name: b, source: 'test://', width: 80, height: 48}\n"
      "pairs: [{name: p, left: a, right: b}]\n");
  ASSERT_FALSE(v.empty());
  EXPECT_NE(v[0].message.find("64x48"), std::string::npos) << v[0].message;
  // max_disparity must fit the cameras: the message says how wide they are.
  v = issues(
      "cameras:\n  - {name: a, source: 'test://', width: 64, height: 48}\n"
      "  - {name: b, source: 'test://', width: 64, height: 48}\n"
      "pairs: [{name: p, left: a, right: b, stereo: {max_disparity: 64}}]\n");
  EXPECT_TRUE(mentions(v, "pairs[0].stereo.max_disparity", "camera 'a' is 64x48"));
  EXPECT_EQ(v[0].line, 4);
  // Cameras of two rigs cannot pair; a camera in no rig is an error.
  v = issues(
      "cameras:\n  - {name: a, source: 'test://', width: 64, height: 48}\n"
      "  - {name: b, source: 'test://', width: 64, height: 48}\n"
      "  - {name: c, source: 'test://', width: 64, height: 48}\n"
      "rigs: [{name: r1, cameras: [a]}, {name: r2, cameras: [b]}]\n"
      "pairs: [{name: p, left: a, right: b}]\n");
  EXPECT_TRUE(mentions(v, "pairs[0].right", "must share a rig"));
  EXPECT_TRUE(mentions(v, "cameras[2]", "is in no rig"));
  // Calibration for another size.
  v = issues(
      "cameras:\n  - {name: a, source: 'test://', width: 640, height: 480}\n"
      "  - {name: b, source: 'test://', width: 640, height: 480}\n"
      "pairs: [{name: p, left: a, right: b, calibration: calibration/csi-pair-1280x720.yaml}]\n");
  EXPECT_TRUE(mentions(v, "pairs[0].calibration", "1280x720"));
}

// Both engines run semi-global aggregation (the CUDA engine bit for bit: gpu_tests), so the loader
// takes it with any engine; it refused it unless `engine: cpu` while only the CPU had it.
TEST(DaemonConfig, SemiGlobalAggregationRunsOnEveryEngine) {
  const std::string sgm_pair = pair_with_aggregation("sgm");
  for (const std::string engine : {"", "engine: auto\n", "engine: cuda\n", "engine: cpu\n"}) {
    const auto v = issues(sgm_pair + engine);
    EXPECT_TRUE(v.empty()) << engine << test::all_issues(v);
  }
  EXPECT_TRUE(issues(kBase + "stereo: {aggregation: sgm}\n").empty());
}

// Every mode loads wherever the CUDA engine may run a pair (engine cuda, and auto, which picks it
// on a host with a usable GPU): cross-based aggregation, alone or as SGM's cost (cuda/kernels/
// cross.cu), the refinement (its voting and its interpolation) after every aggregation, and the
// background model's support-based absorption (issue 13).
TEST(DaemonConfig, EveryModeLoadsForTheCudaEngine) {
  for (const std::string engine : {"", "engine: auto\n", "engine: cuda\n"}) {
    EXPECT_TRUE(issues(pair_with_aggregation("cross") + engine).empty()) << engine;
    EXPECT_TRUE(issues(kBase + engine + "stereo: {aggregation: sgm, sgm_cost: cross}\n").empty())
        << engine;
    EXPECT_TRUE(
        issues(kBase + engine + "stereo: {aggregation: cross, cross_iterations: 4}\n").empty())
        << engine;
  }
  EXPECT_TRUE(issues(kBase + "engine: cuda\nstereo: {sgm_cost: cross}\n").empty());
  for (const std::string aggregation : {"window", "sgm", "cross"}) {
    EXPECT_TRUE(
        issues(pair_with_aggregation(aggregation + "\n      refine: true") + "engine: cuda\n")
            .empty());
    EXPECT_TRUE(issues(pair_with_aggregation(
                           aggregation + "\n      refine: true\n      refine_interpolate: true") +
                       "engine: cuda\n")
                    .empty());
  }
  EXPECT_TRUE(issues(kBase + "engine: cuda\nbackground: {support_absorption: false}\n").empty());
  EXPECT_TRUE(issues(kBase + "engine: cuda\nbackground: {support_absorption: true}\n").empty());
}

// Ghosts seen in depth load with every engine (both run them bit for bit: gpu_tests,
// Gpu.DepthGhostsEqualCpu); their share is checked at its key.
TEST(DaemonConfig, DepthGhostsLoadForEveryEngine) {
  for (const std::string engine : {"", "engine: auto\n", "engine: cuda\n", "engine: cpu\n"}) {
    const auto v = issues(kBase + engine + "background: {depth_ghosts: true}\n");
    EXPECT_TRUE(v.empty()) << engine << test::all_issues(v);
  }
  EXPECT_TRUE(
      issues(kBase + "engine: cuda\nbackground: {depth_ghosts: true, depth_ghost_farther: 0.5}\n")
          .empty());
  EXPECT_TRUE(mentions(issues(kBase + "background: {depth_ghost_farther: 5}\n"),
                       "background.depth_ghost_farther", ""));
  for (const std::string engine : {"engine: cuda\n", "engine: cpu\n"}) {
    const auto v = issues(kBase + engine + "background: {depth_in_front: false}\n");
    EXPECT_TRUE(v.empty()) << engine << test::all_issues(v);
  }
  EXPECT_TRUE(mentions(issues(kBase + "background: {depth_in_front: maybe}\n"),
                       "background.depth_in_front", ""));
  EXPECT_TRUE(issues(kBase + "engine: cuda\nbackground: {depth_lag: 3}\n").empty());
  EXPECT_TRUE(mentions(issues(kBase + "background: {depth_lag: 9}\n"), "background.depth_lag", ""));
  EXPECT_TRUE(mentions(issues(kBase + "background: {depth_lag: 0}\n"), "background.depth_lag", ""));
}

// Regression: issues came out in the order the checks ran (a misspelt camera of a pair, checked
// late, after a stereo key below it), not in the file's order.
TEST(DaemonConfig, IssuesAreInFileOrder) {
  const auto v = issues(
      "cameras:\n  - {name: a, source: 'test://', width: 64, height: 48}\n"
      "  - {name: b, source: 'test://', width: 64, height: 48}\n"
      "pairs:\n  - name: p\n    left: a\n    right: bb\n    stereo:\n      subwindow: 4\n");
  ASSERT_EQ(v.size(), 2u);
  EXPECT_EQ(v[0].key, "pairs[0].right");
  EXPECT_EQ(v[1].key, "pairs[0].stereo.subwindow");
  EXPECT_LT(v[0].line, v[1].line);
}

// Regression: a key written twice was accepted and its second value silently ignored.
TEST(DaemonConfig, RepeatedKeyIsAnIssue) {
  const auto v = issues(kBase + "stereo:\n  levels: 3\n  median: true\n  levels: 2\n");
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0].key, "stereo.levels");
  EXPECT_EQ(v[0].line, 9);
  EXPECT_NE(v[0].message.find("given twice (the first is at line 7)"), std::string::npos)
      << v[0].message;
}

// Regression: a rig without a cameras: key made yaml-cpp throw InvalidNode out of the loader (found
// by the fuzz test).
TEST(DaemonConfig, RigWithoutCamerasIsAnIssueNotACrash) {
  const auto v = issues(kBase + "rigs: [{name: r}]\n");
  EXPECT_TRUE(mentions(v, "rigs[0].cameras", "expected a list of camera names"));
  EXPECT_FALSE(issues("cameras: {}\npairs: 3\n").empty());
  EXPECT_FALSE(issues("rigs: {x: [1]}\n").empty());
}

// Regression: a rig without a name got a second issue keyed "rigs[0].rig name" (validate_rig's
// key for the rig's own name, not a YAML key); a badly named rig was reported under that key too.
TEST(DaemonConfig, ARigsNameIsReportedOnceUnderItsKey) {
  auto v = issues(kBase + "rigs: [{cameras: [a, b]}]\n");
  ASSERT_EQ(v.size(), 1u) << v[0].key << ": " << v[0].message;
  EXPECT_EQ(v[0].key, "rigs[0].name");
  EXPECT_NE(v[0].message.find("every rig needs a name"), std::string::npos) << v[0].message;
  v = issues(kBase + "rigs: [{name: 'a rig', cameras: [a, b]}]\n");
  ASSERT_EQ(v.size(), 1u) << v[0].key << ": " << v[0].message;
  EXPECT_EQ(v[0].key, "rigs[0].name");
  EXPECT_NE(v[0].message.find("expected a name"), std::string::npos) << v[0].message;
  EXPECT_EQ(v[0].line, 6);
}

TEST(DaemonConfig, DiffSaysWhatAReloadMustDo) {
  const DaemonConfig a = parse_daemon_config(kBase, "t.yaml");
  EXPECT_TRUE(diff_configs(a, a).empty());
  DaemonConfig b = parse_daemon_config(kBase + "stereo: {median: false}\n", "t.yaml");
  auto d = diff_configs(a, b);
  EXPECT_EQ(d.pairs_retuned, std::vector<std::string>{"p"});
  EXPECT_TRUE(d.pairs_rebuilt.empty());
  EXPECT_TRUE(d.rigs_rebuilt.empty());
  b = parse_daemon_config(kBase + "logging: {level: debug}\npublish: {outputs: {mask: true}}\n",
                          "t.yaml");
  d = diff_configs(a, b);
  EXPECT_TRUE(d.log_level);
  EXPECT_TRUE(d.publisher_outputs);
  EXPECT_FALSE(d.publisher_rebuilt);
  b = parse_daemon_config(kBase + "publish: {hwm: 8}\ngpu: {inflight: 3}\n", "t.yaml");
  d = diff_configs(a, b);
  EXPECT_TRUE(d.publisher_rebuilt);
  EXPECT_TRUE(d.engines_rebuilt);
  d = diff_configs(a, parse_daemon_config(kBase + "gpu: {watch_ends: false}\n", "t.yaml"));
  EXPECT_TRUE(d.engines_rebuilt);
  // Another camera size: the rig's pipeline and its pair are rebuilt.
  b = parse_daemon_config(
      "cameras:\n"
      "  - {name: a, source: 'test://', width: 64, height: 40}\n"
      "  - {name: b, source: 'test://', width: 64, height: 40}\n"
      "pairs:\n"
      "  - {name: p, left: a, right: b, stereo: {max_disparity: 16}}\n",
      "t.yaml");
  d = diff_configs(a, b);
  EXPECT_EQ(d.rigs_rebuilt, std::vector<std::string>{"main"});
  EXPECT_EQ(d.pairs_rebuilt, std::vector<std::string>{"p"});
  EXPECT_NE(d.summary().find("rigs rebuilt: main"), std::string::npos);
}

namespace {

// Three cameras: a, b beside it, c below it; d on another rig; e of another size.
const std::string kTrinocularCameras =
    "cameras:\n"
    "  - {name: a, source: 'test://', width: 64, height: 48}\n"
    "  - {name: b, source: 'test://', width: 64, height: 48}\n"
    "  - {name: c, source: 'test://', width: 64, height: 48}\n"
    "  - {name: d, source: 'test://', width: 64, height: 48}\n"
    "  - {name: e, source: 'test://', width: 80, height: 48}\n"
    "rigs:\n"
    "  - {name: main, cameras: [a, b, c, e]}\n"
    "  - {name: other, cameras: [d]}\n";

std::string trinocular_pair(const std::string& keys) {
  return kTrinocularCameras +
         "pairs:\n"
         "  - name: t\n"
         "    stereo: {max_disparity: 16}\n"
         "    trinocular: {" +
         keys + "}\n";
}

const ConfigIssue* issue_at(const std::vector<ConfigIssue>& v, const std::string& key) {
  for (const auto& i : v) {
    if (i.key == key) return &i;
  }
  return nullptr;
}

}  // namespace

TEST(DaemonConfig, TrinocularPairLoads) {
  const DaemonConfig d = parse_daemon_config(
      trinocular_pair("reference: a, horizontal: b, vertical: c, vertical_position: above, "
                      "horizontal_model: {focal_px: 500, baseline_m: 0.1}, "
                      "vertical_model: {focal_px: 500, baseline_m: 0.05}, cost_ratio: 0.8"),
      "t.yaml");
  ASSERT_EQ(d.pairs.size(), 1u);
  const PairConfig& p = d.pairs[0];
  EXPECT_EQ(p.left, "a");
  EXPECT_EQ(p.right, "b");
  EXPECT_EQ(p.rig, "main");
  ASSERT_TRUE(p.trinocular);
  EXPECT_EQ(p.trinocular->vertical, "c");
  EXPECT_EQ(p.trinocular->model.position, VerticalPosition::kAbove);
  EXPECT_DOUBLE_EQ(p.trinocular->model.scale(), 2.0);
  EXPECT_DOUBLE_EQ(p.trinocular->cost_ratio, 0.8);
  // Without models both pairs have one scale.
  const DaemonConfig plain = parse_daemon_config(
      trinocular_pair("reference: a, horizontal: b, vertical: c, vertical_position: below"),
      "t.yaml");
  EXPECT_DOUBLE_EQ(plain.pairs[0].trinocular->model.scale(), 1.0);
  // A change of the trinocular section rebuilds the pair.
  const ConfigDiff diff = diff_configs(plain, d);
  ASSERT_EQ(diff.pairs_rebuilt.size(), 1u);
}

TEST(DaemonConfig, TrinocularMistakesNameTheKeyAndTheCamera) {
  auto v =
      issues(trinocular_pair("reference: a, horizontal: b, vertical: z, vertical_position: below"));
  const ConfigIssue* i = issue_at(v, "pairs[0].trinocular.vertical");
  ASSERT_TRUE(i) << (v.empty() ? "no issue" : v[0].to_string());
  EXPECT_NE(i->message.find("no camera named 'z'"), std::string::npos) << i->message;
  EXPECT_EQ(i->file, "t.yaml");
  EXPECT_GT(i->line, 0);
  EXPECT_GT(i->column, 0);

  v = issues(trinocular_pair("reference: a, horizontal: b, vertical: e, vertical_position: below"));
  i = issue_at(v, "pairs[0].trinocular.vertical");
  ASSERT_TRUE(i);
  EXPECT_NE(i->message.find("'e' (80x48)"), std::string::npos) << i->message;

  v = issues(trinocular_pair("reference: a, horizontal: b, vertical: d, vertical_position: below"));
  i = issue_at(v, "pairs[0].trinocular.vertical");
  ASSERT_TRUE(i);
  EXPECT_NE(i->message.find("camera 'd' is in rig 'other'"), std::string::npos) << i->message;

  v = issues(trinocular_pair("reference: a, horizontal: b, vertical: b, vertical_position: below"));
  i = issue_at(v, "pairs[0].trinocular.vertical");
  ASSERT_TRUE(i);
  EXPECT_NE(i->message.find("already the horizontal partner"), std::string::npos) << i->message;

  v = issues(trinocular_pair("reference: a, horizontal: b, vertical: c"));
  EXPECT_TRUE(mentions(v, "pairs[0].trinocular.vertical_position", "above or below"));
  v = issues(trinocular_pair(
      "reference: a, horizontal: b, vertical: c, vertical_position: sideways, cost_ratio: 0"));
  EXPECT_TRUE(mentions(v, "pairs[0].trinocular.vertical_position", "unknown value"));
  EXPECT_TRUE(mentions(v, "pairs[0].trinocular.cost_ratio", "out of range"));
  v =
      issues(trinocular_pair("reference: a, horizontal: b, vertical: c, vertical_position: below, "
                             "horizontal_model: {focal_px: 500, baseline_m: 0.1}"));
  EXPECT_TRUE(mentions(v, "pairs[0].trinocular.horizontal_model", "vertical_model"));
  v =
      issues(trinocular_pair("reference: a, horizontal: b, vertical: c, vertical_position: below, "
                             "verticle: c"));
  EXPECT_TRUE(mentions(v, "pairs[0].trinocular.verticle", "unknown key"));

  // Cameras are named under trinocular only; calibration files are not taken.
  v = issues(kTrinocularCameras +
             "pairs:\n  - {name: t, left: a, calibration: cal.yaml, trinocular: {reference: a, "
             "horizontal: b, vertical: c, vertical_position: below}}\n");
  EXPECT_TRUE(mentions(v, "pairs[0].left", "not with trinocular"));
  EXPECT_TRUE(mentions(v, "pairs[0].calibration", "not with trinocular"));

  // The vertical pair matches transposed images: 48 wide here, too narrow for 60 disparities.
  v = issues(
      kTrinocularCameras +
      "pairs:\n  - {name: t, stereo: {max_disparity: 60, levels: 1}, trinocular: {reference: a, "
      "horizontal: b, vertical: c, vertical_position: below}}\n");
  i = issue_at(v, "pairs[0].stereo.max_disparity");
  ASSERT_TRUE(i) << (v.empty() ? "no issue" : v[0].to_string());
  EXPECT_NE(i->message.find("vertical pair"), std::string::npos) << i->message;
  EXPECT_NE(i->message.find("'c'"), std::string::npos) << i->message;
}

TEST(DaemonConfig, DirectionOutputIsAPublishKey) {
  const DaemonConfig d =
      parse_daemon_config(kBase + "publish: {outputs: {direction: true}}\n", "t.yaml");
  EXPECT_TRUE(d.publish.outputs.direction);
  const DaemonConfig e = parse_daemon_config(kBase, "t.yaml");
  EXPECT_TRUE(diff_configs(e, d).publisher_outputs);
}

// raw_format (UYVY, NV12): for color cameras of live sources whose pair partner has one too and
// that are not trinocular; each mistake at the camera's or pair's key, naming the camera.
TEST(DaemonConfig, RawFormatsAreCheckedAtTheirKey) {
  const auto two = [](const std::string& a, const std::string& b) {
    return "cameras:\n"
           "  - {name: a, source: 'test://', width: 64, height: 48, color: true" +
           a +
           "}\n"
           "  - {name: b, source: 'test://', width: 64, height: 48, color: true" +
           b +
           "}\n"
           "pairs:\n"
           "  - {name: p, left: a, right: b, stereo: {max_disparity: 16}}\n";
  };
  EXPECT_TRUE(issues(two(", raw_format: UYVY", ", raw_format: NV12")).empty());
  auto v = issues(two(", raw_format: YUY2", ", raw_format: UYVY"));
  EXPECT_TRUE(mentions(v, "cameras[0].raw_format", "expected UYVY or NV12")) << test::all_issues(v);
  v = issues(two(", raw_format: UYVY", ""));
  EXPECT_TRUE(mentions(v, "pairs[0].right", "camera 'a' has raw_format UYVY, camera 'b' none"))
      << test::all_issues(v);
  v = issues(
      "cameras:\n"
      "  - {name: a, source: 'test://', width: 64, height: 48, raw_format: NV12}\n"
      "  - {name: b, source: 'synthetic://right', width: 64, height: 48, color: true, "
      "raw_format: NV12}\n"
      "  - {name: c, source: 'test://', width: 63, height: 48, color: true, raw_format: UYVY}\n"
      "pairs:\n"
      "  - {name: p, left: a, right: b, stereo: {max_disparity: 16}}\n");
  EXPECT_TRUE(mentions(v, "cameras[0].raw_format", "only color cameras")) << test::all_issues(v);
  EXPECT_TRUE(mentions(v, "cameras[1].raw_format", "not for synthetic://")) << test::all_issues(v);
  EXPECT_TRUE(mentions(v, "cameras[2].raw_format", "needs an even width, the camera is 63x48"))
      << test::all_issues(v);
  v = issues(
      "cameras:\n"
      "  - {name: a, source: 'test://', width: 64, height: 48, color: true, raw_format: UYVY}\n"
      "  - {name: b, source: 'test://', width: 64, height: 48, color: true, raw_format: UYVY}\n"
      "  - {name: c, source: 'test://', width: 64, height: 48, color: true}\n"
      "pairs:\n"
      "  - name: t\n"
      "    stereo: {max_disparity: 16}\n"
      "    trinocular: {reference: a, horizontal: b, vertical: c, vertical_position: above}\n");
  EXPECT_TRUE(mentions(v, "pairs[0].trinocular.reference", "trinocular pairs take no raw"))
      << test::all_issues(v);
  EXPECT_TRUE(mentions(v, "pairs[0].trinocular.horizontal", "camera 'b' has raw_format UYVY"))
      << test::all_issues(v);
}
