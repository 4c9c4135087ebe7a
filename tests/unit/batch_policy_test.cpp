// cuda/batch_policy.hpp: when the CUDA engine's launcher sends a batch (host code, no GPU needed).
#include "batch_policy.hpp"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace stereod::cuda
