// The synthetic scene (pipeline/synthetic): determinism, exact ground truth in both views, masks,
// shadow, noise and flicker, motion, real backgrounds and option checking.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <set>
#include <stdexcept>
#include <thread>
#include <vector>

#include "synthetic/synthetic_scene.hpp"

using namespace stereod;

namespace {

SyntheticOptions small_options() {
  SyntheticOptions o;
  o.width = 160;
  o.height = 120;
  o.min_disparity = 4;
  o.max_disparity = 40;
  return o;
}

// No noise, no flicker, no shadow: corresponding pixels must be identical.
SyntheticOptions clean(SyntheticOptions o) {
  o.noise_sigma = 0;
  o.flicker = 0;
  o.shadow = false;
  return o;
}

// Objects lie in front of this, the generated background at or behind it.
int background_top(const SyntheticOptions& o) {
  return o.min_disparity + (o.max_disparity - o.min_disparity) / 3;
}

bool same_pixel(const RgbImage& a, int xa, const RgbImage& b, int xb, int y) {
  for (int c = 0; c < 3; ++c) {
    if (a.row(y)[3 * xa + c] != b.row(y)[3 * xb + c]) return false;
  }
  return true;
}

int luma_at(const RgbImage& img, int x, int y) {
  const std::uint8_t* p = img.row(y) + 3 * x;
  return luma(p[0], p[1], p[2]);
}

void expect_same(const SyntheticFrame& a, const SyntheticFrame& b) {
  EXPECT_EQ(a.index, b.index);
  EXPECT_EQ(a.time_ns, b.time_ns);
  EXPECT_TRUE(a.left.pixels == b.left.pixels);
  EXPECT_TRUE(a.right.pixels == b.right.pixels);
  EXPECT_EQ(a.left_gray, b.left_gray);
  EXPECT_EQ(a.right_gray, b.right_gray);
  EXPECT_EQ(a.disparity, b.disparity);
  EXPECT_EQ(a.right_disparity, b.right_disparity);
  EXPECT_EQ(a.mask, b.mask);
  EXPECT_EQ(a.right_mask, b.right_mask);
}

// Checks every correspondence of one frame; `matched` counts the left pixels with a visible
// partner.
void check_correspondences(const SyntheticFrame& f, long long& matched) {
  const int w = f.left.width, h = f.left.height;
  matched = 0;
  for (int y = 0; y < h; ++y) {
    for (int x = 0; x < w; ++x) {
      const float d = f.disparity(x, y);
      if (!std::isfinite(d)) continue;
      EXPECT_EQ(d, std::floor(d)) << "generated disparities are integers";
      const int xr = x - static_cast<int>(d);
      if (xr < 0) continue;
      // What the right view sees there is at least as near as this point.
      const float dr = f.right_disparity(xr, y);
      ASSERT_TRUE(std::isfinite(dr)) << x << "," << y;
      ASSERT_GE(dr, d) << x << "," << y;
      if (dr != d) continue;  // occluded in the right view
      ++matched;
      EXPECT_EQ(f.mask(x, y), f.right_mask(xr, y)) << x << "," << y;
      ASSERT_TRUE(same_pixel(f.left, x, f.right, xr, y))
          << "frame " << f.index << " " << x << "," << y << " d=" << d;
    }
  }
  // And from the right view back.
  for (int y = 0; y < h; ++y) {
    for (int xr = 0; xr < w; ++xr) {
      const float d = f.right_disparity(xr, y);
      if (!std::isfinite(d)) continue;
      const int x = xr + static_cast<int>(d);
      if (x >= w || f.disparity(x, y) != d) continue;
      ASSERT_TRUE(same_pixel(f.left, x, f.right, xr, y)) << xr << "," << y;
    }
  }
}

}  // namespace

TEST(SyntheticScene, SameFrameIsByteIdenticalInAnyOrder) {
  const SyntheticScene scene(small_options());
  SyntheticFrame first, other, again;
  scene.render(7, first);
  scene.render(3, other);
  scene.render(40, other);
  scene.render(7, other);  // reusing buffers that held other frames
  expect_same(first, other);
  const SyntheticScene twin(small_options());
  twin.render(7, again);
  expect_same(first, again);
}

