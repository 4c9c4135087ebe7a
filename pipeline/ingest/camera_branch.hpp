// One camera's end of a rig pipeline: its appsink's callback copies each GStreamer sample, once,
// into a CameraFrame from a small pool (so buffers are reused, and come from the rig's
// PixelAllocator: page-locked memory the CUDA engine uploads from directly) with the camera's
// sequence number and realtime capture time, and hands the frame to the rig. A camera delivers one
// format: GRAY8, or RGB when it is a color camera (the engines derive the gray from it), or the
// UYVY or NV12 a color camera with a raw_format names (the engine converts it: yuv.hpp).
#pragma once

#include <gst/app/gstappsink.h>
#include <gst/gst.h>
#include <gst/video/video.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>

#include "frame.hpp"
#include "ingest/camera_config.hpp"
#include "ingest/frame_pool.hpp"
#include "ingest/realtime_clock.hpp"

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
               const RealtimeOffset& offset, Deliver deliver, PixelAllocator allocate = {});
  ~CameraBranch();
  CameraBranch(const CameraBranch&) = delete;
  CameraBranch& operator=(const CameraBranch&) = delete;

  // Hooks the appsink of a freshly built camera bin; throws std::runtime_error when the bin
  // lacks it (a broken description).
  void attach(GstElement* bin);
  // After the pipeline is stopped: forgets the cached caps.
  void detach();

  const CameraConfig& config() const { return config_; }
  int index() const { return index_; }
  std::uint64_t delivered() const { return delivered_.load(std::memory_order_relaxed); }
  // Frames lost before FrameSync: pool exhausted (consumer too slow) or a buffer that could not
  // be read.
  std::uint64_t dropped() const { return dropped_.load(std::memory_order_relaxed); }
  // CLOCK_MONOTONIC when the last sample arrived from GStreamer (delivered or dropped: a camera
  // whose frames are all dropped is alive); 0 before the first one since attach().
  std::int64_t last_sample_ns() const { return last_sample_ns_.load(std::memory_order_relaxed); }

 private:
  static GstFlowReturn on_sample(GstAppSink* appsink, gpointer self);
  static void on_eos(GstAppSink* appsink, gpointer self);
  void handle(GstElement* appsink, GstSample* sample);
  bool copy_into(GstSample* sample, CameraFrame& frame);
  bool copy_yuv(const GstVideoFrame& video, CameraFrame& frame);  // raw_format cameras
  std::shared_ptr<CameraFrame> acquire();  // from the pool; nullptr (counted, warned) when empty
  void finish(std::shared_ptr<CameraFrame> frame, std::int64_t capture_ns,
              std::int64_t source_index);

  const int index_;
  const CameraConfig config_;
  const bool indexed_;
  const RealtimeOffset& offset_;
  const Deliver deliver_;
  const PixelAllocator allocate_;
  FramePool pool_;

  std::mutex mutex_;         // caps, sequence numbers and delivery order
  GstCaps* caps_ = nullptr;  // caps `info_` was parsed from (a reference is held)
  GstVideoInfo info_;
  std::uint64_t next_sequence_ = 0;  // continues across restarts

  std::atomic<std::uint64_t> delivered_{0};
  std::atomic<std::uint64_t> dropped_{0};
  std::atomic<std::int64_t> last_sample_ns_{0};
  bool warned_exhausted_ = false;   // the pool-exhausted warning, once per attach()
  bool warned_allocation_ = false;  // the allocation-failure error, once
};

}  // namespace stereod
