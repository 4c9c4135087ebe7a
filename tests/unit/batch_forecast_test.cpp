// cuda/batch_forecast.hpp: the CUDA engine's forecast of a batch's end (host code, no GPU needed).
#include "batch_forecast.hpp"

#include <gtest/gtest.h>

#include <chrono>

namespace stereod::cuda {
namespace {

using Clock = BatchForecast::Clock;

double ms_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

TEST(BatchForecast, NoWindowBeforeABatchOfItsKindCameBack) {
  BatchForecast f;
  const auto t0 = Clock::now();
  EXPECT_FALSE(f.window("a#1", t0));
  f.record("a#2", 0.5);
  EXPECT_FALSE(f.window("a#1", t0)) << "another member count is another kind";
  EXPECT_TRUE(f.window("a#2", t0));
}

TEST(BatchForecast, WindowSurroundsTheExpectedEnd) {
  BatchForecast f;
  f.record("k", 0.5);
  const auto t0 = Clock::now();
  const auto w = f.window("k", t0);
  ASSERT_TRUE(w);
  const double lead = BatchForecast::kLeadMs + 0.5 * BatchForecast::kLeadShare;
  const double tail = BatchForecast::kTailMs + 0.5 * BatchForecast::kTailShare;
  EXPECT_NEAR(ms_between(t0, w->from), 0.5 - lead, 1e-6);
  EXPECT_NEAR(ms_between(t0, w->until), 0.5 + tail, 1e-6);
  EXPECT_LT(ms_between(t0, w->from), 0.5);
  EXPECT_GT(ms_between(t0, w->until), 0.5);
}

TEST(BatchForecast, ShortBatchesAreWatchedFromTheLaunch) {
  BatchForecast f;
  f.record("k", 0.02);  // shorter than the lead
  const auto t0 = Clock::now();
  const auto w = f.window("k", t0);
  ASSERT_TRUE(w);
  EXPECT_EQ(w->from, t0);
  EXPECT_GT(w->until, t0);
}

TEST(BatchForecast, FollowsAChangeOfSpanWithinAFewBatches) {
  BatchForecast f;
  f.record("k", 0.2);
  // The gap to the new span shrinks by 1 - kWeight with each batch.
  double gap = 0.8;
  for (int i = 0; i < 16; ++i) {
    f.record("k", 1.0);
    gap *= 1.0 - BatchForecast::kWeight;
    ASSERT_TRUE(f.expected_ms("k"));
    EXPECT_NEAR(*f.expected_ms("k"), 1.0 - gap, 1e-9) << "after " << i + 1;
  }
  EXPECT_GT(*f.expected_ms("k"), 0.9) << "within a tenth after 16 batches";
  // One outlier moves it by its weight only.
  const double before = *f.expected_ms("k");
  f.record("k", 9.0);
  EXPECT_NEAR(*f.expected_ms("k"), before + (9.0 - before) * BatchForecast::kWeight, 1e-9);
}

TEST(BatchForecast, SpansThatMeanNothingAreLeftOut) {
  BatchForecast f;
  f.record("k", 0.0);
  f.record("k", -1.0);
  f.record("k", 5000.0);
  EXPECT_FALSE(f.expected_ms("k"));
  f.record("k", 0.4);
  f.record("k", 0.0);  // e.g. events that could not be timed
  EXPECT_DOUBLE_EQ(*f.expected_ms("k"), 0.4);
}

}  // namespace
}  // namespace stereod::cuda