TEST(SyntheticScene, RendersConcurrently) {
  const SyntheticScene scene(small_options());
  constexpr int kFrames = 12;
  std::vector<SyntheticFrame> parallel(kFrames);
  std::vector<std::thread> threads;
  for (int t = 0; t < 3; ++t) {
    threads.emplace_back([&, t] {
      for (int i = kFrames - 1 - t; i >= 0; i -= 3) scene.render(i, parallel[i]);
    });
  }
  for (auto& t : threads) t.join();
  SyntheticFrame f;
  for (int i = 0; i < kFrames; ++i) {
    scene.render(i, f);
    expect_same(f, parallel[i]);
  }
}

TEST(SyntheticScene, DifferentSeedsDiffer) {
  SyntheticOptions a = small_options(), b = small_options();
  b.seed = a.seed + 1;
  SyntheticFrame fa, fb;
  SyntheticScene(a).render(0, fa);
  SyntheticScene(b).render(0, fb);
  EXPECT_FALSE(fa.left.pixels == fb.left.pixels);
  EXPECT_NE(fa.disparity, fb.disparity);
}

TEST(SyntheticScene, FramesCarryIndexAndTime) {
  SyntheticOptions o = small_options();
  o.frame_rate = 25;
  SyntheticFrame f;
  SyntheticScene(o).render(50, f);
  EXPECT_EQ(f.index, 50);
  EXPECT_EQ(f.time_ns, 2000000000);
  EXPECT_THROW(SyntheticScene(o).render(-1, f), std::invalid_argument);
}

TEST(SyntheticScene, GroundTruthIsExactInBothViews) {
  SyntheticOptions o = clean(small_options());
  o.objects = 6;  // more occlusions between objects
  const SyntheticScene scene(o);
  SyntheticFrame f;
  for (int i = 0; i < 200; i += 7) {
    scene.render(i, f);
    long long matched = 0;
    check_correspondences(f, matched);
    ASSERT_FALSE(HasFatalFailure());
    // Most of the left view is seen by the right one (the rest: occlusions, the left border).
    EXPECT_GT(matched, o.width * o.height / 2) << "frame " << i;
  }
}

TEST(SyntheticScene, ShadowLiesOnTheSurfaceInBothViews) {
  SyntheticOptions o = clean(small_options());
  o.shadow = true;
  const SyntheticScene scene(o);
  SyntheticFrame f;
  long long shadow = 0;
  for (int i = 0; i < 300; i += 10) {
    scene.render(i, f);
    long long matched = 0;
    check_correspondences(f, matched);
    ASSERT_FALSE(HasFatalFailure());
    for (auto m : f.mask.pixels()) shadow += m == kMaskShadow;
  }
  EXPECT_GT(shadow, 0);
}

TEST(SyntheticScene, ForegroundMaskIsExactlyWhereObjectsAreSeen) {
  const SyntheticOptions o = small_options();
  const SyntheticScene scene(o);
  SyntheticFrame f;
  long long foreground = 0;
  for (int i = 0; i < 300; i += 11) {
    scene.render(i, f);
    for (int view = 0; view < 2; ++view) {
      const Image<float>& d = view ? f.right_disparity : f.disparity;
      const Gray8& m = view ? f.right_mask : f.mask;
      for (std::size_t k = 0; k < m.size(); ++k) {
        const bool object = std::isfinite(d.data()[k]) && d.data()[k] > background_top(o);
        ASSERT_EQ(m.data()[k] == kMaskForeground, object) << "frame " << i << " view " << view;
        EXPECT_LE(d.data()[k], o.max_disparity - 1);
        foreground += object;
      }
    }
  }
  EXPECT_GT(foreground, 0);
}

