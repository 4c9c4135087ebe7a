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
// Buffers come from a small GstBufferPool per appsrc (they return when the appsink's callback has
// copied them), so steady-state feeding allocates nothing. Each camera gets one format: RGB for a
// color camera, GRAY8 otherwise.
#pragma once

#include <gst/gst.h>
#include <gst/video/video.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "ingest/camera_config.hpp"
#include "ingest/paced_feeder.hpp"
#include "synthetic/synthetic_scene.hpp"

namespace stereod {

class SyntheticFeeder : private PacedFeeder {
 public:
  struct Output {
    GstElement* src = nullptr;  // the camera's appsrc (owned by the pipeline)
    bool rgb = false;           // RGB (a color camera) or GRAY8
    int view = 0;               // which view: 0 left, 1 right, 2 vertical
  };

  SyntheticFeeder(std::shared_ptr<const SyntheticScene> scene, FrameRate fps);
  ~SyntheticFeeder() override;

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
  void feed(const Schedule& schedule) override;
  bool push(const Sink& sink, const SyntheticFrame& frame, GstClockTime pts, int index);
  void release_sinks();

  const std::shared_ptr<const SyntheticScene> scene_;
  std::vector<Sink> sinks_;
  SyntheticFrame frame_;  // rendered into, reused
  int next_index_ = 0;    // continues across restarts
  std::atomic<std::uint64_t> skipped_{0};
};

}  // namespace stereod
