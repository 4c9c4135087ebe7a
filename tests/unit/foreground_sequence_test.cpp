// Foreground depth on a scene that is not the generator's own (issue 13): Middlebury teddy
// (tests/data) as the static background, both real views and their ground truth, objects textured
// with the cones photograph, a moving shadow, sensor noise and flicker; through the CPU engine at
// the daemon's defaults, scored from the end of the warm-up as `stereod-bench sequence` scores
// (foreground_score.hpp). The thresholds are the measured values less a margin (see
// docs/PERFORMANCE.md); they fail when the mask's IoU or the share of the right-visible foreground
// given a disparity regresses.
#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include "engine.hpp"
#include "foreground_score.hpp"
#include "middlebury_background.hpp"
#include "synthetic/synthetic_scene.hpp"
#include "synthetic_input.hpp"

using namespace stereod;

namespace {

// Measured at the defaults (stereod-bench sequence on the same frames, docs/PERFORMANCE.md): IoU
// 0.954 (0.937 without depth_in_front, 0.934 without depth_ghosts), shadow called foreground
// 0.09 %, right-visible foreground without disparity 0.59 % (all of its bad 1.0; 0.66 % before the
// refinement became the default). Without support_absorption (background_ops.hpp: absorb_after,
// relit; on by default since 2026-11-23) IoU 0.828, shadow 0.6 %; absorb_frames 0 scores IoU 0.162;
// target_margin 8 leaves 2.35 % without disparity.
constexpr double kIouAtLeast = 0.90;
constexpr double kPlainRuleIouAtLeast = 0.80;
constexpr double kShadowAtMost = 0.02;
constexpr double kMissingAtMost = 0.015;
constexpr double kBad1AtMost = 0.015;

std::string data(const std::string& scene) {
  return std::string(STEREOD_TEST_DATA) + "/middlebury_v2/" + scene;
}

// stop_frames, object_size: objects that stand still halfway along their tracks, larger ones.
ForegroundScore run_teddy(const BackgroundParams& bp, int seed = 11, int stop_frames = 0,
                          double object_size = 1.0) {
  SyntheticOptions so;
  so.width = 320;
  so.height = 240;
  so.max_disparity = 80;  // teddy's crop reaches 44: objects at 45 .. 79
  so.seed = seed;
  so.stop_frames = stop_frames;
  so.object_size = object_size;
  const SyntheticScene scene(so, load_middlebury_background(data("teddy")),
                             load_middlebury_background(data("cones")).left);
  EngineOptions eo;
  eo.width = so.width;
  eo.height = so.height;
  eo.stereo.max_disparity = so.max_disparity;
  eo.background = bp;
  eo.cpu_threads = 2;
  auto engine = make_engine("cpu", eo);
  ForegroundScore score;
  SyntheticFrame f;
  for (int i = 0; i < bp.warmup + 40; ++i) {
    scene.render(i, f);
    EXPECT_EQ(engine->submit(test::synthetic_input(f, i)), SubmitStatus::kAccepted);
    auto r = engine->poll(std::chrono::seconds(60));
    if (!r || !r->ok) {
      ADD_FAILURE() << "frame " << i << " failed";
      return score;
    }
    if (r->background_active) score.add(r->disparity, r->foreground, f.disparity, f.mask);
  }
  return score;
}

void print(const char* what, const ForegroundScore& s) {
  std::printf(
      "[ SCORE    ] %s: %lld frames, IoU %.4f (precision %.4f, recall %.4f), shadow called "
      "foreground %.2f%%, right-visible foreground: bad 1.0 %.2f%%, without disparity %.2f%%\n",
      what, s.frames, s.iou(), s.precision(), s.recall(), 100 * s.shadow_called_foreground(),
      100 * s.bad1_visible(), 100 * s.visible_without_disparity());
}

}  // namespace