TEST(SyntheticScene, ShadowDarkensOnlyBackgroundAndIsMarkedWhereItIsNoticeable) {
  SyntheticOptions lit = clean(small_options());
  SyntheticOptions shaded = lit;
  shaded.shadow = true;
  const SyntheticScene a(lit), b(shaded);
  SyntheticFrame fa, fb;
  long long marked = 0;
  for (int i = 0; i < 300; i += 9) {
    a.render(i, fa);
    b.render(i, fb);
    EXPECT_EQ(fa.disparity, fb.disparity);
    for (int view = 0; view < 2; ++view) {
      const RgbImage& pa = view ? fa.right : fa.left;
      const RgbImage& pb = view ? fb.right : fb.left;
      const Gray8& m = view ? fb.right_mask : fb.mask;
      for (int y = 0; y < lit.height; ++y) {
        for (int x = 0; x < lit.width; ++x) {
          const int before = luma_at(pa, x, y), after = luma_at(pb, x, y);
          switch (m(x, y)) {
            case kMaskForeground:
              ASSERT_TRUE(same_pixel(pa, x, pb, x, y)) << "a shadow on an object";
              break;
            case kMaskShadow:
              ++marked;
              ASSERT_LT(after, before);
              ASSERT_LE(after, 0.9 * before + 1);
              // R, G and B scale alike: hue and saturation stay.
              for (int c = 0; c < 3; ++c) {
                const int u = pa.row(y)[3 * x + c], s = pb.row(y)[3 * x + c];
                ASSERT_NEAR(static_cast<double>(s) / u, static_cast<double>(after) / before,
                            2.0 / u + 0.02);
              }
              break;
            default:
              ASSERT_EQ(m(x, y), kMaskBackground);
              ASSERT_LE(after, before);
              ASSERT_GE(after, 0.9 * before - 1) << "darkened by more than 10 % but not marked";
          }
        }
      }
    }
  }
  EXPECT_GT(marked, 0);
}

TEST(SyntheticScene, NoiseHasTheRequestedSigmaAndFlickerStaysInRange) {
  SyntheticOptions o = clean(small_options());
  o.objects = 0;
  SyntheticOptions noisy = o;
  noisy.noise_sigma = 3;
  SyntheticOptions flickering = o;
  flickering.flicker = 0.2;
  const SyntheticScene still(o), noise(noisy), flicker(flickering);
  SyntheticFrame s, n, fl;
  still.render(0, s);
  double sum = 0, sum2 = 0, count = 0;
  double previous_gain = 0;
  for (int i = 0; i < 60; ++i) {
    noise.render(i, n);
    for (std::size_t k = 0; k < s.left.pixels.size(); ++k) {
      const double e = static_cast<double>(n.left.pixels[k]) - s.left.pixels[k];
      sum += e;
      sum2 += e * e;
      ++count;
    }
    // One gain for the whole frame and both views, within 1 +- flicker, changing smoothly.
    flicker.render(i, fl);
    double lit = 0, seen = 0, lit_r = 0, seen_r = 0;
    for (std::size_t k = 0; k < s.left.pixels.size(); ++k) {
      lit += s.left.pixels[k];
      seen += fl.left.pixels[k];
      lit_r += s.right.pixels[k];
      seen_r += fl.right.pixels[k];
    }
    const double gain = seen / lit;
    EXPECT_NEAR(gain, seen_r / lit_r, 0.005);
    EXPECT_GT(gain, 0.8 - 0.01);
    EXPECT_LT(gain, 1.2 + 0.01);
    if (i > 0) {
      EXPECT_LT(std::fabs(gain - previous_gain), 0.05) << "frame " << i;
    }
    previous_gain = gain;
  }
  const double mean = sum / count;
  EXPECT_NEAR(mean, 0, 0.1);
  EXPECT_NEAR(std::sqrt(sum2 / count - mean * mean), 3.0, 0.15);
  // Noise differs between the views and between frames.
  SyntheticFrame n2;
  noise.render(1, n2);
  noise.render(0, n);
  EXPECT_FALSE(n.left.pixels == n2.left.pixels);
}

TEST(SyntheticScene, GreyScenesHaveEqualChannels) {
  SyntheticOptions o = small_options();
  o.color = false;
  SyntheticFrame f;
  SyntheticScene(o).render(5, f);
  for (int y = 0; y < o.height; ++y) {
    for (int x = 0; x < o.width; ++x) {
      const std::uint8_t* p = f.left.row(y) + 3 * x;
      ASSERT_TRUE(p[0] == p[1] && p[1] == p[2]);
      ASSERT_EQ(f.left_gray(x, y), p[0]);
    }
  }
}

