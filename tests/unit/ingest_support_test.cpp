// The small pieces under RigSource: restart backoff, the frame pool, the realtime offset.
#include <gtest/gtest.h>

#include <cstdlib>

#include "ingest/backoff.hpp"
#include "ingest/frame_pool.hpp"
#include "ingest/realtime_clock.hpp"

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
  const std::uint8_t* pixels = a->reserve(32, {});
  CameraFrame* first = a.get();
  a.reset();  // back to the pool, buffers and all
  auto c = pool.acquire();
  EXPECT_EQ(c.get(), first);
  EXPECT_EQ(c->reserve(32, {}), pixels);  // the same memory, not allocated again
  EXPECT_EQ(c->reserve(16, {}), pixels);
}

TEST(CameraFrame, StorageComesFromTheAllocatorAndGrowsOnlyWhenNeeded) {
  int calls = 0;
  const PixelAllocator counting = [&](std::size_t bytes) {
    ++calls;
    return allocate_pixels(bytes);
  };
  CameraFrame f;
  std::uint8_t* p = f.reserve(100, counting);
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(f.reserve(100, counting), p);
  EXPECT_EQ(f.reserve(50, counting), p);
  EXPECT_EQ(calls, 1);
  f.reserve(200, counting);
  EXPECT_EQ(calls, 2);
  EXPECT_GE(f.storage_bytes, 200u);
}

TEST(CameraFrame, GrayOfAColorFrameIsItsLuma) {
  const std::uint8_t rgb[] = {255, 0, 0, 0, 255, 0, 0, 0, 255, 10, 20, 30};
  CameraFrame f;
  f.color = {rgb, 2, 2, 6};
  const Gray8 g = gray_of(f);
  ASSERT_EQ(g.width(), 2);
  EXPECT_EQ(g(0, 0), luma_bt601(255, 0, 0));
  EXPECT_EQ(g(1, 0), luma_bt601(0, 255, 0));
  EXPECT_EQ(g(0, 1), luma_bt601(0, 0, 255));
  EXPECT_EQ(g(1, 1), luma_bt601(10, 20, 30));
}

TEST(RealtimeClock, OffsetTurnsMonotonicIntoRealtime) {
  RealtimeOffset offset;
  const std::int64_t mono = monotonic_now_ns();
  const std::int64_t real = realtime_now_ns();
  // Two clock reads apart: well under a millisecond unless the machine is very busy.
  EXPECT_LT(std::llabs(offset.to_realtime(mono) - real), 50000000LL);
}
