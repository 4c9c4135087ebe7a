// Capture times as CLOCK_REALTIME nanoseconds (docs/ARCHITECTURE.md "Data flow").
//
// Each rig's pipeline runs on its own GstSystemClock of type MONOTONIC, so pipeline clock time IS
// CLOCK_MONOTONIC. A buffer's capture time in that clock is its PTS turned into running time
// (gst_segment_to_running_time with the sample's segment) plus the pipeline's base time. Adding
// the offset CLOCK_REALTIME - CLOCK_MONOTONIC turns it into wall-clock time:
//
//   capture_realtime_ns = running_time(PTS) + base_time + (CLOCK_REALTIME - CLOCK_MONOTONIC)
//
// The offset is sampled when the pipeline starts and refreshed every second by the rig's
// supervisor (RealtimeOffset). On Linux the difference between the two clocks changes only when
// the wall clock is stepped (settimeofday, a leap second; NTP slewing moves both alike), so
// timestamps follow a step within a second, and the frames of one set always share one offset.
// Pacing and waits stay on the monotonic clock, so a step never stalls or bursts capture.
#pragma once

#include <atomic>
#include <cstdint>

namespace stereod {

std::int64_t monotonic_now_ns();
std::int64_t realtime_now_ns();

// CLOCK_REALTIME - CLOCK_MONOTONIC, read as monotonic, realtime, monotonic; of a few tries the one
// with the tightest bracket, taken at its midpoint (error well under a microsecond unless the
// thread is preempted on every try).
std::int64_t sample_realtime_offset_ns();

class RealtimeOffset {
 public:
  RealtimeOffset() : offset_(sample_realtime_offset_ns()) {}
  void refresh() { offset_.store(sample_realtime_offset_ns(), std::memory_order_relaxed); }
  std::int64_t get() const { return offset_.load(std::memory_order_relaxed); }
  std::int64_t to_realtime(std::int64_t monotonic_ns) const { return monotonic_ns + get(); }

 private:
  std::atomic<std::int64_t> offset_;
};

}  // namespace stereod