TEST(SyntheticScene, ObjectsComeAndGoAndCoverAboutFifteenPercent) {
  SyntheticOptions o;  // the defaults: 640x480, 3 objects
  o.noise_sigma = 0;   // masks do not depend on noise; saves time
  const SyntheticScene scene(o);
  SyntheticFrame f;
  double coverage = 0, on_screen = 0;
  std::set<float> first, last, all;
  constexpr int kFrames = 300;
  for (int i = 0; i < kFrames; ++i) {
    scene.render(i, f);
    std::set<float> seen;
    long long fg = 0;
    for (std::size_t k = 0; k < f.mask.size(); ++k) {
      if (f.mask.data()[k] != kMaskForeground) continue;
      ++fg;
      seen.insert(f.disparity.data()[k]);
    }
    coverage += static_cast<double>(fg) / f.mask.size();
    on_screen += seen.size();
    all.insert(seen.begin(), seen.end());
    if (i == 0) first = seen;
    if (i == kFrames - 1) last = seen;
  }
  coverage = 100 * coverage / kFrames;
  on_screen /= kFrames;
  EXPECT_GE(coverage, 5);
  EXPECT_LE(coverage, 30);
  // Objects (told apart by their disparities) enter and leave: more than ever at once, and the
  // first frame's set is not the last one's.
  EXPECT_GT(all.size(), static_cast<std::size_t>(o.objects) + 2);
  EXPECT_NE(first, last);
  EXPECT_GT(on_screen, o.objects - 1.5);
  EXPECT_LT(on_screen, o.objects + 1.0);
}

TEST(SyntheticScene, RealBackgroundIsCroppedAndItsRightTruthWarped) {
  // A 200x100 "real" pair: a plane at disparity 5 with a nearer box at 12, and unknown pixels.
  SyntheticBackground real;
  real.left.resize(200, 100);
  real.right.resize(200, 100);
  real.left_disparity.resize(200, 100, 5.0f);
  for (int y = 30; y < 70; ++y) {
    for (int x = 80; x < 140; ++x) real.left_disparity(x, y) = 12.25f;
  }
  real.left_disparity(10, 10) = std::numeric_limits<float>::infinity();
  real.left_disparity(11, 10) = std::numeric_limits<float>::quiet_NaN();
  for (std::size_t k = 0; k < real.left.pixels.size(); ++k) {
    real.left.pixels[k] = static_cast<std::uint8_t>(k * 7);
    real.right.pixels[k] = static_cast<std::uint8_t>(k * 13);
  }
  SyntheticOptions o = clean(small_options());  // 160x120 is taller than the background
  o.height = 80;
  o.max_disparity = 40;
  SyntheticFrame f;
  const SyntheticScene scene(o, real);
  scene.render(0, f);
  const int ox = 20, oy = 10;
  // The reference right truth: forward-warp the whole left truth, nearer wins.
  Image<float> right(200, 100, std::numeric_limits<float>::infinity());
  for (int y = 0; y < 100; ++y) {
    for (int x = 0; x < 200; ++x) {
      const float d = real.left_disparity(x, y);
      if (!std::isfinite(d)) continue;
      const int xr = x - static_cast<int>(std::floor(d + 0.5f));
      if (xr >= 0 && (!std::isfinite(right(xr, y)) || d > right(xr, y))) right(xr, y) = d;
    }
  }
  long long background = 0;
  for (int y = 0; y < o.height; ++y) {
    for (int x = 0; x < o.width; ++x) {
      if (f.mask(x, y) != kMaskForeground) {
        ++background;
        ASSERT_TRUE(std::equal(f.left.row(y) + 3 * x, f.left.row(y) + 3 * x + 3,
                               real.left.row(y + oy) + 3 * (x + ox)));
        const float d = real.left_disparity(x + ox, y + oy);
        if (std::isfinite(d)) {
          ASSERT_EQ(f.disparity(x, y), d);
        } else {
          ASSERT_TRUE(std::isinf(f.disparity(x, y)));
        }
      } else {
        ASSERT_GT(f.disparity(x, y), 13.0f);  // in front of the nearest background point
      }
      if (f.right_mask(x, y) != kMaskForeground) {
        ASSERT_TRUE(std::equal(f.right.row(y) + 3 * x, f.right.row(y) + 3 * x + 3,
                               real.right.row(y + oy) + 3 * (x + ox)));
        const float want = right(x + ox, y + oy), got = f.right_disparity(x, y);
        ASSERT_TRUE(want == got || (std::isinf(want) && std::isinf(got))) << x << "," << y;
      }
    }
  }
  EXPECT_GT(background, 0);

  o.max_disparity = 14;  // no room in front of 12.25
  o.min_disparity = 4;
  try {
    SyntheticScene bad(o, real);
    FAIL() << "accepted a max_disparity behind the background";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("synthetic.max_disparity = 14"), std::string::npos);
  }
  o.max_disparity = 40;
  o.width = 240;
  try {
    SyntheticScene bad(o, real);
    FAIL() << "accepted a background smaller than the frame";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("synthetic.width = 240"), std::string::npos);
  }
}

