#include "camera_branch.hpp"

#include <spdlog/spdlog.h>

#include <cstring>
#include <stdexcept>

#include "gst_support.hpp"
#include "pipeline_description.hpp"

namespace stereod {
namespace {

void release_caps(GstCaps*& caps) {
  if (caps) gst_caps_unref(caps);
  caps = nullptr;
}

}  // namespace

CameraBranch::CameraBranch(int index, const CameraConfig& config, bool indexed, int pool_capacity,
                           const RealtimeOffset& offset, Deliver deliver)
    : index_(index),
      config_(config),
      indexed_(indexed),
      offset_(offset),
      deliver_(std::move(deliver)),
      pool_(pool_capacity) {
  gray_sink_.self = this;
  rgb_sink_.self = this;
  rgb_sink_.rgb = true;
}

CameraBranch::~CameraBranch() {
  detach();
}

void CameraBranch::hook(GstElement* bin, const char* name, Sink& sink) {
  GstRef<GstElement> appsink(gst_bin_get_by_name(GST_BIN(bin), name));
  if (!appsink) throw std::runtime_error(std::string("no appsink \"") + name + "\" in the branch");
  GstAppSinkCallbacks callbacks{};
  callbacks.eos = &CameraBranch::on_eos;
  callbacks.new_sample = &CameraBranch::on_sample;
  gst_app_sink_set_callbacks(GST_APP_SINK(appsink.get()), &callbacks, &sink, nullptr);
}

void CameraBranch::attach(GstElement* bin) {
  detach();
  hook(bin, kGraySinkName, gray_sink_);
  if (config_.color) hook(bin, kColorSinkName, rgb_sink_);
  last_sample_ns_.store(0, std::memory_order_relaxed);
}

void CameraBranch::detach() {
  std::lock_guard<std::mutex> lock(mutex_);
  assembling_.reset();
  has_gray_ = has_rgb_ = false;
  warned_exhausted_ = false;
  release_caps(gray_sink_.caps);
  release_caps(rgb_sink_.caps);
}

GstFlowReturn CameraBranch::on_sample(GstAppSink* appsink, gpointer data) {
  auto& sink = *static_cast<Sink*>(data);
  GstSample* sample = gst_app_sink_pull_sample(appsink);
  if (!sample) return GST_FLOW_FLUSHING;
  sink.self->handle(GST_ELEMENT(appsink), sample, sink);
  gst_sample_unref(sample);
  return GST_FLOW_OK;
}

void CameraBranch::on_eos(GstAppSink* appsink, gpointer data) {
  auto& sink = *static_cast<Sink*>(data);
  if (sink.rgb) return;  // the gray sink speaks for the camera
  GstStructure* s =
      gst_structure_new(kCameraEosMessage, "camera", G_TYPE_INT, sink.self->index_, nullptr);
  gst_element_post_message(GST_ELEMENT(appsink),
                           gst_message_new_application(GST_OBJECT(appsink), s));
}

bool CameraBranch::copy_into(GstSample* sample, Sink& sink, CameraFrame& frame) {
  GstCaps* caps = gst_sample_get_caps(sample);
  if (!caps) return false;
  if (caps != sink.caps) {  // parsed once per negotiation, not per frame
    if (!gst_video_info_from_caps(&sink.info, caps)) return false;
    release_caps(sink.caps);
    sink.caps = gst_caps_ref(caps);
  }
  GstVideoFrame video;
  if (!gst_video_frame_map(&video, &sink.info, gst_sample_get_buffer(sample), GST_MAP_READ)) {
    return false;
  }
  const int w = GST_VIDEO_FRAME_WIDTH(&video);
  const int h = GST_VIDEO_FRAME_HEIGHT(&video);
  const int stride = GST_VIDEO_FRAME_PLANE_STRIDE(&video, 0);
  const auto* src = static_cast<const std::uint8_t*>(GST_VIDEO_FRAME_PLANE_DATA(&video, 0));
  // GStreamer pads rows to 4 bytes; the frame's images are packed.
  if (sink.rgb) {
    if (frame.color.width != w || frame.color.height != h) frame.color.resize(w, h);
    for (int y = 0; y < h; ++y) std::memcpy(frame.color.row(y), src + y * stride, 3u * w);
  } else {
    frame.gray.ensure_size(w, h);
    for (int y = 0; y < h; ++y) std::memcpy(frame.gray.row(y), src + y * stride, w);
  }
  gst_video_frame_unmap(&video);
  return true;
}

void CameraBranch::handle(GstElement* appsink, GstSample* sample, Sink& sink) {
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
  if (!config_.color) {
    std::shared_ptr<CameraFrame> frame = acquire();
    if (!frame) return;
    if (!copy_into(sample, sink, *frame)) {
      dropped_.fetch_add(1, std::memory_order_relaxed);
      return;
    }
    finish(std::move(frame), capture_ns, source_index);
    return;
  }
  // Color: the two halves of a frame carry the same PTS. An older half than the frame being
  // assembled lost its partner already; a newer one means the assembled frame's partner was lost.
  if (assembling_ && assembling_pts_ != pts) {
    if (pts < assembling_pts_) {
      dropped_.fetch_add(1, std::memory_order_relaxed);
      return;
    }
    assembling_.reset();
    dropped_.fetch_add(1, std::memory_order_relaxed);
  }
  if (!assembling_) {
    assembling_ = acquire();
    if (!assembling_) return;
    assembling_pts_ = pts;
    has_gray_ = has_rgb_ = false;
  }
  if (!copy_into(sample, sink, *assembling_)) {
    assembling_.reset();
    dropped_.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  (sink.rgb ? has_rgb_ : has_gray_) = true;
  if (has_gray_ && has_rgb_) finish(std::move(assembling_), capture_ns, source_index);
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
