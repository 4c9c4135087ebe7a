// The `stats` topic's content (docs/PROTOCOL.md "Stats topic"): per pair, what happened during the
// last interval (about a second) and since start. Built by StatsAggregator, sent by the Publisher,
// decoded by the clients.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace stereod::stats {

// Why a frame never reached the subscribers.
enum class DropReason {
  kSync,        // FrameSync could not complete a set in time (counted for every pair of the rig)
  kEngineBusy,  // the engine had no free slot
  kSend,        // the publisher's queue was full (or a send failed)
};
constexpr std::size_t kDropReasons = 3;
std::string_view drop_reason_name(DropReason reason);  // "sync", "engine_busy", "send"

// Percentiles by the nearest-rank rule over the interval's samples, in milliseconds.
struct LatencySummary {
  std::uint64_t count = 0;
  double p50 = 0;
  double p90 = 0;
  double p99 = 0;
  double max = 0;
};

struct StageSummary {
  std::string stage;
  LatencySummary latency;
};

using DropCounts = std::array<std::uint64_t, kDropReasons>;  // indexed by DropReason

struct PairStats {
  std::string pair;
  std::uint64_t frames = 0;  // published during the interval
  double fps = 0;            // frames / interval
  DropCounts drops{};        // during the interval
  std::uint64_t frames_total = 0;
  DropCounts drops_total{};
  std::uint64_t errors_total = 0;  // failed frames and source errors since start
  std::string last_error;          // the latest of those, "" when none
  std::vector<StageSummary> latency;
};

// The publisher's own state at snapshot time.
struct PublisherStats {
  std::uint64_t queued = 0;  // frames waiting in the publish queue
  std::uint64_t queue_capacity = 0;
  std::uint64_t frames_sent_total = 0;
  std::uint64_t zero_copy_payloads_total = 0;  // the publisher's own payloads (depth), not copied
  std::uint64_t copied_payloads_total = 0;     // payloads copied out of the caller's buffers
};

struct StatsSnapshot {
  std::int64_t time_ns = 0;  // CLOCK_REALTIME at the end of the interval
  double interval_s = 0;
  std::vector<PairStats> pairs;  // ordered by pair name
  PublisherStats publisher;
};

std::string encode_stats(const StatsSnapshot& snapshot);
// Validates like decode_header: throws publish::ProtocolError naming the field.
StatsSnapshot decode_stats(std::string_view json);

}  // namespace stereod::stats
