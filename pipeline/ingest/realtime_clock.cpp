#include "ingest/realtime_clock.hpp"

#include <time.h>

namespace stereod {
namespace {

std::int64_t read_ns(clockid_t clock) {
  timespec ts{};
  clock_gettime(clock, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1000000000LL + ts.tv_nsec;
}

}  // namespace

std::int64_t monotonic_now_ns() {
  return read_ns(CLOCK_MONOTONIC);
}
std::int64_t realtime_now_ns() {
  return read_ns(CLOCK_REALTIME);
}

std::int64_t sample_realtime_offset_ns() {
  std::int64_t best_offset = 0;
  std::int64_t best_bracket = -1;
  for (int i = 0; i < 5; ++i) {
    const std::int64_t before = monotonic_now_ns();
    const std::int64_t real = realtime_now_ns();
    const std::int64_t after = monotonic_now_ns();
    const std::int64_t bracket = after - before;
    if (best_bracket < 0 || bracket < best_bracket) {
      best_bracket = bracket;
      best_offset = real - (before + bracket / 2);
    }
  }
  return best_offset;
}

}  // namespace stereod
