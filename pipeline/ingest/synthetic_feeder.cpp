#include "ingest/synthetic_feeder.hpp"

#include <gst/app/gstappsrc.h>
#include <gst/video/video.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <cstring>
#include <stdexcept>

#include "ingest/gst_support.hpp"

namespace stereod {
namespace {

// A pool of buffers the size of one frame of the appsrc's caps, whose layout goes to `info`.
GstBufferPool* make_pool(GstElement* src, GstVideoInfo& info) {
  GstCaps* caps = nullptr;
  g_object_get(src, "caps", &caps, nullptr);
  const bool ok = caps && gst_video_info_from_caps(&info, caps);
  GstBufferPool* pool = ok ? gst_buffer_pool_new() : nullptr;
  if (pool) {
    GstStructure* config = gst_buffer_pool_get_config(pool);
    gst_buffer_pool_config_set_params(config, caps, static_cast<guint>(info.size), 2, 6);
    if (!gst_buffer_pool_set_config(pool, config) || !gst_buffer_pool_set_active(pool, TRUE)) {
      gst_object_unref(pool);
      pool = nullptr;
    }
  }
  if (caps) gst_caps_unref(caps);
  if (!pool) throw std::runtime_error("synthetic source: cannot make a buffer pool");
  return pool;
}

}  // namespace

SyntheticFeeder::SyntheticFeeder(std::shared_ptr<const SyntheticScene> scene, FrameRate fps)
    : PacedFeeder(fps), scene_(std::move(scene)) {}

SyntheticFeeder::~SyntheticFeeder() {
  stop();
}

void SyntheticFeeder::start(GstElement* pipeline, std::vector<Output> outputs) {
  stop();
  for (const auto& o : outputs) {
    Sink s;
    s.src = GST_ELEMENT(gst_object_ref(o.src));
    s.rgb = o.rgb;
    s.view = o.view;
    try {
      s.pool = make_pool(o.src, s.info);
    } catch (...) {
      gst_object_unref(s.src);
      release_sinks();
      throw;
    }
    sinks_.push_back(s);
  }
  start_feeding(pipeline);
}

void SyntheticFeeder::stop() {
  stop_feeding();
  release_sinks();
}

void SyntheticFeeder::release_sinks() {
  for (auto& s : sinks_) {
    gst_buffer_pool_set_active(s.pool, FALSE);
    gst_object_unref(s.pool);
    gst_object_unref(s.src);
  }
  sinks_.clear();
}

void SyntheticFeeder::feed(const Schedule& schedule) {
  const int first = next_index_;
  const GstClockTime interval = schedule.interval();
  for (int index = next_index_;;) {
    scene_->render(index, frame_);
    const GstClockTime pts = schedule.due(index - first);
    const GstClockTime now = schedule.now();
    if (now > pts + interval) {
      // Rendering fell behind: go on from the frame that is due now.
      const int caught_up = first + static_cast<int>((now - schedule.t0) / interval) + 1;
      skipped_.fetch_add(static_cast<std::uint64_t>(caught_up - index), std::memory_order_relaxed);
      index = caught_up;
      next_index_ = index;
      continue;
    }
    if (!wait_until(schedule, pts)) return;
    for (const auto& s : sinks_) {
      if (!push(s, frame_, pts, index)) return;
    }
    next_index_ = ++index;
  }
}

bool SyntheticFeeder::push(const Sink& sink, const SyntheticFrame& frame, GstClockTime pts,
                           int index) {
  GstBuffer* buffer = nullptr;
  GstBufferPoolAcquireParams params{};
  params.flags = GST_BUFFER_POOL_ACQUIRE_FLAG_DONTWAIT;
  if (gst_buffer_pool_acquire_buffer(sink.pool, &buffer, &params) != GST_FLOW_OK) {
    skipped_.fetch_add(1, std::memory_order_relaxed);  // every buffer still downstream
    return true;
  }
  GstVideoFrame video;
  if (!gst_video_frame_map(&video, &sink.info, buffer, GST_MAP_WRITE)) {
    gst_buffer_unref(buffer);
    return true;
  }
  const int stride = GST_VIDEO_FRAME_PLANE_STRIDE(&video, 0);
  auto* dst = static_cast<std::uint8_t*>(GST_VIDEO_FRAME_PLANE_DATA(&video, 0));
  const int w = frame.left_gray.width(), h = frame.left_gray.height();
  for (int y = 0; y < h; ++y) {
    if (sink.rgb) {
      const RgbImage* rgb[3] = {&frame.left, &frame.right, &frame.vertical};
      std::memcpy(dst + y * stride, rgb[sink.view]->row(y), 3u * static_cast<unsigned>(w));
    } else {
      const Gray8* gray[3] = {&frame.left_gray, &frame.right_gray, &frame.vertical_gray};
      std::memcpy(dst + y * stride, gray[sink.view]->row(y), static_cast<unsigned>(w));
    }
  }
  gst_video_frame_unmap(&video);
  GST_BUFFER_PTS(buffer) = pts;
  GST_BUFFER_DURATION(buffer) = gst_util_uint64_scale(GST_SECOND, static_cast<guint64>(fps_.den),
                                                      static_cast<guint64>(fps_.num));
  GST_BUFFER_OFFSET(buffer) = static_cast<guint64>(index);  // the scene's frame index
  GST_BUFFER_OFFSET_END(buffer) = static_cast<guint64>(index) + 1;
  const GstFlowReturn flow = gst_app_src_push_buffer(GST_APP_SRC(sink.src), buffer);
  if (flow != GST_FLOW_OK && flow != GST_FLOW_FLUSHING) {
    spdlog::debug("synthetic source: push returned {}", gst_flow_get_name(flow));
  }
  return flow == GST_FLOW_OK;
}

}  // namespace stereod
