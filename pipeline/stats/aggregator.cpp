#include "stats/aggregator.hpp"

#include <algorithm>
#include <cmath>

namespace stereod::stats {
namespace {

// The value of nearest rank ceil(p/100 * n) among n sorted samples (1-based rank).
double nearest_rank(std::vector<double>& s, double p) {
  const auto n = s.size();
  auto rank = static_cast<std::size_t>(std::ceil(p / 100.0 * static_cast<double>(n)));
  rank = std::clamp<std::size_t>(rank, 1, n);
  std::nth_element(s.begin(), s.begin() + static_cast<std::ptrdiff_t>(rank - 1), s.end());
  return s[rank - 1];
}

}  // namespace

LatencySummary summarize(std::vector<double>& samples) {
  LatencySummary out;
  out.count = samples.size();
  if (samples.empty()) return out;
  out.p50 = nearest_rank(samples, 50);
  out.p90 = nearest_rank(samples, 90);
  out.p99 = nearest_rank(samples, 99);
  out.max = *std::max_element(samples.begin(), samples.end());
  return out;
}

StatsAggregator::StatsAggregator(std::size_t samples_per_stage)
    : samples_per_stage_(std::max<std::size_t>(samples_per_stage, 1)),
      interval_start_(Clock::now()) {}

StatsAggregator::PairState& StatsAggregator::pair_state(std::string_view pair) {
  auto it = pairs_.find(pair);
  if (it == pairs_.end()) it = pairs_.emplace(std::string(pair), PairState{}).first;
  return it->second;
}

void StatsAggregator::add_pair(std::string_view pair) {
  std::lock_guard<std::mutex> lock(mutex_);
  pair_state(pair);
}

void StatsAggregator::remove_pair(std::string_view pair) {
  std::lock_guard<std::mutex> lock(mutex_);
  const auto it = pairs_.find(pair);
  if (it != pairs_.end()) pairs_.erase(it);
}

void StatsAggregator::add_sample(StageSamples& s, double ms) {
  ++s.seen;
  s.max = s.seen == 1 ? ms : std::max(s.max, ms);
  if (s.samples.size() < samples_per_stage_) {
    s.samples.push_back(ms);
    return;
  }
  // Reservoir sampling (Algorithm R): keep each of the `seen` samples with equal probability.
  rng_state_ ^= rng_state_ << 13;
  rng_state_ ^= rng_state_ >> 7;
  rng_state_ ^= rng_state_ << 17;
  const std::uint64_t j = rng_state_ % s.seen;
  if (j < s.samples.size()) s.samples[j] = ms;
}

void StatsAggregator::record_frame(std::string_view pair,
                                   const std::vector<publish::StageLatency>& stages) {
  std::lock_guard<std::mutex> lock(mutex_);
  PairState& p = pair_state(pair);
  ++p.frames;
  ++p.frames_total;
  for (const auto& st : stages) {
    auto it = std::find_if(p.stages.begin(), p.stages.end(),
                           [&](const auto& e) { return e.first == st.stage; });
    if (it == p.stages.end()) {
      p.stages.emplace_back(st.stage, StageSamples{});
      it = std::prev(p.stages.end());
    }
    add_sample(it->second, st.ms);
  }
}

void StatsAggregator::record_drop(std::string_view pair, DropReason reason, std::uint64_t count) {
  std::lock_guard<std::mutex> lock(mutex_);
  PairState& p = pair_state(pair);
  p.drops[static_cast<std::size_t>(reason)] += count;
  p.drops_total[static_cast<std::size_t>(reason)] += count;
}

void StatsAggregator::record_error(std::string_view pair, std::string message) {
  std::lock_guard<std::mutex> lock(mutex_);
  PairState& p = pair_state(pair);
  ++p.errors_total;
  p.last_error = std::move(message);
}

StatsSnapshot StatsAggregator::snapshot() {
  return snapshot(Clock::now(), publish::realtime_ns());
}

StatsSnapshot StatsAggregator::snapshot(Clock::time_point now, std::int64_t realtime) {
  std::lock_guard<std::mutex> lock(mutex_);
  StatsSnapshot s;
  s.time_ns = realtime;
  s.interval_s = std::max(0.0, std::chrono::duration<double>(now - interval_start_).count());
  interval_start_ = now;
  for (auto& [name, p] : pairs_) {
    PairStats out;
    out.pair = name;
    out.frames = p.frames;
    out.fps = s.interval_s > 0 ? static_cast<double>(p.frames) / s.interval_s : 0.0;
    out.drops = p.drops;
    out.frames_total = p.frames_total;
    out.drops_total = p.drops_total;
    out.errors_total = p.errors_total;
    out.last_error = p.last_error;
    for (auto& [stage, samples] : p.stages) {
      LatencySummary summary = summarize(samples.samples);
      summary.count = samples.seen;
      summary.max = samples.max;
      out.latency.push_back({stage, summary});
      samples.samples.clear();  // keeps the allocation for the next interval
      samples.seen = 0;
      samples.max = 0;
    }
    // Stages keep their place across intervals (a quiet interval reports count 0).
    p.frames = 0;
    p.drops = DropCounts{};
    s.pairs.push_back(std::move(out));
  }
  last_ = s;
  return s;
}

std::optional<StatsSnapshot> StatsAggregator::last_snapshot() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return last_;
}

}  // namespace stereod::stats
