#include "ingest/paced_feeder.hpp"

#include <chrono>

#include "ingest/gst_support.hpp"

namespace stereod {

GstClockTime PacedFeeder::Schedule::due(std::int64_t n) const {
  return t0 + gst_util_uint64_scale(static_cast<guint64>(n),
                                    GST_SECOND * static_cast<guint64>(fps.den),
                                    static_cast<guint64>(fps.num));
}

GstClockTime PacedFeeder::Schedule::now() const {
  return gst_clock_get_time(clock) - base;
}

void PacedFeeder::start_feeding(GstElement* pipeline) {
  stop_feeding();
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = false;
  }
  thread_ = std::thread([this, p = GST_ELEMENT(gst_object_ref(pipeline))] {
    run(p);
    gst_object_unref(p);
  });
}

void PacedFeeder::stop_feeding() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

bool PacedFeeder::wait_until(const Schedule& schedule, GstClockTime time) {
  // The pipeline clock is CLOCK_MONOTONIC (rig_source.cpp), as is steady_clock: a timed wait on
  // the condition variable waits for the clock and can be cut short by stop_feeding().
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    if (stopping_) return false;
    const GstClockTime now = gst_clock_get_time(schedule.clock);
    if (now >= schedule.base + time) return true;
    wake_.wait_for(lock, std::chrono::nanoseconds(schedule.base + time - now));
  }
}

void PacedFeeder::run(GstElement* pipeline) {
  // The pipeline does not reach PLAYING before the first buffer: a live pipeline's sinks complete
  // their state change when data arrives. Its clock and base time are set as soon as
  // set_state(PLAYING) has returned, which is when the rig starts the feeder; wait for the clock
  // all the same, in case of a start that is still under way.
  GstRef<GstClock> clock(gst_element_get_clock(pipeline));
  while (!clock) {
    std::unique_lock<std::mutex> lock(mutex_);
    if (wake_.wait_for(lock, std::chrono::milliseconds(10), [this] { return stopping_; })) return;
    clock.reset(gst_element_get_clock(pipeline));
  }
  Schedule s;
  s.clock = clock.get();
  s.base = gst_element_get_base_time(pipeline);
  s.t0 = gst_clock_get_time(clock.get()) - s.base;
  s.fps = fps_;
  feed(s);
}

}  // namespace stereod
