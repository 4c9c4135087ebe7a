// Replay (replay_source.hpp): frames rendered or decoded once at start-up, then served from
// memory in a loop at the configured rate, with fresh capture times; a replayed rig delivers
// exactly the frames the same rig delivers when it renders or decodes every frame.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "image_file.hpp"
#include "ingest/realtime_clock.hpp"
#include "ingest/replay_source.hpp"
#include "ingest/synthetic_source.hpp"
#include "rig_support.hpp"
#include "synthetic/synthetic_scene.hpp"

using namespace stereod;
using namespace stereod::test;

namespace {

CameraConfig camera(const std::string& name, const std::string& uri, bool color, int fps = 30) {
  CameraConfig c = small_camera(name, uri);
  c.width = 96;
  c.height = 64;
  c.color = color;
  c.fps = {fps, 1};
  return c;
}

RigConfig synthetic_rig(const std::string& options, bool color, int fps = 30) {
  return rig_of("synth", {camera("left", "synthetic://left" + options, color, fps),
                          camera("right", "synthetic://right" + options, color, fps)});
}

std::vector<std::uint8_t> pixels_of(const CameraFrame& f) {
  if (!f.color.empty()) return rgb_of(f);
  return gray_of(f).pixels();
}

// `count` textured RGB PNGs of 80x60 (scaled to the cameras' 96x64: the path converts), each
// different, dir/PREFIX_%03d.png from `first`; `skip` numbers are not written.
void write_images(const std::string& dir, const std::string& prefix, int first, int count,
                  const std::vector<int>& skip = {}) {
  for (int i = first; i < first + count; ++i) {
    if (std::find(skip.begin(), skip.end(), i) != skip.end()) continue;
    const int w = 80, h = 60;
    std::vector<std::uint8_t> rgb(static_cast<std::size_t>(w * h * 3));
    std::uint32_t state = 2654435761u * static_cast<std::uint32_t>(i + 1) + prefix.size();
    for (auto& v : rgb) {
      state = state * 1664525u + 1013904223u;
      v = static_cast<std::uint8_t>(state >> 24);
    }
    char name[64];
    std::snprintf(name, sizeof name, "/%s_%03d.png", prefix.c_str(), i);
    write_png_file(dir + name, rgb.data(), w, h, 3, 8);
  }
}

}  // namespace

TEST(Replay, SyntheticFramesLoopWithFreshIncreasingCaptureTimes) {
  for (const bool color : {true, false}) {
    SCOPED_TRACE(color ? "color" : "gray");
    constexpr int kFrames = 5;
    const RigConfig config = synthetic_rig("?objects=2&seed=3&max_disparity=24&replay=5", color);
    Collector got;
    RigSource rig(config, got.sets(), got.events());
    EXPECT_EQ(rig.synthetic_scene(), nullptr);  // rendered once, then dropped
    rig.start();
    ASSERT_TRUE(got.wait_sets(3 * kFrames + 2));
    rig.stop();
    const auto sets = got.take_sets();

    // The loop: the indices run 0..4 and start over, never skipping (nothing is rendered).
    std::int64_t previous_time = 0;
    for (std::size_t i = 0; i < sets.size(); ++i) {
      const CameraFrame& l = *sets[i].frames[0];
      const CameraFrame& r = *sets[i].frames[1];
      EXPECT_EQ(l.source_index,
                static_cast<std::int64_t>((i + sets[0].frames[0]->source_index) % kFrames))
          << "set " << i;
      EXPECT_EQ(l.source_index, r.source_index);
      // Lockstep, and time goes on across the loop.
      EXPECT_EQ(l.capture_time_ns, r.capture_time_ns);
      EXPECT_GT(l.capture_time_ns, previous_time) << "set " << i;
      previous_time = l.capture_time_ns;
      EXPECT_EQ(l.color.empty(), !color);
    }
    EXPECT_EQ(sets[0].frames[0]->source_index, 0);
    EXPECT_EQ(rig.stats().failures, 0u);
  }
}

