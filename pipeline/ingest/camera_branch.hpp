// One camera's end of a rig pipeline: its appsinks' callbacks turn GStreamer samples into
// CameraFrames (from a small pool, so buffers are reused) with the camera's sequence number and
// realtime capture time, and hand each finished frame to the rig. With color, the gray and RGB
// appsinks (two branches of a tee) are paired by buffer timestamp; a half whose partner was
// dropped is discarded and counted.
#pragma once

#include <gst/app/gstappsink.h>
#include <gst/gst.h>
#include <gst/video/video.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>

#include "camera_config.hpp"
#include "frame.hpp"
#include "frame_pool.hpp"
#include "realtime_clock.hpp"

namespace stereod {

// Posted on the bus (an application message) when a camera's appsink sees end of stream, so the
// rig's supervisor learns which camera ended even while the others go on.
constexpr const char* kCameraEosMessage = "stereod-camera-eos";

class CameraBranch {
 public:
  // Called on a GStreamer streaming thread with each finished frame, in capture order.
  using Deliver = std::function<void(int camera, std::shared_ptr<CameraFrame> frame)>;

  // `indexed`: the source numbers its buffers (GST_BUFFER_OFFSET) with a frame index that goes
  // to CameraFrame::source_index (synthetic://).
  CameraBranch(int index, const CameraConfig& config, bool indexed, int pool_capacity,
               const RealtimeOffset& offset, Deliver deliver);
  ~CameraBranch();
  CameraBranch(const CameraBranch&) = delete;
  CameraBranch& operator=(const CameraBranch&) = delete;

  // Hooks the appsinks of a freshly built camera bin; throws std::runtime_error when the bin
  // lacks one (a broken description).
  void attach(GstElement* bin);
  // After the pipeline is stopped: forgets a half-assembled frame and cached caps.
  void detach();

  const CameraConfig& config() const { return config_; }
  int index() const { return index_; }
  std::uint64_t delivered() const { return delivered_.load(std::memory_order_relaxed); }
  // Frames lost before FrameSync: pool exhausted (consumer too slow) or color half unpaired.
  std::uint64_t dropped() const { return dropped_.load(std::memory_order_relaxed); }
  // CLOCK_MONOTONIC when the last sample arrived from GStreamer (delivered or dropped: a camera
  // whose frames are all dropped is alive); 0 before the first one since attach().
  std::int64_t last_sample_ns() const { return last_sample_ns_.load(std::memory_order_relaxed); }

 private:
  struct Sink {
    CameraBranch* self = nullptr;
    bool rgb = false;
    GstCaps* caps = nullptr;  // caps `info` was parsed from (a reference is held)
    GstVideoInfo info;
  };
  static GstFlowReturn on_sample(GstAppSink* appsink, gpointer sink);
  static void on_eos(GstAppSink* appsink, gpointer sink);
  static void hook(GstElement* bin, const char* name, Sink& sink);
  void handle(GstElement* appsink, GstSample* sample, Sink& sink);
  bool copy_into(GstSample* sample, Sink& sink, CameraFrame& frame);
  std::shared_ptr<CameraFrame> acquire();  // from the pool; nullptr (counted, warned) when empty
  void finish(std::shared_ptr<CameraFrame> frame, std::int64_t capture_ns,
              std::int64_t source_index);

  const int index_;
  const CameraConfig config_;
  const bool indexed_;
  const RealtimeOffset& offset_;
  const Deliver deliver_;
  FramePool pool_;
  Sink gray_sink_, rgb_sink_;

  std::mutex mutex_;  // pairing state and delivery order
  std::shared_ptr<CameraFrame> assembling_;
  GstClockTime assembling_pts_ = GST_CLOCK_TIME_NONE;
  bool has_gray_ = false, has_rgb_ = false;
  std::uint64_t next_sequence_ = 0;  // continues across restarts

  std::atomic<std::uint64_t> delivered_{0};
  std::atomic<std::uint64_t> dropped_{0};
  std::atomic<std::int64_t> last_sample_ns_{0};
  bool warned_exhausted_ = false;  // the pool-exhausted warning, once per attach()
};

}  // namespace stereod
