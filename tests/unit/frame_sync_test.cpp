// FrameSync on synthetic timestamps: sets within the tolerance pair up, everything else is
// dropped and counted, nothing is buffered without bound, and sets come out newest-complete and
// in order.
#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <memory>
#include <random>

#include "ingest/frame_sync.hpp"

using namespace stereod;

namespace {

constexpr std::int64_t kMs = 1000000;
constexpr std::int64_t kInterval = 33333333;  // 30 frames/s

std::shared_ptr<const CameraFrame> frame(std::int64_t t, std::uint64_t sequence = 0) {
  auto f = std::make_shared<CameraFrame>();
  f->capture_time_ns = t;
  f->sequence = sequence;
  return f;
}

FrameSync make_sync(int cameras, std::int64_t tolerance, int max_pending = 4) {
  FrameSyncOptions o;
  o.cameras = cameras;
  o.tolerance_ns = tolerance;
  o.max_pending = max_pending;
  return FrameSync(o);
}

std::uint64_t pending_total(const FrameSync& sync) {
  std::uint64_t n = 0;
  for (int c = 0; c < sync.options().cameras; ++c) n += static_cast<std::uint64_t>(sync.pending(c));
  return n;
}

// Every frame is accounted for: in a set, dropped, or still pending.
void expect_balanced(const FrameSync& sync) {
  const auto& s = sync.stats();
  EXPECT_EQ(s.frames_in, s.matched + s.dropped() + pending_total(sync));
  std::uint64_t per_camera = 0;
  for (auto d : s.dropped_per_camera) per_camera += d;
  EXPECT_EQ(per_camera, s.dropped());
}

}  // namespace

TEST(FrameSync, EqualTimesPairUpInOrder) {
  FrameSync sync = make_sync(2, kInterval / 2);
  for (int i = 0; i < 10; ++i) {
    const std::int64_t t = 1000 * kMs + i * kInterval;
    EXPECT_FALSE(sync.push(0, frame(t, static_cast<std::uint64_t>(i)), t));
    auto set = sync.push(1, frame(t, static_cast<std::uint64_t>(i)), t + 1);
    ASSERT_TRUE(set);
    EXPECT_EQ(set->sequence, static_cast<std::uint64_t>(i));
    ASSERT_EQ(set->frames.size(), 2u);
    EXPECT_EQ(set->frames[0]->capture_time_ns, t);
    EXPECT_EQ(set->frames[1]->capture_time_ns, t);
    EXPECT_EQ(set->complete_time_ns, t + 1);
  }
  EXPECT_EQ(sync.stats().sets, 10u);
  EXPECT_EQ(sync.stats().dropped(), 0u);
  expect_balanced(sync);
}

TEST(FrameSync, OffsetWithinToleranceIsMatched) {
  // Camera 1 runs 5 ms behind camera 0: a 10 ms tolerance pairs every frame.
  FrameSync sync = make_sync(2, 10 * kMs);
  int sets = 0;
  for (int i = 0; i < 20; ++i) {
    const std::int64_t t = i * kInterval;
    sets += sync.push(0, frame(t), 0) ? 1 : 0;
    sets += sync.push(1, frame(t + 5 * kMs), 0) ? 1 : 0;
  }
  EXPECT_EQ(sets, 20);
  EXPECT_EQ(sync.stats().last_spread_ns, 5 * kMs);
  EXPECT_EQ(sync.stats().dropped(), 0u);
}

TEST(FrameSync, OffsetBeyondToleranceIsDroppedAndCounted) {
  // The same streams with a 2 ms tolerance: nothing pairs, everything is dropped, and the
  // pending frames stay bounded.
  FrameSync sync = make_sync(2, 2 * kMs);
  for (int i = 0; i < 50; ++i) {
    const std::int64_t t = i * kInterval;
    EXPECT_FALSE(sync.push(0, frame(t), 0));
    EXPECT_FALSE(sync.push(1, frame(t + 5 * kMs), 0));
    EXPECT_LE(pending_total(sync), 2u);
  }
  EXPECT_EQ(sync.stats().sets, 0u);
  EXPECT_GE(sync.stats().dropped_unmatched, 98u);
  EXPECT_GT(sync.stats().dropped_per_camera[0], 0u);
  EXPECT_GT(sync.stats().dropped_per_camera[1], 0u);
  expect_balanced(sync);
}

TEST(FrameSync, AFrameWithoutPartnerIsDroppedAsSoonAsItCannotMatch) {
  FrameSync sync = make_sync(2, kInterval / 2);
  // Camera 0 lost its frame at 1 interval; camera 1 has it.
  ASSERT_FALSE(sync.push(0, frame(0), 0));
  ASSERT_TRUE(sync.push(1, frame(0), 0));
  ASSERT_FALSE(sync.push(1, frame(kInterval), 0));
  ASSERT_FALSE(sync.push(1, frame(2 * kInterval), 0));
  // Camera 1's frame at 1 interval waits: camera 0 has not yet shown anything later.
  EXPECT_EQ(sync.pending(1), 2);
  auto set = sync.push(0, frame(2 * kInterval), 0);
  ASSERT_TRUE(set);
  EXPECT_EQ(set->frames[1]->capture_time_ns, 2 * kInterval);
  EXPECT_EQ(sync.stats().dropped_unmatched, 1u);  // camera 1's frame at 1 interval
  EXPECT_EQ(sync.stats().dropped_per_camera[1], 1u);
  EXPECT_EQ(pending_total(sync), 0u);
  expect_balanced(sync);
}

