// Rigs of GStreamer test sources: complete in-order sets, capture times on the realtime clock,
// injected offsets against the tolerance, color, faults and restarts.
#include <gtest/gtest.h>

#include <gst/gst.h>

#include <algorithm>
#include <atomic>
#include <set>

#include "ingest/realtime_clock.hpp"
#include "rig_support.hpp"

using namespace stereod;
using namespace stereod::test;

namespace {

// Complete sets, numbered without gaps, each camera's frames in capture order and within the
// tolerance of each other.
void expect_complete_in_order(const std::vector<FrameSet>& sets, std::size_t cameras,
                              std::int64_t tolerance) {
  ASSERT_FALSE(sets.empty());
  std::vector<std::int64_t> last_time(cameras, 0);
  std::vector<std::uint64_t> last_sequence(cameras, 0);
  for (std::size_t i = 0; i < sets.size(); ++i) {
    const FrameSet& set = sets[i];
    EXPECT_EQ(set.sequence, sets[0].sequence + i);
    ASSERT_EQ(set.frames.size(), cameras);
    std::int64_t lo = set.frames[0]->capture_time_ns, hi = lo;
    for (std::size_t c = 0; c < cameras; ++c) {
      const CameraFrame& f = *set.frames[c];
      EXPECT_EQ(f.status, FrameStatus::kOk);
      EXPECT_EQ(f.gray.width, 64);
      EXPECT_EQ(f.gray.height, 48);
      if (i > 0) {
        EXPECT_GT(f.capture_time_ns, last_time[c]);
        EXPECT_GT(f.sequence, last_sequence[c]);
      }
      last_time[c] = f.capture_time_ns;
      last_sequence[c] = f.sequence;
      lo = std::min(lo, f.capture_time_ns);
      hi = std::max(hi, f.capture_time_ns);
    }
    EXPECT_LE(hi - lo, tolerance);
  }
}

}  // namespace

TEST(Rig, TwoTestCamerasDeliverCompleteInOrderSets) {
  Collector got;
  RigSource rig(rig_of("pair", {small_camera("left", "test://?pattern=ball"),
                                small_camera("right", "test://?pattern=snow")}),
                got.sets(), got.events());
  rig.start();
  ASSERT_TRUE(got.wait_sets(20));
  ASSERT_TRUE(got.wait_event(RigEvent::Kind::kRunning));
  rig.stop();
  const auto sets = got.take_sets();
  expect_complete_in_order(sets, 2, rig.config().effective_sync_tolerance_ns());
  EXPECT_EQ(sets[0].frames[0]->camera, "left");
  EXPECT_EQ(sets[0].frames[1]->camera, "right");
  const RigStats stats = rig.stats();
  EXPECT_EQ(stats.failures, 0u);
  EXPECT_EQ(stats.state, RigState::kStopped);
  EXPECT_GE(stats.sync.sets, 20u);
  ASSERT_EQ(stats.cameras.size(), 2u);
  EXPECT_GE(stats.cameras[0].delivered, 20u);
}

TEST(Rig, ThreeTestCamerasDeliverCompleteInOrderSets) {
  Collector got;
  RigSource rig(rig_of("trio", {small_camera("a", "test://"), small_camera("b", "test://"),
                                small_camera("c", "test://?pattern=ball")}),
                got.sets(), got.events());
  rig.start();
  ASSERT_TRUE(got.wait_sets(20));
  rig.stop();
  expect_complete_in_order(got.take_sets(), 3, rig.config().effective_sync_tolerance_ns());
}

TEST(Rig, TheCallbackMayAskForStats) {
  // Three cameras complete sets on different streaming threads; the callback reads the rig's
  // statistics while later sets wait for their turn.
  std::atomic<int> seen{0};
  RigSource* self = nullptr;
  RigSource rig(rig_of("busy", {small_camera("a", "test://"), small_camera("b", "test://"),
                                small_camera("c", "test://")}),
                [&](FrameSet&& set) {
                  if (self && self->stats().sync.sets > set.sequence) ++seen;
                });
  self = &rig;
  rig.start();
  EXPECT_TRUE(poll_until([&] { return seen >= 10; }));
  rig.stop();
}

TEST(Rig, CaptureTimesAreRealtimeNanoseconds) {
  Collector got;
  RigSource rig(rig_of("clock", {small_camera("only", "test://")}), got.sets(), got.events());
  rig.start();
  ASSERT_TRUE(got.wait_sets(3));
  rig.stop();
  const std::int64_t now = realtime_now_ns();
  const auto sets = got.take_sets();
  // Captured in the last few seconds, and never in the future.
  const std::int64_t t = sets.back().frames[0]->capture_time_ns;
  EXPECT_LE(t, now);
  EXPECT_GT(t, now - 30 * 1000000000LL);
  EXPECT_LE(t, sets.back().complete_time_ns);
}