TEST(Replay, SyntheticReplayMatchesTheRenderedRig) {
  // The same scene rendered frame by frame (the live synthetic:// path) and replayed: the frames
  // of one index are the same bytes.
  const std::string options = "?objects=2&seed=7&min_disparity=2&max_disparity=24";
  Collector direct_got, replay_got;
  RigSource direct(synthetic_rig(options, true, 15), direct_got.sets(), direct_got.events());
  RigSource replayed(synthetic_rig(options + "&replay=6", true, 15), replay_got.sets(),
                     replay_got.events());
  direct.start();
  replayed.start();
  ASSERT_TRUE(direct_got.wait_sets(6));
  ASSERT_TRUE(replay_got.wait_sets(6));
  direct.stop();
  replayed.stop();
  std::map<std::int64_t, const FrameSet*> by_index;
  const auto direct_sets = direct_got.take_sets();
  for (const auto& s : direct_sets) by_index[s.frames[0]->source_index] = &s;
  const auto replay_sets = replay_got.take_sets();
  int compared = 0;
  for (const auto& s : replay_sets) {
    const auto it = by_index.find(s.frames[0]->source_index);
    if (it == by_index.end()) continue;  // the rendering rig skipped it to keep up
    for (int c = 0; c < 2; ++c) {
      EXPECT_EQ(pixels_of(*s.frames[c]), pixels_of(*it->second->frames[c]))
          << "index " << s.frames[0]->source_index << " camera " << c;
    }
    ++compared;
  }
  EXPECT_GE(compared, 3);
  // And they are the scene's frames.
  const SyntheticScene scene(synthetic_options(synthetic_rig(options, true, 15).cameras[0],
                                               parse_source_uri("synthetic://left" + options)));
  SyntheticFrame truth;
  scene.render(static_cast<int>(replay_sets[2].frames[0]->source_index), truth);
  EXPECT_EQ(rgb_of(*replay_sets[2].frames[0]), truth.left.pixels);
  EXPECT_EQ(rgb_of(*replay_sets[2].frames[1]), truth.right.pixels);
}

TEST(Replay, ServesTheConfiguredRate) {
  // Frames come from memory, so the rate is the configured one over a second or two, whatever
  // rendering a frame would cost.
  for (const int fps : {10, 50}) {
    SCOPED_TRACE(fps);
    std::atomic<int> sets{0};
    std::atomic<std::int64_t> first_ns{0}, last_ns{0}, first_arrival{0}, last_arrival{0};
    RigSource rig(synthetic_rig("?max_disparity=24&replay=4", true, fps), [&](FrameSet&& set) {
      const std::int64_t t = set.frames[0]->capture_time_ns;
      const std::int64_t now = monotonic_now_ns();
      if (sets++ == 0) {
        first_ns = t;
        first_arrival = now;
      }
      last_ns = t;
      last_arrival = now;
    });
    rig.start();
    const int wanted = fps * 2;
    ASSERT_TRUE(poll_until([&] { return sets >= wanted; }));
    rig.stop();
    // Capture times on the rate's grid: n sets span n - 1 intervals, plus any the feeder skipped
    // because it was held up (a busy machine; the realtime clock's offset, re-read once a second,
    // moves by microseconds), and the sets came in real time at that pace (a wide margin: the
    // test machine is small and busy).
    const int n = sets.load();
    const auto skipped = static_cast<int>(rig.stats().synthetic_skipped);
    EXPECT_LE(skipped, n / 10);
    const double span_s = static_cast<double>(last_ns - first_ns) / 1e9;
    EXPECT_GE(span_s, (n - 1) / static_cast<double>(fps) - 1e-3);
    EXPECT_LE(span_s, (n - 1 + skipped) / static_cast<double>(fps) + 1e-3);
    if (skipped == 0) {
      EXPECT_NEAR(span_s, (n - 1) / static_cast<double>(fps), 1e-3);
    }
    EXPECT_NEAR(static_cast<double>(last_arrival - first_arrival) / 1e9, span_s,
                0.25 * span_s + 0.1);
  }
}

