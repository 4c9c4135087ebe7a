// A real engine's result through the Publisher: the subscriber gets the engine's own disparity,
// and the engine's slot comes back once the publisher thread has copied it into its message.
#include <gtest/gtest.h>

#include <thread>

#include "engine.hpp"
#include "publish/engine_frame.hpp"
#include "publish_fixtures.hpp"

using namespace stereod;
using namespace stereod::publish;
using namespace std::chrono_literals;

namespace {

FrameInput input_of(std::uint64_t seq, std::int64_t capture, const Gray8& left,
                    const Gray8& right) {
  FrameInput in;
  in.sequence = seq;
  in.capture_time_ns = capture;
  in.left = left.view();
  in.right = right.view();
  return in;
}

Gray8 textured(int w, int h, int shift) {
  Gray8 g(w, h);
  for (int y = 0; y < h; ++y) {
    for (int x = 0; x < w; ++x) {
      const unsigned v = static_cast<unsigned>((x + shift) * 2654435761u) ^ (y * 40503u);
      g(x, y) = static_cast<std::uint8_t>(v >> 13);
    }
  }
  return g;
}

}  // namespace

TEST(EngineFrame, CarriesTheResultsFactsAndHold) {
  EngineResult r;
  r.sequence = 9;
  r.capture_time_ns = 123;
  r.ok = true;
  r.levels_used = 2;
  r.timings = {0.5, 4.0, 0.25, 5.0};
  std::vector<std::uint16_t> pixels(6, 16);
  r.disparity = ImageView<const std::uint16_t>(pixels.data(), 3, 2);
  r.hold = std::make_shared<int>(1);
  FrameInfo info;
  info.pair = "front";
  info.latency.push_back({"sync", 1.5});
  const PublishedFrame f = frame_from_result(r, info);
  EXPECT_EQ(f.info.sequence, 9u);
  EXPECT_EQ(f.info.capture_ns, 123);
  EXPECT_EQ(f.info.levels, 2);
  EXPECT_GT(f.info.ready_ns, 0);
  EXPECT_TRUE(f.info.error.empty());
  ASSERT_EQ(f.info.latency.size(), 5u);
  EXPECT_EQ(f.info.latency[0], (StageLatency{"sync", 1.5}));
  EXPECT_EQ(f.info.latency[2], (StageLatency{"compute", 4.0}));
  EXPECT_EQ(f.info.latency[4], (StageLatency{"engine", 5.0}));
  EXPECT_EQ(f.disparity.data, pixels.data());
  EXPECT_EQ(f.disparity_keep_alive, r.hold);
  EXPECT_TRUE(f.confidence.empty());  // the engine gave none

  // An engine that computes a confidence map: it goes out from the same slot, without a copy.
  std::vector<std::uint8_t> confidence(6, 200);
  r.confidence = ImageView<const std::uint8_t>(confidence.data(), 3, 2);
  const PublishedFrame confident = frame_from_result(r, info);
  EXPECT_EQ(confident.confidence.data, confidence.data());
  EXPECT_EQ(confident.confidence_keep_alive, r.hold);
  r.confidence = {};

  // The CUDA engine's time waiting for the GPU is a stage of its own.
  r.timings.wait_ms = 0.75;
  const PublishedFrame waited = frame_from_result(r, info);
  ASSERT_EQ(waited.info.latency.size(), 6u);
  EXPECT_EQ(waited.info.latency[2], (StageLatency{"wait", 0.75}));
  EXPECT_EQ(waited.info.latency[3], (StageLatency{"compute", 4.0}));

  // With the background model active, the foreground pixels without disparity are counted.
  std::vector<std::uint16_t> holes = {16, 0xFFFF, 0xFFFF, 32, 0xFFFF, 16};
  std::vector<std::uint8_t> mask = {255, 255, 0, 255, 255, 0};
  r.disparity = ImageView<const std::uint16_t>(holes.data(), 3, 2);
  r.foreground = ImageView<const std::uint8_t>(mask.data(), 3, 2);
  r.background_active = true;
  EXPECT_EQ(frame_from_result(r, info).info.foreground_without_disparity, 2);
  r.background_active = false;  // warming up: every pixel is foreground, nothing is counted
  EXPECT_EQ(frame_from_result(r, info).info.foreground_without_disparity, -1);

  r.ok = false;
  r.error = "stereo.max_disparity: too large";
  const PublishedFrame failed = frame_from_result(r, info);
  EXPECT_EQ(failed.info.error, "stereo.max_disparity: too large");
  EXPECT_TRUE(failed.disparity.empty());
  EXPECT_FALSE(failed.disparity_keep_alive);
}

TEST(EngineFrame, CpuEngineResultsArriveAndTheirSlotsComeBack) {
  EngineOptions eo;
  eo.width = 64;
  eo.height = 48;
  eo.stereo.max_disparity = 16;
  eo.stereo.levels = 1;
  eo.inflight = 1;  // one slot: the next frame is accepted only once the last one was released
  eo.cpu_threads = 1;
  const auto engine = make_engine("cpu", eo);
  PublisherOptions po;
  po.endpoint = test::unique_ipc("engine");
  po.stats_interval_ms = 0;
  Publisher pub(po);
  client::Subscriber sub(pub.endpoint());

  const Gray8 left = textured(64, 48, 4), right = textured(64, 48, 0);
  Disparity16 expected;
  std::optional<client::Frame> got;
  std::uint64_t seq = 0;
  const auto end = std::chrono::steady_clock::now() + 20s;
  while (!got && std::chrono::steady_clock::now() < end) {
    // Busy until the publisher thread has given the previous frame's slot back.
    if (engine->submit(input_of(seq, 1000 + static_cast<std::int64_t>(seq), left, right)) ==
        SubmitStatus::kBusy) {
      std::this_thread::sleep_for(1ms);
      continue;
    }
    ++seq;
    std::optional<EngineResult> r;
    while (!(r = engine->poll(100ms))) {
    }
    ASSERT_TRUE(r->ok) << r->error;
    copy_into(r->disparity, expected);
    FrameInfo info = test::full_info("front", 0);
    info.latency.clear();
    pub.publish(frame_from_result(*r, info));
    got = test::next_frame(sub, 20ms);
    // The frame keeps its slot only until the publisher thread has copied it.
  }
  ASSERT_TRUE(got);
  EXPECT_EQ(got->header().info.capture_ns, 1000 + static_cast<std::int64_t>(seq) - 1);
  EXPECT_TRUE(test::image_matches(got->disparity(), [&](int x, int y) { return expected(x, y); }));
  // The engine's buffer is never lent to ZeroMQ (a stalled subscriber would keep the slot).
  EXPECT_EQ(pub.counters().zero_copy_payloads_total, 0u);
  EXPECT_GT(pub.counters().copied_payloads_total, 0u);
  // After the publisher is done, the single slot is free again.
  pub.stop();
  EXPECT_EQ(engine->submit(input_of(seq, 0, left, right)), SubmitStatus::kAccepted);
  EXPECT_TRUE(engine->poll(10s));
}
