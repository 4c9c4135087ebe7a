// What the threads that feed a rig's appsrcs share (synthetic_feeder.hpp renders frames,
// image_feeder.hpp reads numbered image files): a thread started once the pipeline plays, the
// pipeline's clock, frame times on the configured rate's grid, waits on that clock that stop()
// cuts short. The views of one frame are pushed with one PTS, so the cameras of the rig are in
// lockstep by construction.
#pragma once

#include <gst/gst.h>

#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>

#include "ingest/camera_config.hpp"

namespace stereod {

class PacedFeeder {
 public:
  explicit PacedFeeder(FrameRate fps) : fps_(fps) {}
  virtual ~PacedFeeder() = default;  // a derived feeder calls stop_feeding() in its destructor
  PacedFeeder(const PacedFeeder&) = delete;
  PacedFeeder& operator=(const PacedFeeder&) = delete;

 protected:
  // Frame n of a feeding run is due at running time t0 + n / fps, t0 being when feeding began.
  struct Schedule {
    GstClock* clock = nullptr;
    GstClockTime base = 0;  // the pipeline's base time
    GstClockTime t0 = 0;    // running time when feeding began
    FrameRate fps;
    GstClockTime due(std::int64_t n) const;
    GstClockTime interval() const { return due(1) - due(0); }
    GstClockTime now() const;  // running time
  };

  // Runs feed() on a thread of its own once the pipeline (set to PLAYING) has its clock.
  void start_feeding(GstElement* pipeline);
  // Stops and joins the thread.
  void stop_feeding();
  // Waits until running time `time`; false when stopped meanwhile.
  bool wait_until(const Schedule& schedule, GstClockTime time);

  // On the feeding thread until it returns or stop_feeding() (wait_until says so).
  virtual void feed(const Schedule& schedule) = 0;

  const FrameRate fps_;

 private:
  void run(GstElement* pipeline);

  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace stereod
