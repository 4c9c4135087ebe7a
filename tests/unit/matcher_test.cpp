// The whole matcher on constructed scenes whose answer is unambiguous.
#include <gtest/gtest.h>

#include <cmath>

#include "plane_scenes.hpp"
#include "stereo/matcher.hpp"
#include "stereo/pixel_ops.hpp"

using namespace stereod;

namespace {

StereoOutput run(const StereoParams& p, const SyntheticPair& s, unsigned threads = 2) {
  CpuStereoMatcher m(p, threads);
  StereoInput in;
  in.left = s.left.view();
  in.right = s.right.view();
  StereoOutput out;
  m.compute(in, out);
  return out;
}

// Pixels that are visible in both views, at least `margin` from the left edge's occlusion and from
// any change of true disparity: there the answer is exactly the true disparity.
struct Evaluation {
  long long evaluated = 0, wrong = 0, invalid = 0;
};

Evaluation evaluate(const SyntheticPair& s, const Disparity16& d, int margin, bool exact) {
  Evaluation e;
  for (int y = margin; y < s.left.height() - margin; ++y) {
    for (int x = margin; x < s.left.width() - margin; ++x) {
      bool clean = true;
      const float t = s.truth(x, y);
      for (int v = -margin; v <= margin && clean; ++v) {
        for (int u = -margin; u <= margin && clean; ++u) {
          clean = s.visible(x + u, y + v) && s.truth(x + u, y + v) == t;
        }
      }
      if (!clean) continue;
      ++e.evaluated;
      if (d(x, y) == kInvalidDisparity) {
        ++e.invalid;
        ++e.wrong;
      } else if (exact
                     ? d(x, y) != t * kSubpixelScale
                     : std::fabs(d(x, y) / double(kSubpixelScale) - static_cast<double>(t)) > 0.5) {
        ++e.wrong;
      }
    }
  }
  return e;
}

}  // namespace

class ConstructedScenes : public ::testing::TestWithParam<MatchingCost> {
 protected:
  StereoParams params() const {
    StereoParams p;
    p.cost = GetParam();
    p.subpixel = false;  // integer answers are exact; subpixel is checked separately
    return p;
  }
};

TEST_P(ConstructedScenes, FrontoParallelPlaneAtEachLevelCount) {
  for (int levels = 1; levels <= 4; ++levels) {
    StereoParams p = params();
    p.max_disparity = 64;
    p.levels = levels;
    std::vector<PlaneLayer> layers(1);
    layers[0].disparity = 23;
    const auto s = render_planes(160, 96, layers);
    const auto out = run(p, s);
    const auto e = evaluate(s, out.left, 6, true);
    EXPECT_GT(e.evaluated, 8000);
    EXPECT_EQ(e.wrong, 0) << "levels " << levels;
  }
}

TEST_P(ConstructedScenes, StepEdgeWithOcclusion) {
  StereoParams p = params();
  p.max_disparity = 48;
  std::vector<PlaneLayer> layers(2);
  layers[0].disparity = 6;
  layers[0].seed = 3;
  layers[1] = {60, 20, 130, 80, 30, 0, 4};
  const auto s = render_planes(200, 100, layers);
  const auto out = run(p, s);
  const auto e = evaluate(s, out.left, 6, true);
  EXPECT_GT(e.evaluated, 6000);
  EXPECT_EQ(e.wrong, 0);
  // The box's occlusion shadow (left pixels hidden in the right view) must not take the box's
  // disparity: the cross-check removes what cannot be matched.
  long long shadow = 0, shadow_box = 0;
  for (int y = 25; y < 75; ++y) {
    for (int x = 0; x < 200; ++x) {
      if (s.visible(x, y) || x < 40) continue;
      ++shadow;
      shadow_box += out.left(x, y) != kInvalidDisparity && out.left(x, y) >= 16 * 20;
    }
  }
  EXPECT_GT(shadow, 500);
  EXPECT_EQ(shadow_box, 0);
}

TEST_P(ConstructedScenes, SlantedPlane) {
  StereoParams p = params();
  p.max_disparity = 64;
  std::vector<PlaneLayer> layers(1);
  layers[0].disparity = 10;
  layers[0].rows_per_step = 12;  // 10 at the top, 17 at the bottom
  const auto s = render_planes(180, 96, layers);
  const auto out = run(p, s);
  // Away from each row step the disparity is exact.
  const auto e = evaluate(s, out.left, 5, true);
  EXPECT_GT(e.evaluated, 1500);
  EXPECT_EQ(e.wrong, 0);
}

