#include "ingest/rig_source.hpp"

#include <gst/base/gstbasesrc.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstdio>
#include <stdexcept>

#include "ingest/backoff.hpp"
#include "ingest/camera_branch.hpp"
#include "ingest/gst_support.hpp"
#include "ingest/image_feeder.hpp"
#include "ingest/pipeline_description.hpp"
#include "ingest/replay_source.hpp"
#include "ingest/source_uri.hpp"
#include "ingest/synthetic_feeder.hpp"
#include "ingest/synthetic_source.hpp"

namespace stereod {
namespace {

constexpr auto kBusPoll = std::chrono::milliseconds(100);
constexpr auto kOffsetRefresh = std::chrono::seconds(1);

std::int64_t ms_to_ns(std::chrono::milliseconds ms) {
  return static_cast<std::int64_t>(ms.count()) * 1000000;
}

std::string seconds_text(std::chrono::milliseconds ms) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f s", static_cast<double>(ms.count()) / 1000.0);
  return text;
}

bool any_recording(const RigConfig& rig) {
  for (const auto& cam : rig.cameras) {
    try {
      if (parse_source_uri(cam.uri).is_file()) return true;
    } catch (const SourceUriError&) {
    }
  }
  return false;
}

const RigConfig& validated(const RigConfig& rig) {
  const auto issues = validate_rig(rig);
  if (!issues.empty()) {
    throw std::invalid_argument("rig '" + rig.name + "':\n" + to_string(issues));
  }
  return rig;
}

FrameSyncOptions sync_options(const RigConfig& rig) {
  FrameSyncOptions o;
  o.cameras = static_cast<int>(rig.cameras.size());
  o.tolerance_ns = rig.effective_sync_tolerance_ns();
  o.max_pending = rig.sync_max_pending;
  return o;
}

// True when every source element of a gst:// description is a live GstBaseSrc (v4l2src,
// videotestsrc is-live=true, ...). Sources that are bins (rtspsrc, uridecodebin) cannot be asked
// and count as not live.
bool all_sources_live(GstElement* bin) {
  bool all_live = true;
  bool any = false;
  GstIterator* it = gst_bin_iterate_sources(GST_BIN(bin));
  GValue item = G_VALUE_INIT;
  while (gst_iterator_next(it, &item) == GST_ITERATOR_OK) {
    auto* element = GST_ELEMENT(g_value_get_object(&item));
    any = true;
    all_live = all_live && GST_IS_BASE_SRC(element) && gst_base_src_is_live(GST_BASE_SRC(element));
    g_value_reset(&item);
  }
  g_value_unset(&item);
  gst_iterator_free(it);
  return any && all_live;
}

// An empty pipeline whose clock time is CLOCK_MONOTONIC, whatever the process's default clock is
// (realtime_clock.hpp).
GstRef<GstElement> make_pipeline(const std::string& name) {
  GstRef<GstElement> pipeline(gst_pipeline_new(name.c_str()));
  gst_object_ref_sink(pipeline.get());  // own it outright (it was floating)
  GstRef<GstClock> clock(GST_CLOCK(
      g_object_new(GST_TYPE_SYSTEM_CLOCK, "clock-type", GST_CLOCK_TYPE_MONOTONIC, nullptr)));
  gst_object_ref_sink(clock.get());
  gst_pipeline_use_clock(GST_PIPELINE(pipeline.get()), clock.get());
  return pipeline;
}

}  // namespace

const char* to_string(RigState state) {
  switch (state) {
    case RigState::kStopped:
      return "stopped";
    case RigState::kStarting:
      return "starting";
    case RigState::kRunning:
      return "running";
    case RigState::kRestarting:
      return "restarting";
    case RigState::kEnded:
      return "ended";
  }
  return "?";
}