TEST(SyntheticOptions, EveryErrorNamesItsOptionAndValue) {
  struct Case {
    const char* expected;
    void (*change)(SyntheticOptions&);
  };
  const Case cases[] = {
      {"synthetic.width = 0", [](SyntheticOptions& o) { o.width = 0; }},
      {"synthetic.width = 15", [](SyntheticOptions& o) { o.width = 15; }},
      {"synthetic.height = -4", [](SyntheticOptions& o) { o.height = -4; }},
      {"synthetic.height = 15", [](SyntheticOptions& o) { o.height = 15; }},
      {"synthetic.objects = -1", [](SyntheticOptions& o) { o.objects = -1; }},
      {"synthetic.objects = 65", [](SyntheticOptions& o) { o.objects = 65; }},
      {"synthetic.min_disparity = -1", [](SyntheticOptions& o) { o.min_disparity = -1; }},
      {"synthetic.max_disparity = 16", [](SyntheticOptions& o) { o.max_disparity = 16; }},
      {"synthetic.max_disparity = 320", [](SyntheticOptions& o) { o.max_disparity = 320; }},
      {"synthetic.noise_sigma = -0.5", [](SyntheticOptions& o) { o.noise_sigma = -0.5; }},
      {"synthetic.noise_sigma = nan",
       [](SyntheticOptions& o) { o.noise_sigma = std::numeric_limits<double>::quiet_NaN(); }},
      {"synthetic.flicker = 0.5", [](SyntheticOptions& o) { o.flicker = 0.5; }},
      {"synthetic.flicker = -0.1", [](SyntheticOptions& o) { o.flicker = -0.1; }},
      {"synthetic.frame_rate = 0", [](SyntheticOptions& o) { o.frame_rate = 0; }},
      {"synthetic.speed = 0", [](SyntheticOptions& o) { o.speed = 0; }},
      {"synthetic.object_size = 4", [](SyntheticOptions& o) { o.object_size = 4; }},
      {"synthetic.stop_frames = -1", [](SyntheticOptions& o) { o.stop_frames = -1; }},
  };
  for (const auto& c : cases) {
    SyntheticOptions o;
    c.change(o);
    try {
      SyntheticScene scene(o);
      ADD_FAILURE() << "accepted: " << c.expected;
    } catch (const std::invalid_argument& e) {
      EXPECT_EQ(std::string(e.what()).rfind(c.expected, 0), 0u) << e.what();
    }
  }
  // The limits themselves are fine.
  SyntheticOptions edge;
  edge.width = 40;
  edge.height = 16;
  edge.min_disparity = 0;
  edge.max_disparity = 19;
  edge.objects = 64;
  edge.flicker = 0.49;
  EXPECT_NO_THROW(SyntheticScene{edge});
}