INSTANTIATE_TEST_SUITE_P(AllCosts, ConstructedScenes,
                         ::testing::Values(MatchingCost::kAbsDiff, MatchingCost::kCensus,
                                           MatchingCost::kAdCensus),
                         [](const auto& tp) { return std::string(to_string(tp.param)); });

TEST(Matcher, SubpixelStaysWithinHalfAPixelOfAnIntegerPlane) {
  StereoParams p;
  p.max_disparity = 64;
  std::vector<PlaneLayer> layers(1);
  layers[0].disparity = 17;
  const auto s = render_planes(160, 96, layers);
  const auto out = run(p, s);
  const auto e = evaluate(s, out.left, 6, false);
  EXPECT_EQ(e.wrong, 0);
}

TEST(Matcher, RightReferenceMapMirrorsTheLeft) {
  StereoParams p;
  p.max_disparity = 48;
  p.subpixel = false;
  std::vector<PlaneLayer> layers(1);
  layers[0].disparity = 12;
  const auto s = render_planes(160, 80, layers);
  const auto out = run(p, s);
  long long right_ok = 0, right_n = 0;
  for (int y = 8; y < 72; ++y) {
    for (int x = 8; x < 160 - 12 - 8; ++x) {
      ++right_n;
      right_ok += out.right(x, y) == 16 * 12;
    }
  }
  EXPECT_EQ(right_ok, right_n);
}

TEST(Matcher, DeterministicWhateverTheThreadCount) {
  StereoParams p;
  p.max_disparity = 32;
  p.fill = true;
  std::vector<PlaneLayer> layers(2);
  layers[0].disparity = 5;
  layers[1] = {20, 10, 70, 50, 14, 0, 9};
  const auto s = render_planes(97, 61, layers);
  const auto a = run(p, s, 1);
  const auto b = run(p, s, 3);
  const auto c = run(p, s, 2);
  EXPECT_EQ(a.left, b.left);
  EXPECT_EQ(a.right, b.right);
  EXPECT_EQ(a.left, c.left);
}

TEST(Matcher, BackgroundPixelsGetNoDisparityAndFillLeavesThem) {
  StereoParams p;
  p.max_disparity = 32;
  p.levels = 2;
  p.fill = true;
  std::vector<PlaneLayer> layers(1);
  layers[0].disparity = 9;
  const auto s = render_planes(96, 64, layers);
  // Left half background at every level; right image all foreground.
  std::vector<Gray8> left_masks, right_masks;
  for (int sc = 0; sc < 2; ++sc) {
    const int w = level_side(96, sc), h = level_side(64, sc);
    Gray8 lm(w, h, 1), rm(w, h, 1);
    for (int y = 0; y < h; ++y) {
      for (int x = 0; x < w / 2; ++x) lm(x, y) = 0;
    }
    left_masks.push_back(lm);
    right_masks.push_back(rm);
  }
  CpuStereoMatcher m(p, 2);
  StereoInput in;
  in.left = s.left.view();
  in.right = s.right.view();
  for (auto& lm : left_masks) in.left_foreground.push_back(lm.view());
  for (auto& rm : right_masks) in.right_foreground.push_back(rm.view());
  StereoOutput out;
  m.compute(in, out);
  for (int y = 0; y < 64; ++y) {
    for (int x = 0; x < 48; ++x) ASSERT_EQ(out.left(x, y), kInvalidDisparity) << x << "," << y;
    for (int x = 56; x < 90; ++x) ASSERT_NE(out.left(x, y), kInvalidDisparity) << x << "," << y;
  }
  // Masks that do not cover every level are an error, not a crash.
  in.left_foreground.pop_back();
  EXPECT_THROW(m.compute(in, out), ParameterError);
}

TEST(Matcher, ParametersCanChangeBetweenFrames) {
  StereoParams p;
  p.max_disparity = 32;
  std::vector<PlaneLayer> layers(1);
  layers[0].disparity = 7;
  const auto s = render_planes(96, 64, layers);
  CpuStereoMatcher m(p, 2);
  StereoInput in;
  in.left = s.left.view();
  in.right = s.right.view();
  StereoOutput a, b;
  m.compute(in, a);
  p.levels = 1;
  p.cost = MatchingCost::kAbsDiff;
  m.set_params(p);
  m.compute(in, b);
  EXPECT_EQ(a.levels_used, 3);  // 32, 16, 8 disparities
  EXPECT_EQ(b.levels_used, 1);
  StereoParams bad = p;
  bad.subwindow = 2;
  EXPECT_THROW(m.set_params(bad), ParameterError);
  EXPECT_EQ(m.params().subwindow, 3);  // the last good parameters stay
}