RigSource::RigSource(RigConfig config, FrameSetCallback on_set, EventCallback on_event,
                     RigSourceOptions options)
    : config_(validated(config)),
      recordings_(any_recording(config_)),
      on_set_(std::move(on_set)),
      on_event_(std::move(on_event)),
      // A replaying rig renders its frames once (replay_source.cpp) and keeps no scene.
      scene_(replay_count(config_) > 0 ? nullptr : make_synthetic_scene(config_)),
      sync_(sync_options(config_)) {
  ensure_gstreamer();
  const bool images = parse_source_uri(config_.cameras[0].uri).scheme == SourceScheme::kImages;
  const FrameRate fps = config_.cameras[0].fps;
  if (replay_count(config_) > 0) {
    // The scene loops by nature; images end or loop as the camera says.
    replay_feeder_ = std::make_unique<ReplayFeeder>(fps, !images || config_.cameras[0].loop);
  } else if (scene_) {
    feeder_ = std::make_unique<SyntheticFeeder>(scene_, fps);
  } else if (images) {
    image_feeder_ = std::make_unique<ImageFeeder>(config_.name, fps, config_.cameras[0].loop);
  }
  // Frames in FrameSync, those the consumer holds, one being filled and a few in hand-over.
  const int pool = config_.sync_max_pending + std::max(options.frames_held, 0) + 4;
  const bool indexed = scene_ != nullptr || replay_feeder_ != nullptr;
  for (std::size_t i = 0; i < config_.cameras.size(); ++i) {
    branches_.push_back(std::make_unique<CameraBranch>(
        static_cast<int>(i), config_.cameras[i], indexed, pool, offset_,
        [this](int camera, std::shared_ptr<CameraFrame> frame) {
          deliver(camera, std::move(frame));
        },
        options.allocate));
  }
}

RigSource::~RigSource() {
  stop();
}

void RigSource::start() {
  if (supervisor_.joinable()) return;
  stop_requested_ = false;
  supervisor_ = std::thread([this] { supervise(); });
}

void RigSource::stop() {
  {
    std::lock_guard<std::mutex> lock(stop_mutex_);
    stop_requested_ = true;
  }
  stop_cv_.notify_all();
  if (supervisor_.joinable()) supervisor_.join();
  set_state(RigState::kStopped);
}

std::shared_ptr<const SyntheticScene> RigSource::synthetic_scene() const {
  return scene_;
}

RigStats RigSource::stats() const {
  RigStats s;
  {
    std::lock_guard<std::mutex> lock(state_mutex_);
    s.state = state_;
    s.failures = failures_;
    s.last_error = last_error_;
    s.last_error_time_ns = last_error_time_ns_;
  }
  for (const auto& b : branches_) {
    s.cameras.push_back({b->config().name, b->delivered(), b->dropped()});
  }
  std::lock_guard<std::mutex> lock(sync_mutex_);
  s.sync = sync_.stats();
  if (feeder_) s.synthetic_skipped = feeder_->skipped();
  if (replay_feeder_) s.synthetic_skipped = replay_feeder_->skipped();
  if (image_feeder_) s.image_gaps = image_feeder_->gaps();
  return s;
}

std::string RigSource::label(int camera) const {
  if (camera < 0) return "rig '" + config_.name + "'";
  const auto& cam = config_.cameras[static_cast<std::size_t>(camera)];
  return "camera '" + cam.name + "' (" + redact_uri(cam.uri) + ")";
}

void RigSource::set_state(RigState state) {
  std::lock_guard<std::mutex> lock(state_mutex_);
  state_ = state;
}

void RigSource::emit(const RigEvent& event) {
  if (!on_event_) return;
  try {
    on_event_(event);
  } catch (const std::exception& e) {
    spdlog::error("rig '{}': the event callback threw: {}", config_.name, e.what());
  }
}

bool RigSource::wait_for_stop(std::chrono::milliseconds delay) {
  std::unique_lock<std::mutex> lock(stop_mutex_);
  return stop_cv_.wait_for(lock, delay, [this] { return stop_requested_.load(); });
}

void RigSource::deliver(int camera, std::shared_ptr<CameraFrame> frame) {
  std::optional<FrameSet> set;
  {
    std::lock_guard<std::mutex> lock(sync_mutex_);
    set = sync_.push(camera, std::move(frame), realtime_now_ns());
  }
  if (!set || !on_set_) return;
  // Two streaming threads can complete sets back to back: each waits for its turn (sets are
  // numbered consecutively), holding no other lock, so the callback may call stats().
  std::unique_lock<std::mutex> order(deliver_mutex_);
  deliver_turn_.wait(order, [&] { return next_delivery_ == set->sequence; });
  const std::uint64_t sequence = set->sequence;
  try {
    on_set_(std::move(*set));
  } catch (const std::exception& e) {
    // Nothing may unwind into GStreamer's C code.
    spdlog::error("rig '{}': the frame set callback threw: {}", config_.name, e.what());
  }
  next_delivery_ = sequence + 1;
  deliver_turn_.notify_all();
}

