// When a batch is likely to end on the GPU, from how long the last batches of its kind took, so
// that the CUDA engine's launcher can watch the batch's event over a short window around that
// moment instead of sleeping until the driver's completion callback wakes it (about 90 us after
// the GPU's last byte on an H200: the driver's callback thread, then a condition variable;
// docs/PERFORMANCE.md). Host code only, without CUDA, so that the unit tests hold it.
#pragma once

#include <chrono>
#include <map>
#include <optional>
#include <string>

namespace stereod::cuda {

class BatchForecast {
 public:
  using Clock = std::chrono::steady_clock;
  using Ms = std::chrono::duration<double, std::milli>;

  // Where a batch's end is watched: from `from` (a little before the expected end, so that the
  // usual spread of the spans is inside) to `until` (past it, after which the watcher gives up
  // and the callback wakes it as before). The watcher's core is busy for at most until - from.
  struct Window {
    Clock::time_point from, until;
  };

  // A batch of `kind` came back after `span_ms` on the GPU (its first event to its last).
  // Spans outside (0, kMaxSpanMs] are not evidence of anything and are left out.
  void record(const std::string& kind, double span_ms) {
    if (!(span_ms > 0.0) || span_ms > kMaxSpanMs) return;
    auto it = span_ms_.find(kind);
    if (it == span_ms_.end()) {
      span_ms_.emplace(kind, span_ms);
      return;
    }
    it->second += (span_ms - it->second) * kWeight;
  }

  // The expected span of a batch of `kind`: none until one has come back.
  std::optional<double> expected_ms(const std::string& kind) const {
    const auto it = span_ms_.find(kind);
    if (it == span_ms_.end()) return std::nullopt;
    return it->second;
  }

  // The window for a batch of `kind` launched at `launched`.
  std::optional<Window> window(const std::string& kind, Clock::time_point launched) const {
    const std::optional<double> span = expected_ms(kind);
    if (!span) return std::nullopt;
    const double lead = kLeadMs + *span * kLeadShare, tail = kTailMs + *span * kTailShare;
    const auto at = [&](double ms) {
      return launched + std::chrono::duration_cast<Clock::duration>(Ms(ms));
    };
    return Window{at(*span > lead ? *span - lead : 0.0), at(*span + tail)};
  }

  // The moving average's weight of the newest span: about the last eight batches count, so that
  // a scene that fills up or empties moves the forecast within a few frames.
  static constexpr double kWeight = 1.0 / 8;
  // How early the watch starts and how long past the forecast it goes on: a fixed part (the
  // launch's own delay and the clock's) and a share of the span (batches that wait for others'
  // vary with them). For a 0.5 ms frame: from 0.09 ms before to 0.23 ms after.
  static constexpr double kLeadMs = 0.03, kLeadShare = 1.0 / 8;
  static constexpr double kTailMs = 0.1, kTailShare = 1.0 / 4;
  static constexpr double kMaxSpanMs = 1000.0;

 private:
  std::map<std::string, double> span_ms_;
};

}  // namespace stereod::cuda
