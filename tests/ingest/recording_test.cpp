// Recordings: images:// from a PNG sequence and file:// from a short video, both written by the
// test; each plays at its frame rate and loops or ends cleanly as configured.
#include <gtest/gtest.h>

#include <gst/gst.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "gst_support.hpp"
#include "image_file.hpp"
#include "rig_support.hpp"

using namespace stereod;
using namespace stereod::test;

namespace {

std::string temp_dir() {
  char name[] = "/tmp/stereod_rec_XXXXXX";
  const char* dir = mkdtemp(name);
  EXPECT_NE(dir, nullptr);
  return dir ? dir : "/tmp";
}

void remove_dir(const std::string& dir) {
  const std::string command = "rm -rf '" + dir + "'";
  EXPECT_EQ(std::system(command.c_str()), 0);
}

// Frame i of the sequence is a flat gray of this value.
int level(int i) {
  return 20 + 30 * i;
}

// Six 64x48 gray PNGs, dir/f_000000.png ...
void write_png_sequence(const std::string& dir, int count) {
  for (int i = 0; i < count; ++i) {
    char name[64];
    std::snprintf(name, sizeof name, "/f_%06d.png", i);
    const std::vector<std::uint8_t> flat(64 * 48, static_cast<std::uint8_t>(level(i)));
    write_png_file(dir + name, flat.data(), 64, 48, 1, 8);
  }
}

// A 64x48 motion-JPEG AVI of `frames` frames at 30 frames/s, written by GStreamer.
void write_video(const std::string& path, int frames) {
  ensure_gstreamer();
  const std::string description =
      "videotestsrc num-buffers=" + std::to_string(frames) +
      " pattern=ball ! video/x-raw,width=64,height=48,framerate=30/1 ! jpegenc ! avimux ! "
      "filesink location=\"" +
      path + "\"";
  GError* error = nullptr;
  GstRef<GstElement> pipeline(gst_parse_launch(description.c_str(), &error));
  ASSERT_TRUE(pipeline) << (error ? error->message : "");
  gst_element_set_state(pipeline.get(), GST_STATE_PLAYING);
  GstRef<GstBus> bus(gst_element_get_bus(pipeline.get()));
  GstMessageRef done(
      gst_bus_timed_pop_filtered(bus.get(), 30 * GST_SECOND,
                                 static_cast<GstMessageType>(GST_MESSAGE_EOS | GST_MESSAGE_ERROR)));
  ASSERT_TRUE(done);
  EXPECT_EQ(GST_MESSAGE_TYPE(done.get()), GST_MESSAGE_EOS) << describe_message(done.get());
  gst_element_set_state(pipeline.get(), GST_STATE_NULL);
}

std::vector<int> levels_of(const std::vector<FrameSet>& sets) {
  std::vector<int> out;
  for (const auto& s : sets) out.push_back(s.frames[0]->gray(10, 10));
  return out;
}

void expect_increasing_capture_times(const std::vector<FrameSet>& sets) {
  for (std::size_t i = 1; i < sets.size(); ++i) {
    EXPECT_GT(sets[i].frames[0]->capture_time_ns, sets[i - 1].frames[0]->capture_time_ns)
        << "set " << i;
  }
}

}  // namespace

TEST(Recording, ImageSequencePlaysOnceAndEnds) {
  const std::string dir = temp_dir();
  write_png_sequence(dir, 6);
  Collector got;
  {
    CameraConfig cam = small_camera("seq", "images://" + dir + "/f_%06d.png");
    cam.loop = false;
    RigSource rig(rig_of("replay", {cam}), got.sets(), got.events());
    rig.start();
    ASSERT_TRUE(got.wait_event(RigEvent::Kind::kEnded));
    EXPECT_EQ(rig.stats().state, RigState::kEnded);
    EXPECT_EQ(rig.stats().failures, 0u);
  }
  const auto sets = got.take_sets();
  EXPECT_EQ(levels_of(sets), (std::vector<int>{20, 50, 80, 110, 140, 170}));
  expect_increasing_capture_times(sets);
  remove_dir(dir);
}

TEST(Recording, ImageSequenceLoopsFromItsStartIndex) {
  const std::string dir = temp_dir();
  write_png_sequence(dir, 4);
  Collector got;
  {
    RigSource rig(
        rig_of("replay", {small_camera("seq", "images://" + dir + "/f_%06d.png?start=1")}),
        got.sets(), got.events());
    rig.start();
    ASSERT_TRUE(got.wait_sets(8));
  }
  const auto sets = got.take_sets();
  const std::vector<int> got_levels = levels_of(sets);
  const std::vector<int> first(got_levels.begin(), got_levels.begin() + 8);
  EXPECT_EQ(first, (std::vector<int>{50, 80, 110, 50, 80, 110, 50, 80}));
  expect_increasing_capture_times(sets);
  remove_dir(dir);
}

TEST(Recording, VideoFilePlaysOnceAndEnds) {
  const std::string dir = temp_dir();
  write_video(dir + "/clip.avi", 12);
  Collector got;
  {
    CameraConfig cam = small_camera("clip", "file://" + dir + "/clip.avi");
    cam.loop = false;
    RigSource rig(rig_of("replay", {cam}), got.sets(), got.events());
    rig.start();
    ASSERT_TRUE(got.wait_event(RigEvent::Kind::kEnded));
    EXPECT_EQ(rig.stats().failures, 0u);
  }
  const auto sets = got.take_sets();
  EXPECT_EQ(sets.size(), 12u);
  expect_increasing_capture_times(sets);
  // Played at its rate: 11 intervals of 1/30 s between the first and last capture times.
  if (sets.size() == 12u) {
    const std::int64_t span =
        sets.back().frames[0]->capture_time_ns - sets.front().frames[0]->capture_time_ns;
    EXPECT_NEAR(static_cast<double>(span), 11e9 / 30, 10.0);
  }
  remove_dir(dir);
}

TEST(Recording, VideoFilesOfOneRigLoopTogether) {
  const std::string dir = temp_dir();
  write_video(dir + "/left.avi", 6);
  write_video(dir + "/right.avi", 6);
  Collector got;
  {
    RigSource rig(rig_of("replay", {small_camera("left", "file://" + dir + "/left.avi"),
                                    small_camera("right", "file://" + dir + "/right.avi")}),
                  got.sets(), got.events());
    rig.start();
    ASSERT_TRUE(got.wait_sets(20));  // more than three passes
    EXPECT_EQ(rig.stats().failures, 0u);
  }
  expect_increasing_capture_times(got.take_sets());
  remove_dir(dir);
}

TEST(Recording, AMissingFileIsReportedByName) {
  const RigEvent e =
      first_failure(rig_of("replay", {small_camera("gone", "file:///nonexistent/clip.avi")}));
  ASSERT_EQ(e.kind, RigEvent::Kind::kFailed);
  EXPECT_EQ(e.camera, "gone");
  EXPECT_TRUE(contains(e.message, "/nonexistent/clip.avi")) << e.message;
}
