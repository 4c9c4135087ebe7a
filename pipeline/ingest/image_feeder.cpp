#include "ingest/image_feeder.hpp"

#include <gst/app/gstappsrc.h>
#include <spdlog/spdlog.h>

#include <cerrno>
#include <cstring>
#include <fstream>

#include "ingest/frame_pattern.hpp"

namespace stereod {

ImageFeeder::ImageFeeder(std::string rig, FrameRate fps, bool loop)
    : PacedFeeder(fps), rig_(std::move(rig)), loop_(loop) {}

ImageFeeder::~ImageFeeder() {
  stop();
}

void ImageFeeder::start(GstElement* pipeline, std::vector<Camera> cameras) {
  stop();
  for (auto& c : cameras) c.src = GST_ELEMENT(gst_object_ref(c.src));
  cameras_ = std::move(cameras);
  start_feeding(pipeline);
}

void ImageFeeder::stop() {
  stop_feeding();
  for (auto& c : cameras_) gst_object_unref(c.src);
  cameras_.clear();
}

GstBuffer* ImageFeeder::read(const Camera& camera, std::int64_t k, std::string& path,
                             std::string& why) const {
  // The pattern has exactly one integer conversion (parse_source_uri checked it).
  path = format_frame_path(camera.pattern, camera.start + k);
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) {
    why = std::strerror(errno);
    return nullptr;
  }
  const std::streamoff size = in.tellg();
  if (size <= 0) {
    why = "empty";
    return nullptr;
  }
  in.seekg(0);
  GstBuffer* buffer = gst_buffer_new_allocate(nullptr, static_cast<gsize>(size), nullptr);
  GstMapInfo map;
  if (!buffer || !gst_buffer_map(buffer, &map, GST_MAP_WRITE)) {
    if (buffer) gst_buffer_unref(buffer);
    why = "out of memory";
    return nullptr;
  }
  in.read(reinterpret_cast<char*>(map.data), size);
  const bool ok = in.gcount() == size;
  gst_buffer_unmap(buffer, &map);
  if (!ok) {
    gst_buffer_unref(buffer);
    why = "read failed";
    return nullptr;
  }
  return buffer;
}

void ImageFeeder::post_error(const Camera& camera, const std::string& message) const {
  GError* error =
      g_error_new_literal(GST_RESOURCE_ERROR, GST_RESOURCE_ERROR_NOT_FOUND, message.c_str());
  gst_element_post_message(camera.src,
                           gst_message_new_error(GST_OBJECT(camera.src), error, nullptr));
  g_error_free(error);
}

ImageFeeder::Missing ImageFeeder::read_set(std::vector<GstBuffer*>& buffers) const {
  Missing missing;
  for (std::size_t c = 0; c < cameras_.size(); ++c) {
    std::string path, why;
    buffers[c] = read(cameras_[c], next_k_, path, why);
    if (buffers[c]) continue;
    if (missing.count++ == 0) {
      missing.first = c;
      missing.path = path;
      missing.why = why;
    }
  }
  return missing;
}

void ImageFeeder::feed(const Schedule& schedule) {
  const GstClockTime interval = schedule.interval();
  const GstClockTime duration = interval;
  std::vector<GstBuffer*> buffers(cameras_.size(), nullptr);
  const auto release = [&] {
    for (auto& b : buffers) {
      if (b) gst_buffer_unref(b);
      b = nullptr;
    }
  };
  for (std::int64_t tick = 0;; ++tick) {
    const GstClockTime pts = schedule.due(tick);
    const GstClockTime now = schedule.now();
    if (now > pts + interval) {  // reading fell behind: go on from the set that is due now
      const auto caught_up = static_cast<std::int64_t>((now - schedule.t0) / interval) + 1;
      skipped_.fetch_add(static_cast<std::uint64_t>(caught_up - tick), std::memory_order_relaxed);
      next_k_ += caught_up - tick;
      tick = caught_up - 1;
      continue;
    }
    const Missing missing = read_set(buffers);
    if (missing.count == cameras_.size()) {  // the end of every camera's files
      release();
      if (next_k_ == 0) {
        post_error(cameras_[missing.first],
                   "no image " + missing.path + " (" + missing.why + "): the sequence is empty");
        return;
      }
      if (!loop_) {
        for (const auto& c : cameras_) gst_app_src_end_of_stream(GST_APP_SRC(c.src));
        return;
      }
      next_k_ = 0;
      --tick;  // the first set again, in this time slot
      continue;
    }
    if (missing.count > 0) {
      // One camera lacks this number: its partners' frames of this number cannot make a set. Its
      // time slot passes all the same (the rate stays the recording's).
      release();
      if (!wait_until(schedule, pts)) return;
      if (gaps_.fetch_add(1, std::memory_order_relaxed) % 100 == 0) {
        spdlog::warn(
            "rig '{}': camera '{}': {}: {}; frame set {} skipped for every camera (logged once "
            "per 100)",
            rig_, cameras_[missing.first].name, missing.path, missing.why, next_k_);
      }
      ++next_k_;
      continue;
    }
    if (!wait_until(schedule, pts)) {
      release();
      return;
    }
    for (std::size_t c = 0; c < cameras_.size(); ++c) {
      GST_BUFFER_PTS(buffers[c]) = pts;
      GST_BUFFER_DURATION(buffers[c]) = duration;
      GST_BUFFER_OFFSET(buffers[c]) = static_cast<guint64>(cameras_[c].start + next_k_);
      const GstFlowReturn flow = gst_app_src_push_buffer(GST_APP_SRC(cameras_[c].src), buffers[c]);
      buffers[c] = nullptr;  // the appsrc owns it now
      if (flow != GST_FLOW_OK) {
        release();
        return;  // flushing or stopped
      }
    }
    ++next_k_;
  }
}

}  // namespace stereod