void RigSource::supervise() {
  Backoff backoff(config_.restart);
  while (!stop_requested_) {
    Fault fault;
    const Outcome outcome = run_pipeline(backoff, fault);
    if (outcome == Outcome::kStopped) break;
    if (outcome == Outcome::kRestartNow) continue;
    if (outcome == Outcome::kEnded) {
      set_state(RigState::kEnded);
      spdlog::info("rig '{}': the recordings ended", config_.name);
      emit({RigEvent::Kind::kEnded, config_.name, "", "the recordings ended", {}});
      while (!wait_for_stop(std::chrono::hours(1))) {
      }
      break;
    }
    const std::chrono::milliseconds delay = backoff.next();
    const std::string message = label(fault.camera) + ": " + fault.reason;
    {
      std::lock_guard<std::mutex> lock(state_mutex_);
      state_ = RigState::kRestarting;
      ++failures_;
      last_error_ = message;
      last_error_time_ns_ = realtime_now_ns();
    }
    spdlog::error("rig '{}': {}; restarting in {}", config_.name, message, seconds_text(delay));
    const std::string camera =
        fault.camera >= 0 ? config_.cameras[static_cast<std::size_t>(fault.camera)].name : "";
    emit({RigEvent::Kind::kFailed, config_.name, camera, message, delay});
    if (wait_for_stop(delay)) break;
  }
}

// One build of the rig's pipeline, from start to teardown: what the steps of run_pipeline share.
struct RigSource::Run {
  GstRef<GstElement> pipeline;
  std::vector<GstElement*> bins;  // each camera's, owned by the pipeline
  GstRef<GstBus> bus;
  std::int64_t started = 0;       // monotonic ns, when the pipeline began to play
  std::int64_t now = 0;           // monotonic ns, taken as the last bus poll returned
  std::int64_t last_refresh = 0;  // when offset_ was last refreshed
  std::int64_t running_since = 0;
  bool healthy = false;
  std::vector<bool> ended;  // per camera: its recording reached its end

  // The camera whose bin posted `m`, or -1 for the pipeline itself.
  int camera_of(GstMessage* m) const {
    for (std::size_t i = 0; i < bins.size(); ++i) {
      if (gst_object_has_as_ancestor(GST_MESSAGE_SRC(m), GST_OBJECT(bins[i]))) {
        return static_cast<int>(i);
      }
    }
    return -1;
  }
};

RigSource::Outcome RigSource::run_pipeline(Backoff& backoff, Fault& fault) {
  set_state(RigState::kStarting);
  if (replay_feeder_ && !replay_) {
    // Made once (rendered or decoded), before the first start; kept across restarts.
    try {
      replay_ = load_replay(config_, [this] { return stop_requested_.load(); });
    } catch (const std::exception& e) {
      fault = {-1, std::string("cannot load the frames to replay: ") + e.what()};
      return Outcome::kFault;
    }
    if (!replay_) return Outcome::kStopped;
  }
  Run run;
  run.pipeline = make_pipeline("stereod-" + config_.name);
  if (!add_camera_bins(run, fault)) return Outcome::kFault;
  {
    std::lock_guard<std::mutex> lock(sync_mutex_);
    sync_.reset();  // the new pipeline's times start afresh
  }
  offset_.refresh();

  run.bus.reset(gst_element_get_bus(run.pipeline.get()));
  if (gst_element_set_state(run.pipeline.get(), GST_STATE_PLAYING) == GST_STATE_CHANGE_FAILURE) {
    GstMessageRef error(gst_bus_pop_filtered(run.bus.get(), GST_MESSAGE_ERROR));
    fault = {error ? run.camera_of(error.get()) : -1,
             error ? describe_message(error.get()) : "the pipeline would not start"};
    teardown(run);
    return Outcome::kFault;
  }
  if (!start_feeders(run, fault)) {
    teardown(run);
    return Outcome::kFault;
  }
  const Outcome outcome = watch(run, backoff, fault);
  teardown(run);
  return outcome;
}

bool RigSource::add_camera_bins(Run& run, Fault& fault) {
  for (std::size_t i = 0; i < branches_.size(); ++i) {
    const auto& cam = config_.cameras[i];
    const SourceUri uri = parse_source_uri(cam.uri);
    const std::string description = camera_branch_description(cam, uri);
    GError* error = nullptr;
    GstElement* bin = gst_parse_bin_from_description_full(description.c_str(), FALSE, nullptr,
                                                          GST_PARSE_FLAG_FATAL_ERRORS, &error);
    if (!bin) {
      fault = {static_cast<int>(i), std::string("cannot build its pipeline \"") + description +
                                        "\": " + (error ? error->message : "unknown error")};
      if (error) g_error_free(error);
      for (auto& b : branches_) b->detach();
      return false;
    }
    if (error) g_error_free(error);
    if (uri.scheme == SourceScheme::kGst && all_sources_live(bin)) {
      GstRef<GstElement> pace(gst_bin_get_by_name(GST_BIN(bin), kPaceName));
      if (pace) g_object_set(pace.get(), "sync", FALSE, nullptr);
    }
    gst_object_set_name(GST_OBJECT(bin), ("camera-" + cam.name).c_str());
    gst_bin_add(GST_BIN(run.pipeline.get()), bin);
    branches_[i]->attach(bin);
    run.bins.push_back(bin);
    spdlog::debug("rig '{}': {}: {}", config_.name, label(static_cast<int>(i)), description);
  }
  return true;
}

