// synthetic:// rigs: both cameras from one scene in lockstep, frames bit for bit what the scene
// renders for the index they carry, through the same pipeline as every other source.
#include <gtest/gtest.h>

#include "rig_support.hpp"
#include "synthetic/synthetic_scene.hpp"

using namespace stereod;
using namespace stereod::test;

namespace {

CameraConfig synthetic_camera(const std::string& name, const std::string& uri, bool color) {
  CameraConfig c = small_camera(name, uri);
  c.width = 96;
  c.height = 64;
  c.color = color;
  return c;
}

constexpr const char* kOptions = "?objects=2&seed=5&min_disparity=2&max_disparity=24";

}  // namespace

TEST(Synthetic, FramesEqualTheScenesRenderingOfTheirIndex) {
  for (const bool color : {false, true}) {
    SCOPED_TRACE(color ? "color" : "gray");
    Collector got;
    RigSource rig(
        rig_of("synth", {synthetic_camera("left", std::string("synthetic://") + kOptions, color),
                         synthetic_camera("right", std::string("synthetic://") + kOptions, color)}),
        got.sets(), got.events());
    ASSERT_NE(rig.synthetic_scene(), nullptr);
    EXPECT_EQ(rig.synthetic_scene()->options().seed, 5u);
    EXPECT_EQ(rig.synthetic_scene()->options().width, 96);
    rig.start();
    ASSERT_TRUE(got.wait_sets(6));
    rig.stop();

    SyntheticFrame truth;
    std::int64_t previous = -1;
    for (const FrameSet& set : got.take_sets()) {
      const CameraFrame& l = *set.frames[0];
      const CameraFrame& r = *set.frames[1];
      // Lockstep: one index and one capture time for both views.
      ASSERT_GE(l.source_index, 0);
      EXPECT_EQ(l.source_index, r.source_index);
      EXPECT_EQ(l.capture_time_ns, r.capture_time_ns);
      EXPECT_GT(l.source_index, previous);
      previous = l.source_index;

      rig.synthetic_scene()->render(static_cast<int>(l.source_index), truth);
      // A camera delivers one format: RGB when it is a color camera, else GRAY8.
      if (color) {
        EXPECT_TRUE(l.gray.empty());
        EXPECT_EQ(rgb_of(l), truth.left.pixels);
        EXPECT_EQ(rgb_of(r), truth.right.pixels);
      } else {
        EXPECT_TRUE(l.color.empty());
      }
      // The gray the engines match (the luma of the color) is the scene's gray.
      EXPECT_EQ(gray_of(l), truth.left_gray);
      EXPECT_EQ(gray_of(r), truth.right_gray);
    }
    EXPECT_EQ(rig.stats().failures, 0u);
  }
}

TEST(Synthetic, ViewsCanBeNamedInTheUri) {
  // The right view listed first: the URI decides, not the order.
  Collector got;
  RigSource rig(
      rig_of("synth", {synthetic_camera("r", "synthetic://right?max_disparity=24", false),
                       synthetic_camera("l", "synthetic://left?max_disparity=24", false)}),
      got.sets(), got.events());
  rig.start();
  ASSERT_TRUE(got.wait_sets(2));
  rig.stop();
  const FrameSet set = got.take_sets().front();
  SyntheticFrame truth;
  rig.synthetic_scene()->render(static_cast<int>(set.frames[0]->source_index), truth);
  EXPECT_EQ(gray_of(*set.frames[0]), truth.right_gray);
  EXPECT_EQ(gray_of(*set.frames[1]), truth.left_gray);
}

TEST(Synthetic, OptionsTheSceneRefusesNameTheCamera) {
  // A disparity range of half the width cannot be rendered.
  try {
    RigSource rig(
        rig_of("synth", {synthetic_camera("left", "synthetic://?max_disparity=60", false)}), {});
    FAIL() << "accepted";
  } catch (const std::invalid_argument& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("camera 'left': uri: synthetic.max_disparity = 60"), std::string::npos)
        << what;
  }
}
