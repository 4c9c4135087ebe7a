// stereod-sub's pictures and lines: the colormap, the disparity summary, the stats lines.
#include <gtest/gtest.h>

#include <cmath>

#include "colormap.hpp"
#include "frame_report.hpp"
#include "legend.hpp"

using namespace stereod;
using namespace stereod::sub;

namespace {

// Relative luminance (linear sRGB, Rec. 709 weights) of an 8-bit sRGB color.
double luminance(const Rgb& c) {
  auto linear = [](std::uint8_t v) {
    const double s = v / 255.0;
    return s <= 0.04045 ? s / 12.92 : std::pow((s + 0.055) / 1.055, 2.4);
  };
  return 0.2126 * linear(c[0]) + 0.7152 * linear(c[1]) + 0.0722 * linear(c[2]);
}

}  // namespace

TEST(Colormap, LuminanceRisesAndStaysAboveInvalidBlack) {
  const auto& map = perceptual_colormap();
  // 8-bit rounding may repeat a color between neighbours, never make it darker; a few entries
  // apart it is always brighter.
  for (int i = 1; i < 256; ++i) {
    EXPECT_GE(luminance(map[i]), luminance(map[i - 1])) << "entry " << i;
    if (i >= 4) {
      EXPECT_GT(luminance(map[i]), luminance(map[i - 4])) << "entry " << i;
    }
  }
  EXPECT_GT(luminance(map[0]), 0.02);  // the darkest valid color is clearly not black
  EXPECT_GT(map[255][0], 200);         // near is pale yellow
  EXPECT_GT(map[255][1], 200);
  EXPECT_GT(map[0][2], map[0][0]);  // far is blue-violet
}

TEST(Colormap, ColorizeMapsTheRangeAndPaintsInvalidBlack) {
  std::vector<std::uint16_t> d{0, 16 * 32, 16 * 64, 16 * 200, 0xFFFF};
  const RgbImage rgb = colorize({d.data(), 5, 1}, 0, 64);
  const auto& map = perceptual_colormap();
  auto at = [&](int x) {
    return Rgb{rgb.pixels[3 * x], rgb.pixels[3 * x + 1], rgb.pixels[3 * x + 2]};
  };
  EXPECT_EQ(at(0), map[0]);
  EXPECT_EQ(at(1), map[128]);
  EXPECT_EQ(at(2), map[255]);
  EXPECT_EQ(at(3), map[255]);  // beyond the range: clamped
  EXPECT_EQ(at(4), (Rgb{0, 0, 0}));
}

TEST(SubReport, DisparitySummaryCountsValidPixels) {
  std::vector<std::uint16_t> d{0xFFFF, 8, 16 * 10, 0xFFFF, 0xFFFF, 0xFFFF, 0xFFFF, 0xFFFF};
  const DisparitySummary s = summarize_disparity({d.data(), 4, 2});
  EXPECT_DOUBLE_EQ(s.valid_percent, 25.0);
  EXPECT_DOUBLE_EQ(s.min_d, 0.5);
  EXPECT_DOUBLE_EQ(s.max_d, 10.0);
  std::vector<std::uint16_t> none(4, 0xFFFF);
  EXPECT_EQ(summarize_disparity({none.data(), 2, 2}).valid_percent, 0.0);
}

TEST(SubReport, FrameLineCountsForegroundWithoutDisparityWhereTheHeaderHasIt) {
  publish::FrameHeader h;
  h.info.pair = "front";
  h.info.sequence = 7;
  std::vector<std::uint16_t> d{0xFFFF, 8, 16 * 10, 0xFFFF};
  const std::string without = frame_line(h, {d.data(), 2, 2}, 0, true);
  EXPECT_EQ(without, "front #7  valid 50.0 %  d 0.50..10.00 px");
  h.info.foreground_without_disparity = 321;
  EXPECT_EQ(frame_line(h, {d.data(), 2, 2}, 0, true), without + "  fg without d 321");
  EXPECT_EQ(frame_line(h, {}, 0, false), "front #7  fg without d 321");  // --brief too
}

TEST(SubReport, StatsLinesNameDropsAndPercentiles) {
  stats::StatsSnapshot s;
  stats::PairStats p;
  p.pair = "front";
  p.fps = 29.5;
  p.drops = {0, 2, 1};
  p.drops_total = {4, 7, 1};
  p.latency.push_back({"engine", {30, 6.25, 7, 8.5, 9}});
  p.last_error = "camera gone";
  s.pairs.push_back(p);
  const std::string text = stats_lines(s);
  EXPECT_NE(
      text.find(
          "front: 29.5 fps  drops sync=0 engine_busy=2 send=1 (since start sync=4 engine_busy=7 "
          "send=1)  engine p50 6.2 p99 8.5 ms"
          "  last error: camera gone"),
      std::string::npos)
      << text;
  EXPECT_NE(text.find("publisher: queued 0/0"), std::string::npos) << text;
}

TEST(Legend, TicksAreRoundAndInsideTheRange) {
  EXPECT_EQ(nice_ticks(0.68, 5.4, 6), (std::vector<double>{1, 2, 3, 4, 5}));
  EXPECT_EQ(nice_ticks(1.2, 2.7, 6), (std::vector<double>{1.5, 2.0, 2.5}));
  EXPECT_EQ(nice_ticks(0, 48, 6), (std::vector<double>{0, 10, 20, 30, 40}));
  EXPECT_TRUE(nice_ticks(3, 3, 6).empty());
  EXPECT_TRUE(nice_ticks(0, std::nan(""), 6).empty());
}

TEST(Legend, DepthPictureHasAColorBarInMetres) {
  // 40 x 30 pixels at d = 8 px (Z = 100 * 0.2 / 8 = 2.5 m) and d = 16 px (1.25 m), and none.
  std::vector<std::uint16_t> d(40 * 30, 16 * 8);
  for (int i = 0; i < 40 * 10; ++i) d[static_cast<std::size_t>(i)] = 16 * 16;
  for (int i = 40 * 20; i < 40 * 30; ++i) d[static_cast<std::size_t>(i)] = 0xFFFF;
  publish::DepthCalibration c;
  c.focal_px = c.fy_px = 100;
  c.baseline_m = 0.2;
  double near_m = 0, far_m = 0;
  ASSERT_TRUE(depth_range({d.data(), 40, 30}, c, near_m, far_m));
  EXPECT_DOUBLE_EQ(near_m, 1.25);
  EXPECT_DOUBLE_EQ(far_m, 2.5);
  const RgbImage picture = depth_picture({d.data(), 40, 30}, c, near_m, far_m);
  EXPECT_GT(picture.width, 40 + 30);  // the bar and its labels to the right
  EXPECT_GE(picture.height, 30);
  const auto& map = perceptual_colormap();
  auto at = [&](int x, int y) {
    const std::uint8_t* p = picture.row(y) + 3 * x;
    return Rgb{p[0], p[1], p[2]};
  };
  EXPECT_EQ(at(5, 2), map[255]);  // near: the top of the map
  EXPECT_EQ(at(5, 15), map[0]);   // far
  EXPECT_EQ(at(5, 25), (Rgb{0, 0, 0}));
  // Labels are drawn: dark pixels right of the bar.
  int ink = 0;
  for (int y = 0; y < picture.height; ++y) {
    for (int x = 40 + 6 + 14 + 4; x < picture.width; ++x) ink += at(x, y)[0] < 100;
  }
  EXPECT_GT(ink, 20);
  // No camera model: no depth.
  EXPECT_FALSE(depth_range({d.data(), 40, 30}, publish::DepthCalibration{}, near_m, far_m));
}