TEST(Replay, ImagesAreDecodedOnceAndMatchTheImagesReadDirectly) {
  const std::string dir = temp_dir();
  write_images(dir, "l", 3, 5);
  write_images(dir, "r", 3, 5);
  const auto rig_for = [&](const std::string& option) {
    return rig_of("img",
                  {camera("l", "images://" + dir + "/l_%03d.png?start=3" + option, true, 10),
                   camera("r", "images://" + dir + "/r_%03d.png?start=3" + option, true, 10)});
  };
  Collector direct_got, replay_got;
  RigSource direct(rig_for(""), direct_got.sets(), direct_got.events());
  RigSource replayed(rig_for("&replay=5"), replay_got.sets(), replay_got.events());
  direct.start();
  replayed.start();
  ASSERT_TRUE(direct_got.wait_sets(5));
  ASSERT_TRUE(replay_got.wait_sets(12));
  direct.stop();
  replayed.stop();
  const auto direct_sets = direct_got.take_sets();
  const auto replay_sets = replay_got.take_sets();
  // Replayed frames carry their file's number and loop over 3..7.
  for (std::size_t i = 0; i < replay_sets.size(); ++i) {
    EXPECT_EQ(replay_sets[i].frames[0]->source_index, static_cast<std::int64_t>(3 + i % 5));
  }
  // Each number's frames, scaled and converted as the live path does, are the same bytes.
  for (std::size_t k = 0; k < 5; ++k) {
    const FrameSet& r = replay_sets[k];
    const bool found = std::any_of(direct_sets.begin(), direct_sets.end(), [&](const FrameSet& d) {
      return pixels_of(*d.frames[0]) == pixels_of(*r.frames[0]) &&
             pixels_of(*d.frames[1]) == pixels_of(*r.frames[1]);
    });
    EXPECT_TRUE(found) << "number " << 3 + k << " differs from the directly read one";
  }
  remove_dir(dir);
}

TEST(Replay, ImagesSkipAMissingNumberAndEndWithoutLoop) {
  const std::string dir = temp_dir();
  write_images(dir, "l", 0, 4);
  write_images(dir, "r", 0, 4, {1});  // the right camera lacks number 1
  RigConfig config =
      rig_of("img", {camera("l", "images://" + dir + "/l_%03d.png?replay=10", false, 20),
                     camera("r", "images://" + dir + "/r_%03d.png?replay=10", false, 20)});
  for (auto& c : config.cameras) c.loop = false;
  Collector got;
  RigSource rig(config, got.sets(), got.events());
  rig.start();
  ASSERT_TRUE(got.wait_event(RigEvent::Kind::kEnded));
  rig.stop();
  std::vector<std::int64_t> numbers;
  for (const auto& s : got.take_sets()) numbers.push_back(s.frames[0]->source_index);
  // Number 1 is skipped for both cameras; 4..9 do not exist: the sequence is 0, 2, 3, once.
  EXPECT_EQ(numbers, (std::vector<std::int64_t>{0, 2, 3}));
  remove_dir(dir);
}

TEST(Replay, NoImagesIsAFailureThatNamesTheFile) {
  const std::string dir = temp_dir();
  const RigConfig config =
      rig_of("img", {camera("l", "images://" + dir + "/none_%03d.png?replay=3", false)});
  const RigEvent failure = first_failure(config);
  EXPECT_TRUE(contains(failure.message, "cannot load the frames to replay")) << failure.message;
  EXPECT_TRUE(contains(failure.message, dir + "/none_000.png")) << failure.message;
  remove_dir(dir);
}

TEST(Replay, RigsOfOneSceneShareItsFrames) {
  const RigConfig a = synthetic_rig("?seed=4&max_disparity=24&replay=3", true);
  RigConfig b = a;
  b.name = "other";
  const auto never = [] { return false; };
  const auto frames_a = load_replay(a, never);
  const auto frames_b = load_replay(b, never);
  ASSERT_NE(frames_a, nullptr);
  EXPECT_EQ(frames_a, frames_b);  // one copy in memory
  EXPECT_EQ(frames_a->index.size(), 3u);
  EXPECT_EQ(frames_a->cameras.size(), 2u);
  // Another seed is another scene.
  const auto frames_c =
      load_replay(synthetic_rig("?seed=5&max_disparity=24&replay=3", true), never);
  EXPECT_NE(frames_c, frames_a);
  // A stop while loading gives up.
  EXPECT_EQ(
      load_replay(synthetic_rig("?seed=6&max_disparity=24&replay=3", true), [] { return true; }),
      nullptr);
}
