#include "ingest/replay_source.hpp"

#include <gst/app/gstappsink.h>
#include <gst/app/gstappsrc.h>
#include <gst/video/video.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstring>
#include <filesystem>
#include <map>
#include <mutex>
#include <set>
#include <stdexcept>

#include "ingest/frame_pattern.hpp"
#include "ingest/gst_support.hpp"
#include "ingest/pipeline_description.hpp"
#include "ingest/source_uri.hpp"
#include "ingest/synthetic_source.hpp"
#include "synthetic/synthetic_scene.hpp"

namespace stereod {
namespace {

// How long decoding one image may take before it counts as failed.
constexpr auto kDecodeTimeout = std::chrono::seconds(20);

// GStreamer's layout of a raw frame of these caps (rows padded to 4 bytes): the frames are kept
// in it, so that a buffer wrapping one is a valid buffer of the appsrc's caps.
GstVideoInfo video_info(const CameraConfig& cam) {
  GstVideoInfo info;
  gst_video_info_init(&info);
  gst_video_info_set_format(&info, cam.color ? GST_VIDEO_FORMAT_RGB : GST_VIDEO_FORMAT_GRAY8,
                            static_cast<guint>(cam.width), static_cast<guint>(cam.height));
  return info;
}

ReplayFrames::Camera empty_camera(const CameraConfig& cam) {
  ReplayFrames::Camera c;
  c.width = cam.width;
  c.height = cam.height;
  c.channels = cam.color ? 3 : 1;
  return c;
}

// Packed rows into GStreamer's layout.
std::vector<std::uint8_t> to_layout(const GstVideoInfo& info, const std::uint8_t* src,
                                    std::size_t src_stride) {
  std::vector<std::uint8_t> out(GST_VIDEO_INFO_SIZE(&info), 0);
  const auto stride = static_cast<std::size_t>(GST_VIDEO_INFO_PLANE_STRIDE(&info, 0));
  const std::size_t row =
      static_cast<std::size_t>(GST_VIDEO_INFO_WIDTH(&info)) * GST_VIDEO_INFO_COMP_PSTRIDE(&info, 0);
  for (int y = 0; y < GST_VIDEO_INFO_HEIGHT(&info); ++y) {
    std::memcpy(out.data() + stride * y, src + src_stride * y, row);
  }
  return out;
}

std::shared_ptr<ReplayFrames> render_synthetic(const RigConfig& rig, int count,
                                               const std::function<bool()>& cancelled) {
  const std::shared_ptr<SyntheticScene> scene = make_synthetic_scene(rig);
  auto out = std::make_shared<ReplayFrames>();
  std::vector<GstVideoInfo> infos;
  std::vector<SyntheticViewKind> view;
  for (std::size_t i = 0; i < rig.cameras.size(); ++i) {
    out->cameras.push_back(empty_camera(rig.cameras[i]));
    infos.push_back(video_info(rig.cameras[i]));
    view.push_back(synthetic_view_of(parse_source_uri(rig.cameras[i].uri), i));
  }
  SyntheticFrame frame;
  for (int k = 0; k < count; ++k) {
    if (cancelled()) return nullptr;
    scene->render(k, frame);
    for (std::size_t i = 0; i < rig.cameras.size(); ++i) {
      auto& cam = out->cameras[i];
      if (cam.channels == 3) {
        const RgbImage* rgbs[3] = {&frame.left, &frame.right, &frame.vertical};
        const RgbImage& rgb = *rgbs[static_cast<int>(view[i])];
        cam.frames.push_back(to_layout(infos[i], rgb.pixels.data(), 3u * rgb.width));
      } else {
        const Gray8* grays[3] = {&frame.left_gray, &frame.right_gray, &frame.vertical_gray};
        const Gray8& gray = *grays[static_cast<int>(view[i])];
        cam.frames.push_back(
            to_layout(infos[i], gray.data(), static_cast<std::size_t>(gray.width())));
      }
    }
    out->index.push_back(k);
  }
  return out;
}

// One image file, decoded and scaled and converted as the live images:// branch does it
// (pipeline_description.cpp), in GStreamer's layout.
std::vector<std::uint8_t> decode_image(const CameraConfig& cam, const std::string& path) {
  const std::string ext = std::filesystem::path(path).extension().string();
  const bool png = ext == ".png" || ext == ".PNG";
  const std::string caps = std::string("video/x-raw,format=") + (cam.color ? "RGB" : "GRAY8") +
                           ",width=" + std::to_string(cam.width) +
                           ",height=" + std::to_string(cam.height);
  const std::string description =
      "filesrc location=" + quote_gst_value(path) + (png ? " ! pngdec" : " ! jpegdec") +
      " ! videoscale ! videoconvert ! " + caps + " ! appsink name=out sync=false max-buffers=1";
  const auto fail = [&](const std::string& why) {
    return std::runtime_error("camera '" + cam.name + "': " + path + ": " + why);
  };
  GError* error = nullptr;
  GstElement* raw = gst_parse_launch(description.c_str(), &error);
  if (error) {
    const std::string why = error->message;
    g_error_free(error);
    if (raw) gst_object_unref(raw);
    throw fail("cannot build the decoder: " + why);
  }
  GstRef<GstElement> pipeline(raw);
  GstRef<GstElement> sink(gst_bin_get_by_name(GST_BIN(pipeline.get()), "out"));
  gst_element_set_state(pipeline.get(), GST_STATE_PLAYING);
  GstSample* sample = gst_app_sink_try_pull_sample(
      GST_APP_SINK(sink.get()),
      static_cast<GstClockTime>(std::chrono::nanoseconds(kDecodeTimeout).count()));
  std::string why = "no frame came out of the decoder";
  if (!sample) {
    GstRef<GstBus> bus(gst_element_get_bus(pipeline.get()));
    GstMessageRef m(gst_bus_pop_filtered(bus.get(), GST_MESSAGE_ERROR));
    if (m) why = describe_message(m.get());
  }
  std::vector<std::uint8_t> out;
  if (sample) {
    GstVideoInfo info;
    GstVideoFrame video;
    if (gst_video_info_from_caps(&info, gst_sample_get_caps(sample)) &&
        gst_video_frame_map(&video, &info, gst_sample_get_buffer(sample), GST_MAP_READ)) {
      const GstVideoInfo want = video_info(cam);
      out = to_layout(want, static_cast<const std::uint8_t*>(GST_VIDEO_FRAME_PLANE_DATA(&video, 0)),
                      static_cast<std::size_t>(GST_VIDEO_FRAME_PLANE_STRIDE(&video, 0)));
      gst_video_frame_unmap(&video);
    } else {
      why = "the decoded frame could not be read";
    }
    gst_sample_unref(sample);
  }
  gst_element_set_state(pipeline.get(), GST_STATE_NULL);
  if (out.empty()) throw fail(why);
  return out;
}

// Numbers start .. start + count - 1 of every camera's pattern; a number some camera lacks is
// skipped for all (as the live images:// path does), one that no camera has ends the sequence.
std::shared_ptr<ReplayFrames> decode_images(const RigConfig& rig, int count,
                                            const std::function<bool()>& cancelled) {
  auto out = std::make_shared<ReplayFrames>();
  std::vector<SourceUri> uris;
  for (const auto& cam : rig.cameras) {
    out->cameras.push_back(empty_camera(cam));
    uris.push_back(parse_source_uri(cam.uri));
  }
  std::uint64_t gaps = 0;
  std::string first_gap;
  for (int k = 0; k < count; ++k) {
    if (cancelled()) return nullptr;
    std::vector<std::string> paths;
    std::size_t missing = 0;
    std::string missing_path;
    for (const auto& uri : uris) {
      paths.push_back(format_frame_path(uri.location, uri.option_int("start", 0) + k));
      std::error_code ec;
      if (!std::filesystem::is_regular_file(paths.back(), ec) && missing++ == 0) {
        missing_path = paths.back();
      }
    }
    if (missing == uris.size()) {
      if (k == 0) {
        throw std::runtime_error("camera '" + rig.cameras[0].name + "': no image " + missing_path +
                                 ": the sequence is empty");
      }
      break;  // the end of the recording
    }
    if (missing > 0) {
      if (gaps++ == 0) first_gap = missing_path;
      continue;
    }
    for (std::size_t i = 0; i < uris.size(); ++i) {
      out->cameras[i].frames.push_back(decode_image(rig.cameras[i], paths[i]));
    }
    out->index.push_back(uris[0].option_int("start", 0) + k);
  }
  if (out->index.empty()) {
    throw std::runtime_error("rig '" + rig.name + "': no number has a file for every camera (" +
                             first_gap + " is missing)");
  }
  if (gaps > 0) {
    spdlog::warn("rig '{}': {} image number{} skipped for every camera (the first: {} is missing)",
                 rig.name, gaps, gaps == 1 ? "" : "s", first_gap);
  }
  return out;
}

// What a rig's replayed frames depend on: their sources, sizes, formats and count.
std::string replay_key(const RigConfig& rig) {
  std::string key;
  for (std::size_t i = 0; i < rig.cameras.size(); ++i) {
    const auto& cam = rig.cameras[i];
    const SourceUri uri = parse_source_uri(cam.uri);
    key += std::string(scheme_name(uri.scheme)) + "|" + uri.location + "|";
    for (const auto& [k, v] : uri.options) key += k + "=" + v + "&";
    if (uri.scheme == SourceScheme::kSynthetic) {
      static const char* const kViews[3] = {"|left", "|right", "|vertical"};
      key += kViews[static_cast<int>(synthetic_view_of(uri, i))];
      key += "|" + std::to_string(static_cast<int>(std::lround(cam.fps.hz())));
    }
    key += "|" + std::to_string(cam.width) + "x" + std::to_string(cam.height) +
           (cam.color ? "|rgb\n" : "|gray\n");
  }
  return key;
}

// Frames already made (while anyone holds them) and frames being made.
std::mutex registry_mutex;
std::condition_variable registry_changed;
std::map<std::string, std::weak_ptr<const ReplayFrames>> made;
std::set<std::string> making;

}  // namespace

std::size_t ReplayFrames::bytes() const {
  std::size_t n = 0;
  for (const auto& c : cameras) {
    for (const auto& f : c.frames) n += f.size();
  }
  return n;
}

std::shared_ptr<const ReplayFrames> load_replay(const RigConfig& rig,
                                                const std::function<bool()>& cancelled) {
  const int count = replay_count(rig);
  if (count <= 0) throw std::logic_error("rig '" + rig.name + "' does not replay");
  const std::string key = replay_key(rig);
  std::unique_lock<std::mutex> lock(registry_mutex);
  for (;;) {
    if (auto frames = made[key].lock()) return frames;
    if (!making.count(key)) break;
    // Another rig makes the same frames: wait for it (or take over when it gives up).
    registry_changed.wait_for(lock, std::chrono::milliseconds(50));
    if (cancelled()) return nullptr;
  }
  making.insert(key);
  lock.unlock();
  std::shared_ptr<ReplayFrames> frames;
  try {
    const bool synthetic = parse_source_uri(rig.cameras[0].uri).scheme == SourceScheme::kSynthetic;
    const auto t0 = std::chrono::steady_clock::now();
    frames =
        synthetic ? render_synthetic(rig, count, cancelled) : decode_images(rig, count, cancelled);
    if (frames) {
      spdlog::info("rig '{}': {} frames {} for replay in {:.1f} s ({:.0f} MiB)", rig.name,
                   frames->index.size(), synthetic ? "rendered" : "decoded",
                   std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(),
                   static_cast<double>(frames->bytes()) / (1 << 20));
    }
  } catch (...) {
    lock.lock();
    making.erase(key);
    registry_changed.notify_all();
    throw;
  }
  lock.lock();
  making.erase(key);
  for (auto it = made.begin(); it != made.end();) {
    it = it->second.expired() ? made.erase(it) : std::next(it);
  }
  if (frames) made[key] = frames;
  registry_changed.notify_all();
  return frames;
}

ReplayFeeder::ReplayFeeder(FrameRate fps, bool loop) : PacedFeeder(fps), loop_(loop) {}

ReplayFeeder::~ReplayFeeder() {
  stop();
}

void ReplayFeeder::start(GstElement* pipeline, std::shared_ptr<const ReplayFrames> frames,
                         std::vector<GstElement*> sources) {
  stop();
  frames_ = std::move(frames);
  for (GstElement* s : sources) sources_.push_back(GST_ELEMENT(gst_object_ref(s)));
  start_feeding(pipeline);
}

void ReplayFeeder::stop() {
  stop_feeding();
  for (GstElement* s : sources_) gst_object_unref(s);
  sources_.clear();
}

void ReplayFeeder::feed(const Schedule& schedule) {
  const GstClockTime interval = schedule.interval();
  const std::uint64_t count = frames_->index.size();
  for (std::int64_t tick = 0;; ++tick) {
    const GstClockTime pts = schedule.due(tick);
    const GstClockTime now = schedule.now();
    if (now > pts + interval) {  // the thread was held up: go on from the frame that is due now
      const auto caught_up = static_cast<std::int64_t>((now - schedule.t0) / interval) + 1;
      skipped_.fetch_add(static_cast<std::uint64_t>(caught_up - tick), std::memory_order_relaxed);
      next_ += static_cast<std::uint64_t>(caught_up - tick);
      tick = caught_up - 1;
      continue;
    }
    if (!loop_ && next_ >= count) {
      for (GstElement* s : sources_) gst_app_src_end_of_stream(GST_APP_SRC(s));
      return;
    }
    if (!wait_until(schedule, pts)) return;
    const std::size_t k = static_cast<std::size_t>(next_ % count);
    for (std::size_t c = 0; c < sources_.size(); ++c) {
      // The frame itself, lent read-only: the frames outlive the pipeline (the rig holds them).
      const std::vector<std::uint8_t>& f = frames_->cameras[c].frames[k];
      GstBuffer* buffer =
          gst_buffer_new_wrapped_full(GST_MEMORY_FLAG_READONLY, const_cast<std::uint8_t*>(f.data()),
                                      f.size(), 0, f.size(), nullptr, nullptr);
      GST_BUFFER_PTS(buffer) = pts;
      GST_BUFFER_DURATION(buffer) = interval;
      GST_BUFFER_OFFSET(buffer) = static_cast<guint64>(frames_->index[k]);
      GST_BUFFER_OFFSET_END(buffer) = static_cast<guint64>(frames_->index[k]) + 1;
      if (gst_app_src_push_buffer(GST_APP_SRC(sources_[c]), buffer) != GST_FLOW_OK) return;
    }
    pushed_.fetch_add(1, std::memory_order_relaxed);
    ++next_;
  }
}

}  // namespace stereod
