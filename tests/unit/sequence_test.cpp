// A short synthetic video through the CPU engine with background modeling on: the mask finds the
// moving objects and ignores the shadow, and foreground pixels get the right disparity. Small
// enough for CI; the 300-frame figures are in docs/PERFORMANCE.md.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>

#include "engine.hpp"
#include "stereo/pixel_ops.hpp"
#include "synthetic/synthetic_scene.hpp"
#include "synthetic_input.hpp"

using namespace stereod;

TEST(SyntheticSequence, MaskAndDisparityEndToEnd) {
  SyntheticOptions so;
  so.width = 320;
  so.height = 240;
  so.max_disparity = 48;
  so.seed = 5;
  SyntheticScene scene(so);
  EngineOptions eo;
  eo.width = so.width;
  eo.height = so.height;
  eo.stereo.max_disparity = 48;
  eo.stereo.fill = true;
  eo.cpu_threads = 2;
  auto engine = make_engine("cpu", eo);

  long long tp = 0, fp = 0, fn = 0, shadow = 0, shadow_fg = 0, fg = 0, bad = 0;
  SyntheticFrame f;
  for (int i = 0; i < 140; ++i) {
    scene.render(i, f);
    ASSERT_EQ(engine->submit(test::synthetic_input(f, i)), SubmitStatus::kAccepted);
    auto r = engine->poll(std::chrono::seconds(60));
    ASSERT_TRUE(r && r->ok);
    ASSERT_EQ(r->background_active, i >= 60);  // the default warm-up
    if (i < 60) {
      for (int y = 0; y < so.height; y += 7) ASSERT_EQ(r->foreground(y % so.width, y), 255);
      continue;
    }
    EXPECT_LT(r->tested_fraction, 0.25);
    for (int y = 0; y < so.height; ++y) {
      for (int x = 0; x < so.width; ++x) {
        const bool truth = f.mask(x, y) == kMaskForeground;
        const bool said = r->foreground(x, y) != 0;
        tp += truth && said;
        fp += !truth && said;
        fn += truth && !said;
        if (f.mask(x, y) == kMaskShadow) {
          ++shadow;
          shadow_fg += said;
        }
        if (!truth || !std::isfinite(f.disparity(x, y))) continue;
        ++fg;
        const std::uint16_t d = r->disparity(x, y);
        bad += d == kInvalidDisparity ||
               std::fabs(d / 16.0 - static_cast<double>(f.disparity(x, y))) > 1.0;
      }
    }
  }
  const double iou = double(tp) / double(tp + fp + fn);
  std::printf("IoU %.3f, shadow called background %.1f%%, bad 1.0 over foreground %.2f%%\n", iou,
              shadow ? 100.0 * (shadow - shadow_fg) / shadow : 100.0, 100.0 * bad / fg);
  EXPECT_GT(fg, 10000);
  EXPECT_GT(iou, 0.80);
  if (shadow > 0) {
    EXPECT_GT(double(shadow - shadow_fg) / shadow, 0.85);
  }
  EXPECT_LT(double(bad) / fg, 0.05);
}