TEST(FrameSync, StaleFrameIsDroppedBeforeTheNextSet) {
  FrameSync sync = make_sync(2, kInterval / 2);
  ASSERT_FALSE(sync.push(0, frame(0), 0));
  // Camera 1 skips 0 and delivers 1 interval: camera 0's frame at 0 can never be matched.
  ASSERT_FALSE(sync.push(1, frame(kInterval), 0));
  EXPECT_EQ(sync.pending(0), 0);
  EXPECT_EQ(sync.stats().dropped_unmatched, 1u);
  ASSERT_TRUE(sync.push(0, frame(kInterval), 0));
}

TEST(FrameSync, LateAndRepeatedFramesAreDropped) {
  FrameSync sync = make_sync(2, kInterval / 2);
  ASSERT_FALSE(sync.push(0, frame(2 * kInterval), 0));
  EXPECT_FALSE(sync.push(0, frame(kInterval), 0));      // older than its predecessor
  EXPECT_FALSE(sync.push(0, frame(2 * kInterval), 0));  // the same time again
  EXPECT_EQ(sync.stats().dropped_late, 2u);
  EXPECT_TRUE(sync.push(1, frame(2 * kInterval), 0));
  expect_balanced(sync);
}

TEST(FrameSync, ADeadCameraNeverGrowsTheBacklog) {
  FrameSync sync = make_sync(3, kInterval / 2, 4);
  for (int i = 0; i < 100; ++i) {
    const std::int64_t t = i * kInterval;
    sync.push(0, frame(t), 0);
    sync.push(1, frame(t), 0);  // camera 2 never delivers
    EXPECT_LE(sync.pending(0), 4);
    EXPECT_LE(sync.pending(1), 4);
  }
  EXPECT_EQ(sync.stats().sets, 0u);
  // Camera 0's oldest frame overflows; camera 1's frame of that instant then has no partner left.
  EXPECT_EQ(sync.stats().dropped_overflow, 96u);
  EXPECT_EQ(sync.stats().dropped(), 2u * 96u);
  expect_balanced(sync);
}

TEST(FrameSync, BacklogIsEmittedOldestFirstWhenTheSlowCameraCatchesUp) {
  // Camera 1 delivers late (but within max_pending): each of its frames completes the set with
  // the matching frame of camera 0, in capture order.
  FrameSync sync = make_sync(2, kInterval / 2);
  for (int i = 0; i < 3; ++i) EXPECT_FALSE(sync.push(0, frame(i * kInterval), 0));
  for (int i = 0; i < 3; ++i) {
    auto set = sync.push(1, frame(i * kInterval), 0);
    ASSERT_TRUE(set);
    EXPECT_EQ(set->frames[0]->capture_time_ns, i * kInterval);
  }
  EXPECT_EQ(sync.stats().dropped(), 0u);
}

TEST(FrameSync, ThreeCamerasWithJitterAndLossKeepEverySetWithinTolerance) {
  const std::int64_t tolerance = kInterval / 2;
  FrameSync sync = make_sync(3, tolerance);
  std::mt19937 rng(7);
  std::uniform_int_distribution<std::int64_t> jitter(-tolerance / 2 + 1, tolerance / 2 - 1);
  std::uniform_int_distribution<int> percent(0, 99);
  std::int64_t previous[3] = {-1, -1, -1};
  std::uint64_t next_sequence = 0;
  for (int i = 0; i < 2000; ++i) {
    const std::int64_t t = 5000 * kMs + i * kInterval;
    for (int c = 0; c < 3; ++c) {
      if (percent(rng) < 5) continue;  // lost by the camera
      auto set = sync.push(c, frame(t + jitter(rng)), 0);
      if (!set) continue;
      EXPECT_EQ(set->sequence, next_sequence++);
      std::int64_t lo = set->frames[0]->capture_time_ns, hi = lo;
      for (int k = 0; k < 3; ++k) {
        const std::int64_t ft = set->frames[static_cast<std::size_t>(k)]->capture_time_ns;
        EXPECT_GT(ft, previous[k]);  // in capture order, never reused
        previous[k] = ft;
        lo = std::min(lo, ft);
        hi = std::max(hi, ft);
      }
      EXPECT_LE(hi - lo, tolerance);
    }
  }
  // About 0.95^3 of the instants are complete; all of them must come out.
  EXPECT_GT(sync.stats().sets, 1600u);
  expect_balanced(sync);
}

TEST(FrameSync, ZeroToleranceWantsEqualTimes) {
  FrameSync sync = make_sync(2, 0);
  ASSERT_FALSE(sync.push(0, frame(100), 0));
  EXPECT_FALSE(sync.push(1, frame(101), 0));
  EXPECT_TRUE(sync.push(0, frame(101), 0));
}

TEST(FrameSync, ResetDropsPendingAndAcceptsEarlierTimes) {
  FrameSync sync = make_sync(2, kInterval / 2);
  ASSERT_FALSE(sync.push(0, frame(10 * kInterval), 0));
  sync.reset();
  EXPECT_EQ(sync.stats().dropped_reset, 1u);
  EXPECT_EQ(sync.pending(0), 0);
  ASSERT_FALSE(sync.push(0, frame(kInterval), 0));  // earlier than before the reset: fine
  auto set = sync.push(1, frame(kInterval), 0);
  ASSERT_TRUE(set);
  EXPECT_EQ(set->sequence, 0u);
  expect_balanced(sync);
}

TEST(FrameSync, RejectsBadOptions) {
  EXPECT_THROW(make_sync(0, 0), std::invalid_argument);
  EXPECT_THROW(make_sync(2, -1), std::invalid_argument);
  EXPECT_THROW(make_sync(2, 0, 0), std::invalid_argument);
  FrameSync sync = make_sync(2, 0);
  EXPECT_THROW(sync.push(2, frame(0), 0), std::out_of_range);
}