namespace {

// Share of the partner's pixels with ground truth d, whose surface point the left view shows at
// (x - dx * d, y - dy * d) with the same ground truth, that have the colour the left view has
// there: 1 for a right partner view in a clean scene (corresponding pixels are identical).
double corresponding_share(const RgbImage& left, const Image<float>& left_truth,
                           const RgbImage& partner, const Image<float>& partner_truth, int dx,
                           int dy) {
  long long same = 0, total = 0;
  for (int py = 0; py < partner.height; ++py) {
    for (int px = 0; px < partner.width; ++px) {
      const float d = partner_truth(px, py);
      if (!std::isfinite(d)) continue;
      const int r = static_cast<int>(std::floor(d + 0.5f));
      const int x = px - dx * r, y = py - dy * r;
      if (x < 0 || x >= left.width || y < 0 || y >= left.height || left_truth(x, y) != d) continue;
      ++total;
      same += std::equal(left.row(y) + 3 * x, left.row(y) + 3 * x + 3, partner.row(py) + 3 * px);
    }
  }
  return total ? double(same) / double(total) : 0;
}

}  // namespace

// The third view of an L-shaped rig sees the left view's point (x, y) at (x, y - d) from below
// and at (x, y + d) from above; the right view is unchanged by it.
TEST(SyntheticScene, VerticalViewSeesTheLeftViewShifted) {
  for (int objects : {0, 3}) {
    SyntheticOptions o = clean(small_options());
    o.objects = objects;
    SyntheticFrame plain;
    SyntheticScene(o).render(40, plain);
    EXPECT_TRUE(plain.vertical.empty());
    for (auto position : {SyntheticVertical::kBelow, SyntheticVertical::kAbove}) {
      o.vertical = position;
      SyntheticFrame f;
      SyntheticScene(o).render(40, f);
      ASSERT_EQ(f.vertical.width, o.width);
      ASSERT_EQ(f.vertical_gray.height(), o.height);
      EXPECT_EQ(f.left.pixels, plain.left.pixels);
      EXPECT_EQ(f.right.pixels, plain.right.pixels);
      const int dy = position == SyntheticVertical::kBelow ? -1 : 1;
      ASSERT_EQ(f.vertical_disparity.width(), o.width);
      const double share =
          corresponding_share(f.left, f.disparity, f.vertical, f.vertical_disparity, 0, dy);
      EXPECT_EQ(share, 1.0) << to_string(position) << ", " << objects;
      // The other direction is wrong nearly everywhere.
      EXPECT_LT(corresponding_share(f.left, f.disparity, f.vertical, f.vertical_disparity, 0, -dy),
                0.5);
      // And the right view is what it was.
      EXPECT_EQ(corresponding_share(f.left, f.disparity, f.right, f.right_disparity, -1, 0), 1.0);
    }
  }
}

// Horizontal stripes are constant along rows, vertical bars along columns (away from the edges
// between surfaces).
TEST(SyntheticScene, StripesAndBarsVaryAlongOneAxisOnly) {
  SyntheticOptions o = clean(small_options());
  o.objects = 2;
  for (auto texture : {SyntheticTexture::kHorizontalStripes, SyntheticTexture::kVerticalBars}) {
    o.texture = texture;
    SyntheticFrame f;
    SyntheticScene(o).render(10, f);
    long long along = 0, across = 0, pairs = 0;
    for (int y = 0; y + 1 < o.height; ++y) {
      for (int x = 0; x + 1 < o.width; ++x) {
        const bool row_same = f.left_gray(x, y) == f.left_gray(x + 1, y);
        const bool col_same = f.left_gray(x, y) == f.left_gray(x, y + 1);
        ++pairs;
        along += texture == SyntheticTexture::kHorizontalStripes ? row_same : col_same;
        across += texture == SyntheticTexture::kHorizontalStripes ? col_same : row_same;
      }
    }
    EXPECT_GT(double(along) / double(pairs), 0.9) << to_string(texture);
    EXPECT_LT(double(across) / double(pairs), 0.6) << to_string(texture);
  }
}