TEST(Rig, OffsetWithinToleranceIsMatchedAndBeyondItDropped) {
  // Non-live test sources whose timestamps are shifted by 5 ms (videotestsrc's timestamp-offset
  // applies to non-live sources; gst:// descriptions are paced to the clock).
  const auto run = [](std::int64_t tolerance, std::size_t want_sets, RigStats& stats) {
    Collector got;
    RigConfig config = rig_of(
        "offset", {small_camera("a", "gst://videotestsrc pattern=ball"),
                   small_camera("b", "gst://videotestsrc pattern=ball timestamp-offset=5000000")});
    config.sync_tolerance_ns = tolerance;
    RigSource rig(config, got.sets(), got.events());
    rig.start();
    // Either enough sets, or (no sets expected) enough frames to have tried.
    if (want_sets) {
      got.wait_sets(want_sets);
    } else {
      poll_until([&] { return rig.stats().cameras[1].delivered >= 20; });
    }
    rig.stop();
    stats = rig.stats();
    return got.take_sets();
  };
  RigStats stats;
  const auto matched = run(10000000, 15, stats);
  ASSERT_GE(matched.size(), 15u);
  for (const auto& set : matched) {
    EXPECT_EQ(set.frames[1]->capture_time_ns - set.frames[0]->capture_time_ns, 5000000);
  }

  const auto none = run(2000000, 0, stats);
  EXPECT_TRUE(none.empty());
  EXPECT_GE(stats.cameras[1].delivered, 20u);
  EXPECT_GE(stats.sync.dropped_unmatched, 20u);
  EXPECT_GT(stats.sync.dropped_per_camera[0], 0u);
  EXPECT_GT(stats.sync.dropped_per_camera[1], 0u);
}

TEST(Rig, ColorCamerasDeliverRgbOnly) {
  // The engines derive the gray they match from the color (BT.601 luma): GStreamer converts each
  // frame once, to RGB, and nothing else is delivered.
  Collector got;
  CameraConfig cam = small_camera("c", "test://?pattern=white");
  cam.color = true;
  RigSource rig(rig_of("color", {cam}), got.sets(), got.events());
  rig.start();
  ASSERT_TRUE(got.wait_sets(5));
  rig.stop();
  const auto sets = got.take_sets();
  const CameraFrame& f = *sets.back().frames[0];
  ASSERT_EQ(f.color.width, 64);
  ASSERT_EQ(f.color.height, 48);
  EXPECT_EQ(f.color.stride, 64 * 3);
  EXPECT_TRUE(f.gray.empty());
  // White is white, in the color and in its luma.
  const std::vector<std::uint8_t> rgb = rgb_of(f);
  EXPECT_TRUE(std::all_of(rgb.begin(), rgb.end(), [](std::uint8_t v) { return v == 255; }));
  const Gray8 gray = gray_of(f);
  EXPECT_TRUE(std::all_of(gray.pixels().begin(), gray.pixels().end(),
                          [](std::uint8_t v) { return v == 255; }));
}

TEST(Rig, FramesGoIntoTheCallersMemory) {
  // The rig's PixelAllocator gives every frame's memory (the daemon: page-locked), once per
  // pooled frame: steady-state ingest allocates nothing.
  std::atomic<int> allocations{0};
  std::atomic<int> sets{0};
  RigSourceOptions options;
  options.allocate = [&](std::size_t bytes) {
    ++allocations;
    return allocate_pixels(bytes);
  };
  options.frames_held = 0;
  RigSource rig(
      rig_of("mem", {small_camera("a", "test://"), small_camera("b", "test://")}),
      [&](FrameSet&& set) {
        EXPECT_EQ(set.frames[0]->gray.width, 64);
        ++sets;
      },
      {}, options);
  rig.start();
  ASSERT_TRUE(poll_until([&] { return sets >= 30; }));
  rig.stop();
  EXPECT_GE(allocations.load(), 2);
  // No more than the two cameras' pools hold (sync.max_pending + 4 frames each).
  EXPECT_LE(allocations.load(), 2 * (4 + 4));
}

