// File formats, frame patterns, scene discovery and scoring used by stereod-bench.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>

#include "disparity_io.hpp"
#include "ingest/frame_pattern.hpp"
#include "middlebury.hpp"
#include "stereo/pixel_ops.hpp"

using namespace stereod;

TEST(Pfm, RoundTripKeepsRowsOrderAndInfinity) {
  Disparity16 d(5, 3);
  for (int y = 0; y < 3; ++y) {
    for (int x = 0; x < 5; ++x) d(x, y) = static_cast<std::uint16_t>(16 * (y * 5 + x) + 3);
  }
  d(2, 1) = kInvalidDisparity;
  const std::string path = "/tmp/stereod_test.pfm";
  write_pfm(path, to_float_disparity(d));
  // Middlebury's convention: the first stored row is the bottom one, little-endian, scale -1.
  std::ifstream in(path, std::ios::binary);
  std::string header;
  std::getline(in, header);
  EXPECT_EQ(header, "Pf");
  std::getline(in, header);
  EXPECT_EQ(header, "5 3");
  std::getline(in, header);
  EXPECT_EQ(header, "-1");
  float first;
  in.read(reinterpret_cast<char*>(&first), 4);
  EXPECT_FLOAT_EQ(first, (16 * 10 + 3) / 16.0f);  // row 2, column 0
  const Image<float> back = read_pfm(path);
  for (int y = 0; y < 3; ++y) {
    for (int x = 0; x < 5; ++x) {
      if (x == 2 && y == 1) {
        EXPECT_TRUE(std::isinf(back(x, y)));
      } else {
        EXPECT_FLOAT_EQ(back(x, y), d(x, y) / 16.0f);
      }
    }
  }
  std::remove(path.c_str());
}

TEST(Png16, RoundTrip) {
  Disparity16 d(7, 4, 123);
  d(3, 2) = kInvalidDisparity;
  write_png16("/tmp/stereod_test.png", d);
  EXPECT_EQ(read_png16("/tmp/stereod_test.png"), d);
  std::remove("/tmp/stereod_test.png");
}

TEST(FramePattern, FormatsOneIntegerAndRejectsTheRest) {
  EXPECT_EQ(format_frame_path("dir/l_%04d.png", 7), "dir/l_0007.png");
  EXPECT_EQ(format_frame_path("x%d", 123), "x123");
  EXPECT_EQ(format_frame_path("100%%_%3d", 5), "100%_  5");
  EXPECT_THROW(format_frame_path("none.png", 1), std::invalid_argument);
  EXPECT_THROW(format_frame_path("%d_%d", 1), std::invalid_argument);
  EXPECT_THROW(format_frame_path("%s", 1), std::invalid_argument);
  EXPECT_THROW(format_frame_path("%n", 1), std::invalid_argument);
}

TEST(Middlebury, FindsTheFourV2ScenesWithTheirRanges) {
  const auto scenes = find_scenes(STEREOD_TEST_DATA);
  ASSERT_EQ(scenes.size(), 4u);
  for (const auto& s : scenes) EXPECT_EQ(s.family, SceneFamily::kV2);
  EXPECT_EQ(scenes[0].name, "cones");
  EXPECT_EQ(scenes[0].max_disparity, 64);
  EXPECT_EQ(scenes[2].name, "tsukuba");
  EXPECT_EQ(scenes[2].max_disparity, 16);
  EXPECT_EQ(scenes[3].name, "venus");
  EXPECT_EQ(scenes[3].max_disparity, 20);
}

// A scene folder named with a trailing slash (as a shell completes it) is the same scene, named
// by its folder.
TEST(Middlebury, SceneInNamesTheFolderWithOrWithoutATrailingSlash) {
  const std::string dir = std::string(STEREOD_TEST_DATA) + "/middlebury_v2/tsukuba";
  for (const std::string& d : {dir, dir + "/", dir + "//"}) {
    const auto files = scene_in(d);
    ASSERT_TRUE(files.has_value()) << d;
    EXPECT_EQ(files->name, "tsukuba") << d;
    EXPECT_EQ(files->max_disparity, 16) << d;
  }
  EXPECT_FALSE(scene_in(std::string(STEREOD_TEST_DATA) + "/middlebury_v2").has_value());
}

// The pixels with ground truth, as the scores count them: +inf and NaN are unknown.
TEST(Middlebury, GroundTruthMaskMarksTheKnownPixels) {
  Scene s;
  s.ground_truth = Image<float>(3, 2);
  s.ground_truth(0, 0) = 0.0f;
  s.ground_truth(1, 0) = std::numeric_limits<float>::infinity();
  s.ground_truth(2, 0) = 12.5f;
  s.ground_truth(0, 1) = std::numeric_limits<float>::quiet_NaN();
  s.ground_truth(1, 1) = 63.75f;
  s.ground_truth(2, 1) = -std::numeric_limits<float>::infinity();
  const Gray8 mask = ground_truth_mask(s);
  ASSERT_EQ(mask.width(), 3);
  ASSERT_EQ(mask.height(), 2);
  const int expected[2][3] = {{255, 0, 255}, {0, 255, 0}};
  for (int y = 0; y < 2; ++y)
    for (int x = 0; x < 3; ++x) EXPECT_EQ(mask(x, y), expected[y][x]) << x << "," << y;
}

TEST(Middlebury, PerfectEstimateScoresZeroAndNoEstimateScoresHundred) {
  const auto files = find_scenes(STEREOD_TEST_DATA);
  const Scene s = load_scene(files[2]);  // tsukuba
  Disparity16 perfect(s.left.width(), s.left.height(), kInvalidDisparity);
  for (std::size_t i = 0; i < perfect.size(); ++i) {
    const float g = s.ground_truth.data()[i];
    if (std::isfinite(g)) perfect.data()[i] = static_cast<std::uint16_t>(std::lround(g * 16));
  }
  const SceneScore good = score_scene(s, perfect);
  EXPECT_EQ(good.nonocc, 0);
  EXPECT_EQ(good.all, 0);
  EXPECT_EQ(good.disc, 0);
  const SceneScore none =
      score_scene(s, Disparity16(s.left.width(), s.left.height(), kInvalidDisparity));
  EXPECT_EQ(none.nonocc, 100);
  EXPECT_EQ(none.all, 100);
  EXPECT_EQ(none.invalid, 100);
  // Off by exactly 1.0 is not bad; by more is.
  Disparity16 off = perfect;
  for (auto& v : off.pixels()) {
    if (v != kInvalidDisparity) v = static_cast<std::uint16_t>(v + 16);
  }
  EXPECT_EQ(score_scene(s, off).nonocc, 0);
  for (auto& v : off.pixels()) {
    if (v != kInvalidDisparity) v = static_cast<std::uint16_t>(v + 1);
  }
  EXPECT_EQ(score_scene(s, off).nonocc, 100);
}