TEST(ForegroundSequence, RealBackgroundMaskAndCompleteness) {
  const BackgroundParams defaults;
  const ForegroundScore s = run_teddy(defaults);
  print("defaults", s);
  ASSERT_EQ(s.frames, 40);
  EXPECT_GE(s.iou(), kIouAtLeast);
  EXPECT_LE(s.shadow_called_foreground(), kShadowAtMost);
  EXPECT_LE(s.visible_without_disparity(), kMissingAtMost);
  EXPECT_LE(s.bad1_visible(), kBad1AtMost);

  // The check catches a loss of completeness: widening the right mask for matching
  // (background.target_margin) lets background candidates beside the objects win at their edges
  // on this scene, and leaves more of the right-visible foreground without disparity.
  BackgroundParams wide;
  wide.target_margin = 8;
  const ForegroundScore n = run_teddy(wide);
  print("target_margin 8", n);
  EXPECT_GT(n.visible_without_disparity(), kMissingAtMost);

  // Without the absorption rules of issue 13 (the plain rule: absorb_frames whatever the model's
  // support): the warm-up's ghosts stay longer, and the mask's IoU is lower.
  BackgroundParams plain;
  plain.support_absorption = false;
  plain.depth_ghosts = false;
  const ForegroundScore a = run_teddy(plain);
  print("support_absorption false", a);
  EXPECT_GE(a.iou(), kPlainRuleIouAtLeast);
  EXPECT_LT(a.iou(), s.iou());
  EXPECT_LE(a.shadow_called_foreground(), kShadowAtMost);
  EXPECT_LE(a.visible_without_disparity(), kMissingAtMost);

  // Ghosts seen in depth (on by default) gain nothing here, where nothing stands through the
  // warm-up, and must not cost: with one record instead of two in a row (shown_again), the
  // objects' mismatches at the left border, where the right view lacks their partners, were taken
  // for the scene behind and absorbed: IoU 0.934 -> 0.903; with two, 0.931 (depth_lag 8). Objects
  // seen in front (depth_in_front, on by default) gain here: 0.954 at depth_lag 3. Applied without
  // the stillness test of in_front_counters, the flag of a stray near match, read 8 frames late,
  // gave full support to the ghost the object had left by then (0.900); at depth_lag 3, with one
  // record instead of two in a row, the ghost's own stray near matches did (0.904).
  BackgroundParams no_depth;
  no_depth.depth_ghosts = false;
  const ForegroundScore g = run_teddy(no_depth);
  print("depth_ghosts false", g);
  EXPECT_GE(s.iou(), g.iou());
  BackgroundParams behind_only;
  behind_only.depth_in_front = false;
  const ForegroundScore b = run_teddy(behind_only);
  print("depth_in_front false", b);
  EXPECT_GE(b.iou(), g.iou() - 0.006);
  EXPECT_GE(s.iou(), b.iou() + 0.005);
}

// Ghosts seen in depth (background.depth_ghosts): larger objects that stop halfway along their
// tracks, so that some stand through the warm-up and leave ghosts. Measured (docs/PERFORMANCE.md,
// "Ghosts seen in depth"): seed 12 IoU 0.665 -> 0.720 (shadow called foreground 60 -> 52 %: it
// falls on the ghosts), recall unchanged; seed 16, where an object stood through the warm-up and
// another, farther, stops on its spot later, 0.526 -> 0.600 with recall 0.983 -> 0.983 (with a
// margin of 2 pixels instead of the share of the depth it lost a tenth of its objects, recall
// 0.895). With objects seen in front too and depth read 3 frames late instead of 8 (depth_in_front,
// depth_lag: the defaults since session 17): seed 12 0.757 (0.719 at depth_lag 8), seed 16 0.723
// (0.639 without depth_in_front; docs/PERFORMANCE.md, "Objects seen in front", "How late depth is
// read").
TEST(ForegroundSequence, DepthGhostsGoSooner) {
  BackgroundParams on;
  on.depth_ghosts = true;
  BackgroundParams off;
  off.depth_ghosts = false;
  const ForegroundScore a12 = run_teddy(off, 12, 20, 1.3), b12 = run_teddy(on, 12, 20, 1.3);
  print("seed 12, stops", a12);
  print("seed 12, stops, depth_ghosts", b12);
  EXPECT_GE(b12.iou(), a12.iou() + 0.04);
  EXPECT_GE(b12.recall(), a12.recall() - 0.002);
  BackgroundParams late = on;
  late.depth_lag = kMaxDepthLag;
  const ForegroundScore c12 = run_teddy(late, 12, 20, 1.3);
  print("seed 12, stops, depth_ghosts at depth_lag 8", c12);
  EXPECT_GE(b12.iou(), c12.iou() + 0.02);
  const ForegroundScore a16 = run_teddy(off, 16, 20, 1.3), b16 = run_teddy(on, 16, 20, 1.3);
  print("seed 16, stops", a16);
  print("seed 16, stops, depth_ghosts", b16);
  EXPECT_GE(b16.iou(), a16.iou() + 0.04);
  EXPECT_GE(b16.recall(), a16.recall() - 0.01);
  BackgroundParams behind_only = on;
  behind_only.depth_in_front = false;
  const ForegroundScore c16 = run_teddy(behind_only, 16, 20, 1.3);
  print("seed 16, stops, depth_ghosts without depth_in_front", c16);
  EXPECT_GE(b16.iou(), c16.iou() + 0.04);
}
