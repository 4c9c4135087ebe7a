// cuda/batch_policy.hpp: when the CUDA engine's launcher sends a batch (host code, no GPU needed).
#include "batch_policy.hpp"

#include <gtest/gtest.h>

#include <initializer_list>
#include <limits>
#include <vector>

namespace stereod::cuda {
namespace {

TEST(BatchPolicy, NothingReadyIsNeverSent) {
  for (int in_flight = 0; in_flight <= 8; ++in_flight) {
    EXPECT_FALSE(launch_batch_now(in_flight, 0, 0));
    EXPECT_FALSE(launch_batch_now(in_flight, 0, 4));
  }
}

TEST(BatchPolicy, SentAtOnceWhileFewBatchesAreOnTheirWay) {
  for (int in_flight = 0; in_flight < kEagerBatches; ++in_flight) {
    for (int joinable = 1; joinable <= 32; ++joinable) {
      for (int ready = 1; ready <= joinable; ++ready)
        EXPECT_TRUE(launch_batch_now(in_flight, ready, joinable))
            << in_flight << " on their way, " << ready << " of " << joinable << " ready";
    }
  }
}

TEST(BatchPolicy, WaitsForItsPairsOnceTheGpuHasWorkQueued) {
  for (int in_flight = kEagerBatches; in_flight <= 8; ++in_flight) {
    EXPECT_FALSE(launch_batch_now(in_flight, 1, 8));
    EXPECT_FALSE(launch_batch_now(in_flight, 7, 8));
    EXPECT_TRUE(launch_batch_now(in_flight, 8, 8)) << "a full batch goes";
  }
}

TEST(BatchPolicy, ALonePairKeepsAllItsFramesInFlight) {
  // One pair's batches hold its one frame: always full, so each goes at once.
  for (int in_flight = 0; in_flight <= 8; ++in_flight)
    EXPECT_TRUE(launch_batch_now(in_flight, 1, 1));
}

TEST(BatchPolicy, APairIsWaitedForOnlyWhileItKeepsSubmitting) {
  const double never = std::numeric_limits<double>::infinity();
  EXPECT_TRUE(pair_could_join(true, false, never, 1.0)) << "a frame ready";
  EXPECT_FALSE(pair_could_join(false, false, 0.0, 1.0)) << "every frame on its way";
  EXPECT_TRUE(pair_could_join(false, true, 0.5, 1.0)) << "active within the horizon";
  EXPECT_TRUE(pair_could_join(false, true, 1.0, 1.0));
  EXPECT_FALSE(pair_could_join(false, true, 1.5, 1.0)) << "a camera that stopped";
  EXPECT_FALSE(pair_could_join(false, true, never, 1.0)) << "never submitted";
  // Before a batch of its kind came back there is no horizon: a slot off the GPU counts.
  EXPECT_TRUE(pair_could_join(false, true, never, kNoHorizon));
  EXPECT_TRUE(pair_could_join(false, true, 50.0, kNoHorizon));
}

TEST(BatchPolicy, TheHorizonIsAFewSpansAndAtLeastTheFloor) {
  EXPECT_DOUBLE_EQ(horizon_for_span(0.1), kMinHorizonMs) << "small batches: the floor";
  EXPECT_DOUBLE_EQ(horizon_for_span(10.0), kHorizonSpans * 10.0);
  EXPECT_GE(horizon_for_span(kMinHorizonMs), kMinHorizonMs);
  // A camera at 30 frames/s beside batches of a millisecond is not waited for.
  EXPECT_FALSE(pair_could_join(false, true, 33.0, horizon_for_span(1.0)));
  EXPECT_TRUE(pair_could_join(false, true, 1.5, horizon_for_span(0.2)));
}

std::vector<PairOutlook> outlooks(std::initializer_list<PairOutlook> l) {
  return l;
}

TEST(BatchPolicy, TheLeadIsTheFirstReadyPairFromTheRoundRobinsPlace) {
  const auto pairs = outlooks({{0, true, true}, {0, false, true}, {0, true, true}});
  const auto c = choose_batch(pairs, 1, 0, 8);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->lead, 2u);
  EXPECT_EQ(c->members, (std::vector<std::size_t>{2, 0}));
}

TEST(BatchPolicy, OnlyPairsOfTheLeadsKeyJoinUpToTheCapacity) {
  std::vector<PairOutlook> pairs;
  for (int i = 0; i < 12; ++i) pairs.push_back({i % 3 == 2 ? 1 : 0, true, true});
  const auto c = choose_batch(pairs, 0, 0, 4);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->members, (std::vector<std::size_t>{0, 1, 3, 4}));
}

TEST(BatchPolicy, ABatchThatMustWaitDoesNotHoldUpAnotherKindsFullBatch) {
  // Key 0: one pair ready of two that could join; key 1: both its pairs ready. With the GPU's
  // queue full enough, key 0's batch waits and key 1's goes.
  const auto pairs =
      outlooks({{0, true, true}, {1, true, true}, {0, false, true}, {1, true, true}});
  const auto c = choose_batch(pairs, 0, kEagerBatches, 8);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->lead, 1u);
  EXPECT_EQ(c->members, (std::vector<std::size_t>{1, 3}));
  // While few batches are on their way, the round robin's lead goes at once.
  const auto eager = choose_batch(pairs, 0, kEagerBatches - 1, 8);
  ASSERT_TRUE(eager);
  EXPECT_EQ(eager->lead, 0u);
}

TEST(BatchPolicy, NothingGoesWhenEveryReadyBatchMustWait) {
  const auto pairs =
      outlooks({{0, true, true}, {1, false, true}, {0, false, true}, {1, true, true}});
  EXPECT_FALSE(choose_batch(pairs, 0, kEagerBatches, 8));
  EXPECT_FALSE(choose_batch(outlooks({{0, false, true}}), 0, 0, 8)) << "nothing ready";
  EXPECT_FALSE(choose_batch({}, 0, 0, 8));
}

}  // namespace
}  // namespace stereod::cuda