bool RigSource::start_feeders(Run& run, Fault& fault) {
  if (replay_feeder_) {
    // One thread serves every camera's frames from memory (replay_source.hpp).
    std::vector<GstRef<GstElement>> held;
    std::vector<GstElement*> sources;
    for (GstElement* bin : run.bins) {
      held.emplace_back(gst_bin_get_by_name(GST_BIN(bin), kRawSrcName));
      sources.push_back(held.back().get());
    }
    replay_feeder_->start(run.pipeline.get(), replay_, sources);
  }

  if (feeder_) {
    // One thread renders both views and feeds every camera's appsrc (synthetic_feeder.hpp).
    std::vector<GstRef<GstElement>> held;
    std::vector<SyntheticFeeder::Output> outputs;
    for (std::size_t i = 0; i < run.bins.size(); ++i) {
      SyntheticFeeder::Output o;
      held.emplace_back(gst_bin_get_by_name(GST_BIN(run.bins[i]), kRawSrcName));
      o.src = held.back().get();
      o.rgb = config_.cameras[i].color;
      o.view = static_cast<int>(synthetic_view_of(parse_source_uri(config_.cameras[i].uri), i));
      outputs.push_back(o);
    }
    try {
      feeder_->start(run.pipeline.get(), outputs);
    } catch (const std::runtime_error& e) {
      fault = {-1, e.what()};
      return false;
    }
  }

  if (image_feeder_) {
    // One thread reads every camera's file of a number and pushes them with one PTS.
    std::vector<GstRef<GstElement>> held;
    std::vector<ImageFeeder::Camera> cameras;
    for (std::size_t i = 0; i < run.bins.size(); ++i) {
      const SourceUri uri = parse_source_uri(config_.cameras[i].uri);
      held.emplace_back(gst_bin_get_by_name(GST_BIN(run.bins[i]), kImageSrcName));
      cameras.push_back({config_.cameras[i].name, uri.location,
                         static_cast<int>(uri.option_int("start", 0)), held.back().get()});
    }
    image_feeder_->start(run.pipeline.get(), cameras);
  }
  return true;
}

void RigSource::teardown(Run& run) {
  if (feeder_) feeder_->stop();
  if (replay_feeder_) replay_feeder_->stop();
  if (image_feeder_) image_feeder_->stop();
  gst_element_set_state(run.pipeline.get(), GST_STATE_NULL);  // joins the streaming threads
  for (auto& b : branches_) b->detach();
}

// Polls the bus until a stop, a fault, the end of the recordings or a reopening; kStopped only
// for a stop.
RigSource::Outcome RigSource::watch(Run& run, Backoff& backoff, Fault& fault) {
  run.started = monotonic_now_ns();
  run.last_refresh = run.started;
  run.ended.assign(branches_.size(), false);
  while (!stop_requested_) {
    bool all_ended_now = false;
    Outcome outcome = poll_bus(run, all_ended_now, fault);
    if (outcome != Outcome::kStopped) return outcome;
    if (all_ended_now && !recordings_) {
      fault = {-1, "end of stream on every camera"};
      return Outcome::kFault;
    }
    if (recordings_ && (all_ended_now ||
                        std::find(run.ended.begin(), run.ended.end(), false) == run.ended.end())) {
      outcome = end_of_recordings(run);
      if (outcome != Outcome::kStopped) return outcome;
      continue;
    }
    outcome = check_progress(run, backoff, fault);
    if (outcome != Outcome::kStopped) return outcome;
  }
  return Outcome::kStopped;
}