TEST(Rig, ASourceThatDiesIsRestartedAndTheOtherRigRunsOn) {
  Collector dying_got, steady_got;
  RigSource dying(rig_of("dying", {small_camera("short", "test://?num_buffers=10"),
                                   small_camera("long", "test://")}),
                  dying_got.sets(), dying_got.events());
  RigSource steady(rig_of("steady", {small_camera("l", "test://"), small_camera("r", "test://")}),
                   steady_got.sets(), steady_got.events());
  steady.start();
  dying.start();
  // The short camera ends after 10 frames, twice: each time the rig is rebuilt and delivers
  // again (its failed events name the camera).
  ASSERT_TRUE(dying_got.wait_event(RigEvent::Kind::kFailed, 2));
  const std::size_t steady_before = steady_got.set_count();
  ASSERT_TRUE(dying_got.wait_event(RigEvent::Kind::kRunning, 3));
  ASSERT_TRUE(steady_got.wait_sets(steady_before + 10));
  dying.stop();
  steady.stop();

  const auto events = dying_got.events_so_far();
  const auto failed = std::find_if(events.begin(), events.end(), [](const RigEvent& e) {
    return e.kind == RigEvent::Kind::kFailed;
  });
  ASSERT_NE(failed, events.end());
  EXPECT_EQ(failed->rig, "dying");
  EXPECT_EQ(failed->camera, "short");
  EXPECT_TRUE(contains(failed->message, "camera 'short' (test://?num_buffers=10)"))
      << failed->message;
  EXPECT_TRUE(contains(failed->message, "end of stream")) << failed->message;
  EXPECT_GE(failed->retry_in.count(), 200);
  EXPECT_GE(dying.stats().failures, 2u);
  EXPECT_TRUE(contains(dying.stats().last_error, "camera 'short'"));

  // Numbering goes on across restarts.
  const auto sets = dying_got.take_sets();
  for (std::size_t i = 1; i < sets.size(); ++i) {
    EXPECT_EQ(sets[i].sequence, sets[i - 1].sequence + 1);
    EXPECT_GT(sets[i].frames[1]->sequence, sets[i - 1].frames[1]->sequence);
  }
  EXPECT_EQ(steady.stats().failures, 0u);
  expect_complete_in_order(steady_got.take_sets(), 2,
                           steady.config().effective_sync_tolerance_ns());
}

TEST(Rig, BackoffGrowsBetweenFailures) {
  Collector got;
  RigSource rig(rig_of("flaky", {small_camera("short", "test://?num_buffers=2")}), got.sets(),
                got.events());
  rig.start();
  ASSERT_TRUE(got.wait_event(RigEvent::Kind::kFailed, 3));
  rig.stop();
  std::vector<long> delays;
  for (const auto& e : got.events_so_far()) {
    if (e.kind == RigEvent::Kind::kFailed) delays.push_back(static_cast<long>(e.retry_in.count()));
  }
  ASSERT_GE(delays.size(), 3u);
  EXPECT_EQ(delays[0], 200);
  EXPECT_EQ(delays[1], 400);
  EXPECT_EQ(delays[2], 800);  // the test rig's maximum
}

TEST(Rig, AMissingDeviceIsReportedByName) {
  const RigEvent e = first_failure(rig_of("usb", {small_camera("front", "v4l2:///dev/video99")}));
  ASSERT_EQ(e.kind, RigEvent::Kind::kFailed);
  EXPECT_EQ(e.camera, "front");
  EXPECT_TRUE(contains(e.message, "camera 'front' (v4l2:///dev/video99)")) << e.message;
  EXPECT_TRUE(contains(e.message, "/dev/video99")) << e.message;
}

TEST(Rig, ABrokenDescriptionIsReportedByName) {
  const RigEvent e =
      first_failure(rig_of("custom", {small_camera("odd", "gst://nosuchelement ! videoconvert")}));
  ASSERT_EQ(e.kind, RigEvent::Kind::kFailed);
  EXPECT_EQ(e.camera, "odd");
  EXPECT_TRUE(contains(e.message, "nosuchelement")) << e.message;
}

TEST(Rig, CapsThatCannotBeNegotiatedAreReportedByName) {
  // The demuxer's JPEG stream appears only once data flows, and nothing of the camera's branch
  // takes JPEG: the failure shows at run time, as with a camera that cannot give the format it
  // was asked for.
  const RigEvent e = first_failure(rig_of(
      "caps",
      {small_camera("fixed", "gst://videotestsrc ! jpegenc ! multipartmux ! multipartdemux")}));
  ASSERT_EQ(e.kind, RigEvent::Kind::kFailed);
  EXPECT_EQ(e.camera, "fixed");
  EXPECT_TRUE(contains(e.message, "not-negotiated") || contains(e.message, "not-linked"))
      << e.message;
}

TEST(Rig, ASilentCameraCountsAsFailed) {
  RigConfig config =
      rig_of("quiet", {small_camera("mute", "gst://videotestsrc ! valve drop=true")});
  config.restart.stall_timeout = std::chrono::milliseconds(500);
  const RigEvent e = first_failure(config);
  ASSERT_EQ(e.kind, RigEvent::Kind::kFailed);
  EXPECT_EQ(e.camera, "mute");
  EXPECT_TRUE(contains(e.message, "no frame in 0.5 s after start")) << e.message;
}

TEST(Rig, InvalidConfigurationIsRefusedWithEveryIssue) {
  RigConfig config = rig_of("bad", {small_camera("a", "usb://0"), small_camera("a", "test://")});
  try {
    RigSource rig(config, {});
    FAIL() << "accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_TRUE(contains(e.what(), "camera 'a': uri: source URI \"usb://0\": unknown scheme"))
        << e.what();
    EXPECT_TRUE(contains(e.what(), "used twice")) << e.what();
  }
}
