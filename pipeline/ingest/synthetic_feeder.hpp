// The thread that drives a synthetic:// rig: it renders frame i of the scene (both views at once,
// so the cameras are in lockstep) ahead of time, waits on the pipeline clock until the frame's
// time, and pushes each view into its camera's appsrcs with the same PTS, so both frames get the
// same capture time. Pushing at the frame's own time makes a synthetic camera behave like a real
// one with no transfer delay: capture time and arrival coincide.
//
// Frame i of a run is due at running time t0 + (i - i0) / fps, t0 being when feeding began. When
// rendering falls behind by more than a frame, indices are skipped (counted) to catch up rather
// than drift. Indices go on across restarts, so the scene never repeats itself.
//
// Buffers come from a small GstBufferPool per appsrc (they return when the appsinks' callbacks
// have copied them), so steady-state feeding allocates nothing.
#pragma once

#include <gst/gst.h>
#include <gst/video/video.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "camera_config.hpp"
#include "synthetic/synthetic_scene.hpp"

namespace stereod {

class SyntheticFeeder {
 public:
  struct Output {
    GstElement* gray_src = nullptr;  // appsrc for GRAY8 (owned by the pipeline)
    GstElement* rgb_src = nullptr;   // appsrc for RGB, or nullptr
    int view = 0;                    // which view: 0 left, 1 right, 2 vertical
  };

  SyntheticFeeder(std::shared_ptr<const SyntheticScene> scene, FrameRate fps);
  ~SyntheticFeeder();
  SyntheticFeeder(const SyntheticFeeder&) = delete;
  SyntheticFeeder& operator=(const SyntheticFeeder&) = delete;

  // Starts feeding `pipeline`, which has been set to PLAYING. Throws std::runtime_error when a
  // buffer pool cannot be set up.
  void start(GstElement* pipeline, std::vector<Output> outputs);
  // Stops and joins the thread; call before the pipeline is stopped.
  void stop();

  std::uint64_t skipped() const { return skipped_.load(std::memory_order_relaxed); }

 private:
  struct Sink {
    GstElement* src = nullptr;
    GstBufferPool* pool = nullptr;
    GstVideoInfo info;  // of the appsrc's caps: the buffers' layout
    bool rgb = false;
    int view = 0;
  };
  void run(GstElement* pipeline);
  bool push(const Sink& sink, const SyntheticFrame& frame, GstClockTime pts, int index);
  bool wait_until(GstClock* clock, GstClockTime time);  // false when stopped
  void release_sinks();

  const std::shared_ptr<const SyntheticScene> scene_;
  const FrameRate fps_;
  std::vector<Sink> sinks_;
  SyntheticFrame frame_;  // rendered into, reused
  int next_index_ = 0;    // continues across restarts

  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::thread thread_;
  std::atomic<std::uint64_t> skipped_{0};
};

}  // namespace stereod