// With a real background and a third view, both partners are rendered from the left photo on
// its geometry.
TEST(SyntheticScene, RealBackgroundWithAVerticalViewRendersBothPartners) {
  SyntheticBackground real;
  real.left.resize(200, 160);
  real.right.resize(200, 160);
  real.left_disparity.resize(200, 160, 6.0f);
  for (int y = 50; y < 110; ++y) {
    for (int x = 80; x < 140; ++x) real.left_disparity(x, y) = 11.0f;
  }
  for (std::size_t k = 0; k < real.left.pixels.size(); ++k) {
    real.left.pixels[k] = static_cast<std::uint8_t>((k * 7) ^ (k >> 5));
  }
  SyntheticOptions o = clean(small_options());
  o.objects = 0;
  o.vertical = SyntheticVertical::kAbove;
  SyntheticFrame f;
  SyntheticScene(o, real).render(0, f);
  EXPECT_EQ(corresponding_share(f.left, f.disparity, f.right, f.right_disparity, -1, 0), 1.0);
  EXPECT_EQ(corresponding_share(f.left, f.disparity, f.vertical, f.vertical_disparity, 0, 1), 1.0);
}

TEST(SyntheticScene, VerticalViewNeedsRoomForTheRange) {
  SyntheticOptions o = small_options();  // 160x120
  o.vertical = SyntheticVertical::kBelow;
  o.max_disparity = 60;
  try {
    SyntheticScene bad(o);
    FAIL() << "accepted max_disparity 60 for a 120-pixel-high vertical pair";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("half the height"), std::string::npos) << e.what();
  }
  SyntheticTexture t;
  SyntheticVertical v;
  EXPECT_TRUE(parse_synthetic_texture("hstripes", t));
  EXPECT_EQ(t, SyntheticTexture::kHorizontalStripes);
  EXPECT_FALSE(parse_synthetic_texture("stripes", t));
  EXPECT_TRUE(parse_synthetic_texture("mixed", t));
  EXPECT_EQ(t, SyntheticTexture::kMixed);
  EXPECT_TRUE(parse_synthetic_vertical("above", v));
  EXPECT_EQ(v, SyntheticVertical::kAbove);
  EXPECT_FALSE(parse_synthetic_vertical("left", v));
}

// A photograph as the objects' texture: every object pixel shows one of its pixels (a photograph
// of one colour per row, so the row it came from can be told), in both views alike.
TEST(SyntheticScene, ObjectsShowTheGivenPhotograph) {
  const SyntheticOptions o = clean(small_options());
  RgbImage photo;
  photo.resize(50, 40);
  for (int y = 0; y < 40; ++y) {
    for (int x = 0; x < 50; ++x) {
      std::uint8_t* p = photo.row(y) + 3 * x;
      p[0] = static_cast<std::uint8_t>(100 + y);
      p[1] = 7;
      p[2] = 200;
    }
  }
  const SyntheticScene scene(o, std::nullopt, photo);
  SyntheticFrame f;
  long long seen = 0;
  for (int i = 0; i < 60; i += 7) {
    scene.render(i, f);
    for (int y = 0; y < o.height; ++y) {
      for (int x = 0; x < o.width; ++x) {
        if (f.mask(x, y) != kMaskForeground) continue;
        const std::uint8_t* p = f.left.row(y) + 3 * x;
        ASSERT_GE(p[0], 100);
        ASSERT_LT(p[0], 140);
        ASSERT_EQ(p[1], 7);
        ASSERT_EQ(p[2], 200);
        ++seen;
      }
    }
  }
  EXPECT_GT(seen, 1000);
}

// stop_frames: an object's position repeats for that many frames at some point of its life (that
// the defaults render as before the options existed is held by golden_outputs_test's hashes).
TEST(SyntheticScene, StopFramesHoldObjectsStill) {
  SyntheticOptions o = clean(small_options());
  o.objects = 1;
  o.stop_frames = 25;
  const SyntheticScene scene(o);
  SyntheticFrame a, b;
  int longest = 0, run = 0;
  scene.render(0, a);
  for (int i = 1; i < 400; ++i) {
    scene.render(i, b);
    const bool any = std::count(b.mask.pixels().begin(), b.mask.pixels().end(), kMaskForeground);
    run = any && b.mask == a.mask ? run + 1 : 0;
    longest = std::max(longest, run);
    std::swap(a, b);
  }
  EXPECT_GE(longest, 24);
}
