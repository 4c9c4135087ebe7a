#include "ingest/camera_branch.hpp"

#include <spdlog/spdlog.h>

#include <cstring>
#include <stdexcept>

#include "ingest/gst_support.hpp"
#include "ingest/pipeline_description.hpp"

namespace stereod {
namespace {

void release_caps(GstCaps*& caps) {
  if (caps) gst_caps_unref(caps);
  caps = nullptr;
}

}  // namespace

CameraBranch::CameraBranch(int index, const CameraConfig& config, bool indexed, int pool_capacity,
                           const RealtimeOffset& offset, Deliver deliver, PixelAllocator allocate)
    : index_(index),
      config_(config),
      indexed_(indexed),
      offset_(offset),
      deliver_(std::move(deliver)),
      allocate_(std::move(allocate)),
      pool_(pool_capacity) {
  gst_video_info_init(&info_);
}

CameraBranch::~CameraBranch() {
  detach();
}

void CameraBranch::attach(GstElement* bin) {
  detach();
  const char* name = config_.color ? kColorSinkName : kGraySinkName;
  GstRef<GstElement> appsink(gst_bin_get_by_name(GST_BIN(bin), name));
  if (!appsink) throw std::runtime_error(std::string("no appsink \"") + name + "\" in the branch");
  GstAppSinkCallbacks callbacks{};
  callbacks.eos = &CameraBranch::on_eos;
  callbacks.new_sample = &CameraBranch::on_sample;
  gst_app_sink_set_callbacks(GST_APP_SINK(appsink.get()), &callbacks, this, nullptr);
  last_sample_ns_.store(0, std::memory_order_relaxed);
}

void CameraBranch::detach() {
  std::lock_guard<std::mutex> lock(mutex_);
  warned_exhausted_ = false;
  release_caps(caps_);
}

GstFlowReturn CameraBranch::on_sample(GstAppSink* appsink, gpointer data) {
  auto* self = static_cast<CameraBranch*>(data);
  GstSample* sample = gst_app_sink_pull_sample(appsink);
  if (!sample) return GST_FLOW_FLUSHING;
  self->handle(GST_ELEMENT(appsink), sample);
  gst_sample_unref(sample);
  return GST_FLOW_OK;
}

void CameraBranch::on_eos(GstAppSink* appsink, gpointer data) {
  auto* self = static_cast<CameraBranch*>(data);
  GstStructure* s =
      gst_structure_new(kCameraEosMessage, "camera", G_TYPE_INT, self->index_, nullptr);
  gst_element_post_message(GST_ELEMENT(appsink),
                           gst_message_new_application(GST_OBJECT(appsink), s));
}

bool CameraBranch::copy_into(GstSample* sample, CameraFrame& frame) {
  GstCaps* caps = gst_sample_get_caps(sample);
  if (!caps) return false;
  if (caps != caps_) {  // parsed once per negotiation, not per frame
    if (!gst_video_info_from_caps(&info_, caps)) return false;
    release_caps(caps_);
    caps_ = gst_caps_ref(caps);
  }
  GstVideoFrame video;
  if (!gst_video_frame_map(&video, &info_, gst_sample_get_buffer(sample), GST_MAP_READ)) {
    return false;
  }
  const int w = GST_VIDEO_FRAME_WIDTH(&video);
  const int h = GST_VIDEO_FRAME_HEIGHT(&video);
  const int stride = GST_VIDEO_FRAME_PLANE_STRIDE(&video, 0);
  const auto* src = static_cast<const std::uint8_t*>(GST_VIDEO_FRAME_PLANE_DATA(&video, 0));
  if (!config_.raw_format.empty()) {
    const bool copied = copy_yuv(video, frame);
    gst_video_frame_unmap(&video);
    return copied;
  }
  // The one copy of the frame path: from GStreamer's buffer into the frame's (pooled, possibly
  // page-locked) memory, rows packed (GStreamer pads rows to 4 bytes).
  const std::size_t row = static_cast<std::size_t>(w) * (config_.color ? 3 : 1);
  std::uint8_t* dst = frame.reserve(row * static_cast<std::size_t>(h), allocate_);
  if (static_cast<std::size_t>(stride) == row) {
    std::memcpy(dst, src, row * static_cast<std::size_t>(h));
  } else {
    for (int y = 0; y < h; ++y) std::memcpy(dst + row * y, src + stride * y, row);
  }
  gst_video_frame_unmap(&video);
  frame.yuv = {};
  if (config_.color) {
    frame.color = {dst, w, h, static_cast<std::ptrdiff_t>(row)};
    frame.gray = {};
  } else {
    frame.gray = {dst, w, h, w};
    frame.color = {};
  }
  return true;
}

bool CameraBranch::copy_yuv(const GstVideoFrame& video, CameraFrame& frame) {
  YuvView from;
  switch (GST_VIDEO_FRAME_FORMAT(&video)) {
    case GST_VIDEO_FORMAT_UYVY:
      from.format = YuvFormat::kUyvy;
      break;
    case GST_VIDEO_FORMAT_NV12:
      from.format = YuvFormat::kNv12;
      from.chroma = static_cast<const std::uint8_t*>(GST_VIDEO_FRAME_PLANE_DATA(&video, 1));
      from.chroma_stride = GST_VIDEO_FRAME_PLANE_STRIDE(&video, 1);
      break;
    default:  // the caps ask for raw_format: not expected
      return false;
  }
  from.data = static_cast<const std::uint8_t*>(GST_VIDEO_FRAME_PLANE_DATA(&video, 0));
  from.stride = GST_VIDEO_FRAME_PLANE_STRIDE(&video, 0);
  from.width = GST_VIDEO_FRAME_WIDTH(&video);
  from.height = GST_VIDEO_FRAME_HEIGHT(&video);
  // The same one copy as for RGB, of 2 (UYVY) or 1.5 (NV12) bytes a pixel instead of 3.
  std::uint8_t* dst =
      frame.reserve(yuv_packed_bytes(from.format, from.width, from.height), allocate_);
  copy_packed(from, dst);
  frame.yuv = packed_yuv(from.format, dst, from.width, from.height);
  frame.color = {};
  frame.gray = {};
  return true;
}

void CameraBranch::handle(GstElement* appsink, GstSample* sample) {
  GstBuffer* buffer = gst_sample_get_buffer(sample);
  if (!buffer) return;
  const GstClockTime pts = GST_BUFFER_PTS(buffer);

  // Capture time (realtime_clock.hpp): running time of the PTS plus base time is pipeline clock
  // time, which is CLOCK_MONOTONIC; a buffer without a timestamp gets its arrival time.
  std::int64_t monotonic_ns = monotonic_now_ns();
  const GstSegment* segment = gst_sample_get_segment(sample);
  if (GST_CLOCK_TIME_IS_VALID(pts) && segment && segment->format == GST_FORMAT_TIME) {
    const GstClockTime running = gst_segment_to_running_time(segment, GST_FORMAT_TIME, pts);
    if (GST_CLOCK_TIME_IS_VALID(running)) {
      monotonic_ns = static_cast<std::int64_t>(running + gst_element_get_base_time(appsink));
    }
  }
  const std::int64_t capture_ns = offset_.to_realtime(monotonic_ns);
  const std::int64_t source_index = indexed_ && GST_BUFFER_OFFSET_IS_VALID(buffer)
                                        ? static_cast<std::int64_t>(GST_BUFFER_OFFSET(buffer))
                                        : -1;
  last_sample_ns_.store(monotonic_now_ns(), std::memory_order_relaxed);

  std::lock_guard<std::mutex> lock(mutex_);
  std::shared_ptr<CameraFrame> frame = acquire();
  if (!frame) return;
  bool copied = false;
  try {
    copied = copy_into(sample, *frame);
  } catch (const std::exception& e) {  // the allocator failed: nothing may unwind into GStreamer
    if (!warned_allocation_) {
      warned_allocation_ = true;
      spdlog::error("camera '{}': no memory for a frame ({}); dropping frames", config_.name,
                    e.what());
    }
  }
  if (!copied) {
    dropped_.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  finish(std::move(frame), capture_ns, source_index);
}

std::shared_ptr<CameraFrame> CameraBranch::acquire() {
  std::shared_ptr<CameraFrame> frame = pool_.acquire();
  if (frame) return frame;
  dropped_.fetch_add(1, std::memory_order_relaxed);
  if (!warned_exhausted_) {
    warned_exhausted_ = true;
    spdlog::warn("camera '{}': all {} frame buffers are held by consumers; dropping frames",
                 config_.name, pool_.capacity());
  }
  return nullptr;
}

void CameraBranch::finish(std::shared_ptr<CameraFrame> frame, std::int64_t capture_ns,
                          std::int64_t source_index) {
  frame->camera = config_.name;
  frame->sequence = next_sequence_++;
  frame->capture_time_ns = capture_ns;
  frame->source_index = source_index;
  frame->status = FrameStatus::kOk;
  frame->error.clear();
  delivered_.fetch_add(1, std::memory_order_relaxed);
  deliver_(index_, std::move(frame));
}

}  // namespace stereod
