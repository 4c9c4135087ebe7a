// The small pieces under RigSource: restart backoff, the frame pool, the realtime offset.
#include <gtest/gtest.h>

#include <cstdlib>

#include "backoff.hpp"
#include "frame_pool.hpp"
#include "realtime_clock.hpp"

using namespace stereod;
using std::chrono::milliseconds;

TEST(Backoff, DoublesUpToTheMaximumAndStartsOverWhenReset) {
  RestartPolicy policy;  // 1 s up to 30 s
  Backoff b(policy);
  const long expected[] = {1000, 2000, 4000, 8000, 16000, 30000, 30000};
  for (long e : expected) EXPECT_EQ(b.next().count(), e);
  EXPECT_EQ(b.failures(), 7);
  b.reset();
  EXPECT_EQ(b.failures(), 0);
  EXPECT_EQ(b.next(), milliseconds(1000));
}

TEST(FramePool, ReusesReturnedFramesAndRefusesBeyondCapacity) {
  FramePool pool(2);
  auto a = pool.acquire();
  auto b = pool.acquire();
  ASSERT_TRUE(a && b);
  EXPECT_NE(a, b);
  EXPECT_EQ(pool.acquire(), nullptr);  // both held: the caller drops its frame
  a->gray.resize(8, 4);
  const std::uint8_t* pixels = a->gray.data();
  CameraFrame* first = a.get();
  a.reset();  // back to the pool, buffers and all
  auto c = pool.acquire();
  EXPECT_EQ(c.get(), first);
  EXPECT_EQ(c->gray.data(), pixels);
}

TEST(RealtimeClock, OffsetTurnsMonotonicIntoRealtime) {
  RealtimeOffset offset;
  const std::int64_t mono = monotonic_now_ns();
  const std::int64_t real = realtime_now_ns();
  // Two clock reads apart: well under a millisecond unless the machine is very busy.
  EXPECT_LT(std::llabs(offset.to_realtime(mono) - real), 50000000LL);
}