// Waits up to kBusPoll for one bus message and acts on it; sets `run.now` and, on EOS,
// `all_ended_now`. kStopped when the run goes on.
RigSource::Outcome RigSource::poll_bus(Run& run, bool& all_ended_now, Fault& fault) {
  GstMessageRef m(gst_bus_timed_pop(
      run.bus.get(), static_cast<GstClockTime>(std::chrono::nanoseconds(kBusPoll).count())));
  run.now = monotonic_now_ns();
  if (!m) return Outcome::kStopped;
  switch (GST_MESSAGE_TYPE(m.get())) {
    case GST_MESSAGE_ERROR:
      fault = {run.camera_of(m.get()), describe_message(m.get())};
      return Outcome::kFault;
    case GST_MESSAGE_WARNING:
      spdlog::warn("rig '{}': {}: {}", config_.name, label(run.camera_of(m.get())),
                   describe_message(m.get()));
      break;
    case GST_MESSAGE_LATENCY:
      gst_bin_recalculate_latency(GST_BIN(run.pipeline.get()));
      break;
    case GST_MESSAGE_EOS:  // every camera's sink has ended
      all_ended_now = true;
      break;
    case GST_MESSAGE_APPLICATION: {
      const GstStructure* s = gst_message_get_structure(m.get());
      int camera = -1;
      if (s && gst_structure_has_name(s, kCameraEosMessage) &&
          gst_structure_get_int(s, "camera", &camera) && camera >= 0 &&
          camera < static_cast<int>(run.ended.size())) {
        run.ended[static_cast<std::size_t>(camera)] = true;
        if (!recordings_) {
          fault = {camera, "end of stream: the source stopped or was disconnected"};
          return Outcome::kFault;
        }
      }
      break;
    }
    default:
      break;
  }
  return Outcome::kStopped;
}

// Every recording has ended: kEnded, or loop and go on (kStopped), or kRestartNow when the
// recordings cannot seek.
RigSource::Outcome RigSource::end_of_recordings(Run& run) {
  if (!config_.cameras[0].loop) return Outcome::kEnded;
  // Loop: back to the start of every recording at once. The flush resets running time and
  // the pipeline takes a new base time, so capture times go on from now.
  std::fill(run.ended.begin(), run.ended.end(), false);
  {
    std::lock_guard<std::mutex> lock(sync_mutex_);
    sync_.reset();
  }
  if (!gst_element_seek_simple(
          run.pipeline.get(), GST_FORMAT_TIME,
          static_cast<GstSeekFlags>(GST_SEEK_FLAG_FLUSH | GST_SEEK_FLAG_KEY_UNIT), 0)) {
    spdlog::info("rig '{}': cannot seek to the start; reopening the recordings", config_.name);
    return Outcome::kRestartNow;
  }
  return Outcome::kStopped;
}

// Between messages: refreshes the clock offset, notes when every camera delivers (running, then
// healthy) and faults a camera that went quiet. kStopped when the run goes on.
RigSource::Outcome RigSource::check_progress(Run& run, Backoff& backoff, Fault& fault) {
  const std::int64_t now = run.now;
  if (now - run.last_refresh >= std::chrono::nanoseconds(kOffsetRefresh).count()) {
    offset_.refresh();
    run.last_refresh = now;
  }
  // Every camera delivering: running. Healthy for long enough: the backoff starts over.
  bool all_delivering = true;
  for (const auto& b : branches_) all_delivering = all_delivering && b->last_sample_ns() != 0;
  if (all_delivering && run.running_since == 0) {
    run.running_since = now;
    set_state(RigState::kRunning);
    spdlog::info("rig '{}': running ({} camera{})", config_.name, branches_.size(),
                 branches_.size() == 1 ? "" : "s");
    emit({RigEvent::Kind::kRunning, config_.name, "", "every camera delivers frames", {}});
  }
  if (!run.healthy && run.running_since != 0 &&
      now - run.running_since >= ms_to_ns(config_.restart.healthy_after)) {
    run.healthy = true;
    backoff.reset();
  }
  // A camera that goes quiet without an error (a hung USB device, a stalled network stream).
  const std::int64_t stall = ms_to_ns(config_.restart.stall_timeout);
  for (std::size_t i = 0; stall > 0 && i < branches_.size(); ++i) {
    if (run.ended[i]) continue;
    const std::int64_t last = branches_[i]->last_sample_ns();
    if (now - (last != 0 ? last : run.started) > stall) {
      fault = {static_cast<int>(i), std::string(last != 0 ? "no frames for " : "no frame in ") +
                                        seconds_text(config_.restart.stall_timeout) +
                                        (last != 0 ? "" : " after start")};
      return Outcome::kFault;
    }
  }
  return Outcome::kStopped;
}

}  // namespace stereod
