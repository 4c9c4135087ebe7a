#include "daemon.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <iomanip>
#include <map>
#include <sstream>
#include <thread>

#include "logging.hpp"
#include "publish/engine_frame.hpp"
#include "publish/heap.hpp"
#include "trinocular/trinocular_engine.hpp"

namespace stereod::daemon {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

std::int64_t now_ns() {
  return publish::realtime_ns();
}

int index_of(const RigConfig& rig, const std::string& camera) {
  for (std::size_t i = 0; i < rig.cameras.size(); ++i) {
    if (rig.cameras[i].name == camera) return static_cast<int>(i);
  }
  return -1;
}

// A pair with no results for this long while frames are in flight is stuck (the watchdog stops).
constexpr std::int64_t kStuckNs = 5'000'000'000;

// The left image as the engine matched it (rectified through `map`, or copied when the cameras
// deliver rectified images), for the "left" payload and the colors of the points: gray when the
// gray image is asked for or the camera has no color, color when color is asked for and the
// camera delivers it. The copy lets the camera's frame go back to its pool at once.
void attach_left_image(const CameraFrame& frame, const RectificationMap* map,
                       const publish::PublisherOutputs& o, publish::PublishedFrame& f) {
  struct Images {
    Gray8 gray;
    RgbImage color;
  };
  auto images = std::make_shared<Images>();
  const bool yuv = !frame.yuv.empty();
  const bool color = (yuv || !frame.color.empty()) && (o.left == publish::LeftOutput::kColor ||
                                                       o.points == publish::PointsOutput::kXyzRgb);
  const bool gray = o.left == publish::LeftOutput::kGray || !color;
  if (yuv) {
    // The engine converted this camera's frame on its own side: the image published is the same
    // RGB (yuv_pixel_rgb), made here once more on the host, only when it is asked for.
    RgbImage rgb;
    yuv_to_rgb(frame.yuv, rgb);
    Gray8 luma;
    if (gray) rgb_to_gray(rgb, luma);
    if (map) {
      if (gray) remap(luma.view(), *map, images->gray);
      if (color) remap_rgb(view_of(rgb), *map, images->color);
    } else {
      if (gray) images->gray = std::move(luma);
      if (color) images->color = std::move(rgb);
    }
    if (gray) f.left_gray = images->gray.view();
    if (color) f.left_color = images->color.bytes();
    f.left_keep_alive = std::move(images);
    return;
  }
  if (gray) {
    // A color camera's frame has no gray of its own: its luma, as the engines derive it.
    Gray8 luma;
    ImageView<const std::uint8_t> g = frame.gray;
    if (g.empty() && !frame.color.empty()) {
      rgb_to_gray(frame.color, luma);
      g = luma.view();
    }
    if (map) {
      remap(g, *map, images->gray);
    } else {
      copy_into(g, images->gray);
    }
    f.left_gray = images->gray.view();
  }
  if (color) {
    if (map) {
      remap_rgb(frame.color, *map, images->color);
    } else {
      copy_into(frame.color, images->color);
    }
    f.left_color = images->color.bytes();
  }
  f.left_keep_alive = std::move(images);
}

// A pair of a running rig that has published nothing for this long is reported (status, log).
constexpr std::int64_t kSilentNs = 5'000'000'000;

// After SIGTERM, how long the frames in flight have to finish and be sent (the stop as a whole
// has 2 s: docs/DEPLOY-JETSON.md).
constexpr auto kFinishFramesFor = std::chrono::milliseconds(1200);

// A pair's frames as its engine takes them: their color when every one has it (the engine
// matches their luma: gray_from_color), else their gray.
FrameInput frame_input(std::uint64_t sequence, const CameraFrame& left, const CameraFrame& right,
                       const CameraFrame* vertical, bool color) {
  FrameInput in;
  in.sequence = sequence;
  in.capture_time_ns = left.capture_time_ns;
  if (color) {
    in.left_color = left.color;
    in.right_color = right.color;
    in.left_yuv = left.yuv;  // cameras with a raw_format (the loader pairs them only together)
    in.right_yuv = right.yuv;
    if (vertical) in.vertical_color = vertical->color;
  } else {
    in.left = left.gray;
    in.right = right.gray;
    if (vertical) in.vertical = vertical->gray;
  }
  return in;
}

bool contains(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

}  // namespace

Daemon::Daemon(Options options) : options_(std::move(options)) {}

Daemon::~Daemon() {
  shutdown();
}

void Daemon::request_reload(const std::string& why) {
  {
    std::lock_guard<std::mutex> lock(reload_mutex_);
    reload_reason_ = why;
  }
  reload_requested_ = true;
  wake_->notify();
}

std::string Daemon::engine_kind(const DaemonConfig& config) const {
  return options_.engine.empty() ? config.engine : options_.engine;
}

int Daemon::run() {
  try {
    config_ = load_daemon_config(options_.config_file);
  } catch (const ConfigError& e) {
    setup_logging("info");
    for (const auto& issue : e.issues()) spdlog::error("{}", issue.to_string());
    notifier_.status("configuration error: " +
                     (e.issues().empty() ? std::string("?") : e.issues().front().to_string()));
    return 2;
  }
  setup_logging(options_.log_level.empty() ? config_.log_level : options_.log_level);
  spdlog::info("stereod starting with {} (rigs: {}, pairs: {})", config_.file, config_.rigs.size(),
               config_.pairs.size());
  if (!start()) {
    shutdown();
    return 1;
  }
  loop();
  shutdown();
  spdlog::info("stereod stopped");
  return 0;
}

bool Daemon::start() {
  stats_ = std::make_shared<stats::StatsAggregator>();
  try {
    for (const auto& w : publish::publisher_warnings(config_.publish)) spdlog::warn("{}", w);
    publisher_ = std::make_unique<publish::Publisher>(publisher_options(config_), stats_);
  } catch (const std::exception& e) {
    spdlog::critical("cannot publish: {}", e.what());
    notifier_.status(std::string("cannot publish: ") + e.what());
    return false;
  }
  spdlog::info("publishing on {}", publisher_->endpoint());
  try {
    gpus_ = assign_gpus(config_);
    if (uses_cuda(config_) && config_.gpu.devices.size() > 1) {
      for (const auto& [device, load] : gpu_loads(config_, gpus_)) {
        const auto pairs = std::count_if(gpus_.begin(), gpus_.end(),
                                         [d = device](const auto& g) { return g.second == d; });
        spdlog::info("GPU {}: {} pair{}, {:.1f} Mpixel/s", device, pairs, pairs == 1 ? "" : "s",
                     load / 1e6);
      }
    }
    for (const auto& rc : config_.rigs) rigs_.push_back(build_rig(rc, config_, generation_, gpus_));
    for (const auto& rig : rigs_) {
      for (const auto& p : rig->pairs) stats_->add_pair(p->config.name);
    }
  } catch (const std::exception& e) {
    spdlog::critical("{}", e.what());
    notifier_.status(e.what());
    return false;
  }
  for (auto& rig : rigs_) start_rig(*rig);
  // READY once the pipelines run: every rig delivering, or 5 s, whichever comes first (a rig that
  // cannot start is restarted in the background and shows in STATUS).
  const auto deadline = Clock::now() + std::chrono::seconds(5);
  while (Clock::now() < deadline && !stop_requested_) {
    bool all = true;
    for (const auto& rig : rigs_) all = all && rig->source->stats().state == RigState::kRunning;
    if (all) break;
    collect_ready();
    wake_->wait(wake_->seen(), Clock::now() + milliseconds(5));
  }
  notifier_.ready(status_line());
  spdlog::info("ready: {}", status_line());
  return true;
}

bool Daemon::uses_cuda(const DaemonConfig& config) const {
  const std::string kind = engine_kind(config);
  return kind == "cuda" || (kind == "auto" && cuda_engine_available());
}

std::shared_ptr<Daemon::Pair> Daemon::build_pair(const PairConfig& pc, const RigConfig& rig,
                                                 const DaemonConfig& config,
                                                 std::uint64_t generation,
                                                 const GpuAssignment& gpus) {
  auto p = std::make_shared<Pair>();
  p->config = pc;
  p->left_index = index_of(rig, pc.left);
  p->right_index = index_of(rig, pc.right);
  if (pc.trinocular) p->vertical_index = index_of(rig, pc.trinocular->vertical);
  const CameraConfig& cam = rig.cameras[static_cast<std::size_t>(p->left_index)];
  const auto gpu = gpus.find(pc.name);
  p->gpu_device = gpu != gpus.end() ? gpu->second : config.gpu.devices.front();
  EngineOptions eo;
  eo.width = cam.width;
  eo.height = cam.height;
  eo.stereo = pc.stereo;
  eo.background = pc.background;
  eo.inflight = config.gpu.inflight;
  eo.gpu_device = p->gpu_device;
  eo.zero_copy = config.gpu.zero_copy;
  eo.watch_ends = config.gpu.watch_ends;
  // Pairs of one device share its engine group (the CUDA engine batches pairs of one size).
  std::shared_ptr<EngineGroup>& group = engine_groups_[p->gpu_device];
  if (!group) group = make_engine_group();
  eo.group = group;
  // The main loop sleeps until an engine says a result is ready.
  eo.on_result = [wake = wake_, pair = std::weak_ptr<Pair>(p)] {
    if (const auto q = pair.lock()) q->result_ready = true;
    wake->notify();
  };
  std::shared_ptr<StereoCalibration> cal;
  if (pc.calibration.has_files()) {
    cal = std::make_shared<StereoCalibration>(load_calibration(pc.calibration));
    check_calibration_size(*cal, pc.name, cam.width, cam.height);
    eo.left_map = std::shared_ptr<const RectificationMap>(cal, &cal->left);
    eo.right_map = std::shared_ptr<const RectificationMap>(cal, &cal->right);
  }
  p->left_map = eo.left_map;
  p->depth = pair_camera_model(pc, rig, cal.get());
  const std::string kind = engine_kind(config);
  if (kind == "auto" || kind == "cuda") {
    std::string why;
    if (!cuda_engine_available(&why)) {
      if (kind == "cuda") throw std::runtime_error("pair '" + pc.name + "': engine cuda: " + why);
      if (engine_name_.empty()) spdlog::warn("no usable GPU ({}): using the CPU engine", why);
    }
  }
  if (pc.trinocular) {
    // Reference and horizontal partner as the pair's left and right, the vertical partner
    // transposed beside them (trinocular/trinocular_engine.hpp).
    TrinocularOptions t;
    t.model = pc.trinocular->model;
    t.cost_ratio = pc.trinocular->cost_ratio;
    p->engine = make_trinocular_engine(kind, eo, t);
  } else {
    p->engine = make_engine(kind, eo);
  }
  if (engine_name_ != p->engine->name()) {
    engine_name_ = std::string(p->engine->name());
    spdlog::info("pair '{}': {} engine, {}x{}, {} disparities", pc.name, engine_name_, cam.width,
                 cam.height, pc.stereo.max_disparity);
  }
  // Submitted and not yet collected: at most the engine's slots, and the set being submitted.
  p->pending.reserve(static_cast<std::size_t>(config.gpu.inflight) + 2);
  const CameraConfig& right = rig.cameras[static_cast<std::size_t>(p->right_index)];
  const CameraConfig* vertical =
      p->vertical_index >= 0 ? &rig.cameras[static_cast<std::size_t>(p->vertical_index)] : nullptr;
  if (cam.color != right.color || (vertical && vertical->color != cam.color)) {
    // A trinocular pair may convert two of its three frames of a set.
    p->luma_pool = std::make_unique<FramePool>((vertical ? 2 : 1) * (config.gpu.inflight + 2));
    p->allocate = uses_cuda(config) ? PixelAllocator(allocate_pinned) : PixelAllocator();
  }
  p->generations.emplace_back(0, generation);
  p->built_ns = now_ns();
  return p;
}

std::unique_ptr<Daemon::Rig> Daemon::build_rig(const RigConfig& rc, const DaemonConfig& config,
                                               std::uint64_t generation,
                                               const GpuAssignment& gpus) {
  auto rig = std::make_unique<Rig>();
  rig->config = rc;
  for (const auto& pc : config.pairs) {
    if (pc.rig == rc.name) rig->pairs.push_back(build_pair(pc, rc, config, generation, gpus));
  }
  rig->submitting.reserve(rig->pairs.size() + 64);
  Rig* raw = rig.get();
  RigSourceOptions options;
  // With the CUDA engine, frames go straight from GStreamer's buffer into page-locked memory,
  // which the engine uploads from without a copy of its own (FrameInput::pinned).
  rig->pinned = uses_cuda(config);
  if (rig->pinned) options.allocate = allocate_pinned;
  // A camera's frames stay held while the frame sets in flight in the engines have them.
  options.frames_held = config.gpu.inflight + 2;
  rig->source = std::make_unique<RigSource>(
      rc, [this, raw](FrameSet&& set) { on_frame_set(*raw, std::move(set)); },
      [this, raw](const RigEvent& e) { on_rig_event(*raw, e); }, options);
  return rig;
}

void Daemon::start_rig(Rig& rig) {
  rig.sync_dropped_seen = 0;
  rig.source->start();
}

void Daemon::on_rig_event(Rig& rig, const RigEvent& e) {
  switch (e.kind) {
    case RigEvent::Kind::kRunning:
      rig.running_since_ns = now_ns();
      if (rig.failing.exchange(false)) spdlog::info("rig '{}' is running again", rig.config.name);
      break;
    case RigEvent::Kind::kFailed: {
      // The rig has logged it (with the restart's delay); the pairs' stats carry it on.
      rig.failing = true;
      std::lock_guard<std::mutex> lock(rig.pairs_mutex);
      for (const auto& p : rig.pairs) stats_->record_error(p->config.name, e.message);
      break;
    }
    case RigEvent::Kind::kEnded:  // the rig has logged it
      break;
  }
}

// On a GStreamer streaming thread: hand the set to every pair of the rig, never blocking. Nothing
// here allocates or takes a lock another rig's thread takes: the pairs' list is copied into a
// reused vector, each pair has its own lock, drops are counted in the pair.
void Daemon::on_frame_set(Rig& rig, FrameSet&& set) {
  // After SIGTERM the frames in flight are finished, new ones are not taken: nothing collects
  // results any more, so they would only fill the slots and be miscounted as "engine busy".
  if (stop_requested_) return;
  {
    std::lock_guard<std::mutex> lock(rig.pairs_mutex);
    rig.submitting.assign(rig.pairs.begin(), rig.pairs.end());
  }
  for (const auto& pp : rig.submitting) submit_set(rig, *pp, set);
  rig.submitting.clear();  // keeps its capacity
}

void Daemon::submit_set(Rig& rig, Pair& p, const FrameSet& set) {
  std::shared_ptr<const CameraFrame> left = set.frames[static_cast<std::size_t>(p.left_index)];
  std::shared_ptr<const CameraFrame> right = set.frames[static_cast<std::size_t>(p.right_index)];
  if (!left || !right || left->status != FrameStatus::kOk || right->status != FrameStatus::kOk) {
    return;
  }
  std::shared_ptr<const CameraFrame> vertical;
  if (p.vertical_index >= 0) {
    vertical = set.frames[static_cast<std::size_t>(p.vertical_index)];
    if (!vertical || vertical->status != FrameStatus::kOk) return;
  }
  const auto colored = [](const CameraFrame& c) { return !c.color.empty() || !c.yuv.empty(); };
  const bool color = colored(*left) && colored(*right) && (!vertical || colored(*vertical));
  // A color camera with a gray one: all are matched gray, a color one's luma.
  for (std::shared_ptr<const CameraFrame>* cp : {&left, &right, &vertical}) {
    std::shared_ptr<const CameraFrame>& c = *cp;
    if (color || !c || c->color.empty()) continue;
    if (!replace_with_luma(p, set.sequence, c)) return;
  }
  FrameInput in = frame_input(set.sequence, *left, *right, vertical.get(), color);
  // Held in `pending` until the result is collected, so unchanged until then.
  in.pinned = rig.pinned && !p.luma_pool;
  {
    std::lock_guard<std::mutex> lock(p.mutex);
    if (p.pending.full()) p.pending.pop_front();  // not expected: results lost by the engine
    PendingFrame& pending = p.pending.push_back();
    pending.sequence = set.sequence;
    pending.complete_ns = set.complete_time_ns;
    pending.submitted_ns = now_ns();
    pending.left = left;
    pending.right = right;
    pending.vertical = vertical;
    in.confidence = pending.confidence = p.config.outputs.confidence;
  }
  SubmitStatus s;
  try {
    s = p.engine->submit(in);
  } catch (const std::exception& e) {
    s = SubmitStatus::kBusy;
    stats_->record_error(p.config.name, e.what());
    spdlog::error("pair '{}': {}", p.config.name, e.what());
  }
  if (s == SubmitStatus::kBusy) {
    {
      std::lock_guard<std::mutex> lock(p.mutex);
      p.pending.pop_back();
    }
    record_busy(p, set.sequence);
  }
}

bool Daemon::replace_with_luma(Pair& p, std::uint64_t sequence,
                               std::shared_ptr<const CameraFrame>& frame) {
  std::shared_ptr<CameraFrame> luma = p.luma_pool ? p.luma_pool->acquire() : nullptr;
  if (!luma) {  // every buffer is in flight: the engine is behind
    record_busy(p, sequence);
    return false;
  }
  try {
    const int w = frame->color.width, h = frame->color.height;
    std::uint8_t* d = luma->reserve(static_cast<std::size_t>(w) * h, p.allocate);
    rgb_to_gray(frame->color, d, w);
    luma->gray = {d, w, h, w};
    luma->color = {};
  } catch (const std::exception& e) {  // no memory for it
    stats_->record_error(p.config.name, e.what());
    return false;
  }
  luma->camera = frame->camera;
  luma->capture_time_ns = frame->capture_time_ns;
  luma->sequence = frame->sequence;
  luma->source_index = frame->source_index;
  frame = std::move(luma);
  return true;
}

void Daemon::record_busy(Pair& p, std::uint64_t sequence) {
  p.busy_unrecorded.fetch_add(1, std::memory_order_relaxed);
  if (p.busy_logged++ % 1000 == 0) {
    spdlog::warn("pair '{}': engine busy, frame set {} dropped (logged once per 1000)",
                 p.config.name, sequence);
  }
}

void Daemon::record_busy_drops(Pair& p) {
  const std::uint64_t n = p.busy_unrecorded.exchange(0, std::memory_order_relaxed);
  if (n > 0) stats_->record_drop(p.config.name, stats::DropReason::kEngineBusy, n);
}

// A result, with what the daemon knew of its frame set.
struct Daemon::Collected {
  publish::FrameInfo info;
  publish::PublisherOutputs outputs;        // the pair's, when the result came
  std::shared_ptr<const CameraFrame> left;  // for the left image and colored points payloads
  bool confidence_asked = false;
};

bool Daemon::collect(Pair& p) {
  bool any = false;
  while (auto r = p.engine->poll(std::chrono::nanoseconds(0))) {
    any = true;
    p.last_result_ns = now_ns();
    publish_result(p, *r, match_pending(p, *r));
  }
  return any;
}

Daemon::Collected Daemon::match_pending(Pair& p, const EngineResult& r) {
  Collected c;
  publish::FrameInfo& info = c.info;
  info.pair = p.config.name;
  info.engine = std::string(p.engine->name());
  info.min_disparity = 0;
  info.max_disparity = p.config.stereo.max_disparity;
  info.calibration = p.depth;
  std::lock_guard<std::mutex> lock(p.mutex);
  c.outputs = p.config.outputs;
  while (!p.pending.empty() && p.pending.front().sequence != r.sequence) p.pending.pop_front();
  if (!p.pending.empty()) {
    const PendingFrame& f = p.pending.front();
    info.cameras = {{f.left->camera, f.left->capture_time_ns},
                    {f.right->camera, f.right->capture_time_ns}};
    if (f.vertical) info.cameras.push_back({f.vertical->camera, f.vertical->capture_time_ns});
    info.complete_ns = f.complete_ns;
    info.source_index = f.left->source_index;
    std::int64_t earliest = std::min(f.left->capture_time_ns, f.right->capture_time_ns);
    if (f.vertical) earliest = std::min(earliest, f.vertical->capture_time_ns);
    if (f.complete_ns > 0 && earliest > 0) {
      info.latency.push_back({"sync", static_cast<double>(f.complete_ns - earliest) / 1e6});
    }
    if (f.complete_ns > 0) {
      info.latency.push_back({"queue", static_cast<double>(f.submitted_ns - f.complete_ns) / 1e6});
    }
    c.left = f.left;
    c.confidence_asked = f.confidence;
    p.pending.pop_front();  // the engine has done with the frames: back to their pools
  }
  // The configuration generation the frame's parameters came from.
  while (p.generations.size() > 1 && p.generations[1].first <= r.params_generation) {
    p.generations.pop_front();
  }
  info.config_generation = p.generations.front().second;
  return c;
}

void Daemon::publish_result(Pair& p, const EngineResult& r, Collected c) {
  if (!r.ok) {
    spdlog::error("pair '{}', frame set {}: {}", p.config.name, r.sequence, r.error);
  }
  if (!publisher_) {  // lost in a failed reload; loop() makes a new one
    stats_->record_drop(p.config.name, stats::DropReason::kSend);
    return;
  }
  const publish::PublisherOutputs& outputs = c.outputs;
  publish::PublishedFrame frame = publish::frame_from_result(r, std::move(c.info), outputs.mask);
  frame.outputs = outputs;
  if (r.ok && c.left && outputs.wants_left_image()) {
    try {
      attach_left_image(*c.left, p.left_map.get(), outputs, frame);
    } catch (const std::exception& e) {  // the map fits the camera (checked at start): a bug
      spdlog::error("pair '{}': left image not sent: {}", p.config.name, e.what());
    }
  }
  c.left.reset();
  if (c.confidence_asked && r.ok && r.confidence.empty() && !p.warned_confidence) {
    p.warned_confidence = true;
    spdlog::warn(
        "pair '{}': outputs.confidence is on, but the {} engine computes no confidence "
        "yet; frames go out without it",
        p.config.name, p.engine->name());
  }
  try {
    publisher_->publish(std::move(frame));
  } catch (const std::exception& e) {
    // A frame the protocol cannot carry: the loader refuses every configuration known to make
    // one, so this is a bug; lose the frame, say so, and go on.
    stats_->record_drop(p.config.name, stats::DropReason::kSend);
    stats_->record_error(p.config.name, e.what());
    if (p.publish_errors_logged++ % 1000 == 0) {
      spdlog::error("pair '{}': frame not published: {} (logged once per 1000)", p.config.name,
                    e.what());
    }
  }
}

void Daemon::count_sync_drops() {
  for (auto& rig : rigs_) {
    const RigStats s = rig->source->stats();
    // Sets that could not be completed: frames without partners, and images:// numbers that a
    // camera lacked.
    const std::uint64_t dropped = s.sync.dropped() + s.image_gaps;
    if (dropped > rig->sync_dropped_seen) {
      std::lock_guard<std::mutex> lock(rig->pairs_mutex);
      for (const auto& p : rig->pairs) {
        stats_->record_drop(p->config.name, stats::DropReason::kSync,
                            dropped - rig->sync_dropped_seen);
      }
    }
    rig->sync_dropped_seen = dropped;
  }
}

void Daemon::collect_ready() {
  collecting_.clear();
  for (auto& rig : rigs_) {
    std::lock_guard<std::mutex> lock(rig->pairs_mutex);
    collecting_.insert(collecting_.end(), rig->pairs.begin(), rig->pairs.end());
  }
  for (auto& p : collecting_) {
    if (p->result_ready.exchange(false)) collect(*p);
    record_busy_drops(*p);
  }
  collecting_.clear();
  // Replaced pairs: publish what they still finish, then let them go.
  for (auto it = retiring_.begin(); it != retiring_.end();) {
    (*it)->result_ready = false;
    collect(**it);
    const std::string& name = (*it)->config.name;
    const bool kept = std::any_of(config_.pairs.begin(), config_.pairs.end(),
                                  [&](const PairConfig& pc) { return pc.name == name; });
    if (kept) record_busy_drops(**it);  // a removed pair's stats are gone
    it = (*it)->engine->in_flight() == 0 ? retiring_.erase(it) : std::next(it);
  }
}

void Daemon::loop() {
  auto next_watchdog = Clock::now();
  auto next_status = Clock::now() + std::chrono::seconds(1);
  auto next_publisher_retry = Clock::now();
  while (!stop_requested_) {
    // Whatever is notified from here on wakes the wait below.
    const std::uint64_t seen = wake_->seen();
    collect_ready();
    if (reload_requested_.exchange(false)) start_reload();
    if (loading_ && loading_->done) finish_reload();
    const auto now = Clock::now();
    if (!publisher_ && now >= next_publisher_retry) {
      next_publisher_retry = now + std::chrono::seconds(1);
      try {
        publisher_ = std::make_unique<publish::Publisher>(publisher_options(config_), stats_);
        publisher_error_.clear();
        spdlog::info("publishing on {} again", publisher_->endpoint());
      } catch (const std::exception& e) {
        publisher_error_ = e.what();
      }
    }
    if (now >= next_status) {
      count_sync_drops();
      report_silent_pairs();
      notifier_.status(status_line());
      next_status = now + std::chrono::seconds(1);
    }
    if (notifier_.watchdog_interval().count() > 0 && now >= next_watchdog) {
      if (healthy()) notifier_.watchdog();
      next_watchdog = now + notifier_.watchdog_interval();
    }
    // Sleep until a result is ready, a request comes, or the next timer.
    auto until = next_status;
    if (notifier_.watchdog_interval().count() > 0) until = std::min(until, next_watchdog);
    if (!publisher_) until = std::min(until, next_publisher_retry);
    wake_->wait(seen, until);
  }
}

bool Daemon::healthy() const {
  // Without a socket nothing reaches a subscriber: let systemd restart the service.
  if (!publisher_) return false;
  const std::int64_t now = now_ns();
  for (const auto& rig : rigs_) {
    for (const auto& p : rig->pairs) {
      const std::int64_t last = p->last_result_ns.load();
      if (p->engine->in_flight() > 0 && last > 0 && now - last > kStuckNs) return false;
    }
  }
  return true;
}

publish::PublisherOptions Daemon::publisher_options(const DaemonConfig& config) {
  publish::PublisherOptions o = config.publish;
  o.pairs = static_cast<int>(config.pairs.size());  // buffers scale with the pairs sharing it
  return o;
}

std::string Daemon::status_line() const {
  std::ostringstream out;
  std::size_t pairs = 0;
  for (const auto& rig : rigs_) pairs += rig->pairs.size();
  out << pairs << (pairs == 1 ? " pair" : " pairs") << ", "
      << (engine_name_.empty() ? "?" : engine_name_) << " engine";
  if (const auto snap = stats_ ? stats_->last_snapshot() : std::nullopt) {
    double fps = 0;
    std::uint64_t busy = 0, sync = 0, send = 0;
    for (const auto& ps : snap->pairs) {
      fps += ps.fps;
      busy += ps.drops_total[static_cast<std::size_t>(stats::DropReason::kEngineBusy)];
      sync += ps.drops_total[static_cast<std::size_t>(stats::DropReason::kSync)];
      send += ps.drops_total[static_cast<std::size_t>(stats::DropReason::kSend)];
    }
    out.precision(1);
    out << std::fixed << ", " << fps << " frames/s, drops: sync " << sync << ", busy " << busy
        << ", send " << send;
  }
  for (const auto& rig : rigs_) {
    const RigStats s = rig->source->stats();
    if (s.state != RigState::kRunning)
      out << "; rig '" << rig->config.name << "' " << to_string(s.state);
    if (rig->failing && !s.last_error.empty()) out << " (" << s.last_error << ")";
  }
  if (!publisher_) out << "; not publishing: " << publisher_error_;
  if (publisher_ && publisher_->subscriptions() > publish::Publisher::kManySubscriptions) {
    out << "; subscribers hold " << publisher_->subscriptions() << " subscriptions";
  }
  for (const auto& [pair, seconds] : silent_pairs()) {
    out << "; pair '" << pair << "' published nothing for " << std::setprecision(0) << seconds
        << " s";
  }
  if (!last_reload_error_.empty()) out << "; reload failed: " << last_reload_error_;
  return out.str();
}

std::vector<std::pair<std::string, double>> Daemon::silent_pairs() const {
  std::vector<std::pair<std::string, double>> out;
  const std::int64_t now = now_ns();
  for (const auto& rig : rigs_) {
    if (rig->source->stats().state != RigState::kRunning) continue;  // said otherwise
    for (const auto& p : rig->pairs) {
      const std::int64_t since =
          std::max({p->last_result_ns.load(), p->built_ns, rig->running_since_ns.load()});
      if (now - since > kSilentNs) out.emplace_back(p->config.name, double(now - since) / 1e9);
    }
  }
  return out;
}

void Daemon::report_silent_pairs() {
  const auto silent = silent_pairs();
  for (const auto& rig : rigs_) {
    for (const auto& p : rig->pairs) {
      const auto it = std::find_if(silent.begin(), silent.end(),
                                   [&](const auto& s) { return s.first == p->config.name; });
      if (it == silent.end()) {
        if (p->silent_reported) spdlog::info("pair '{}' publishes again", p->config.name);
        p->silent_reported = false;
      } else if (!p->silent_reported) {
        p->silent_reported = true;
        spdlog::warn(
            "pair '{}' has published nothing for {:.0f} s while its cameras deliver (engine busy "
            "drops so far: {})",
            p->config.name, it->second, p->busy_logged.load());
      }
    }
  }
}

void Daemon::start_reload() {
  if (loading_) {  // a reload is being read: read the file again once it is done
    reload_again_ = true;
    return;
  }
  std::string why;
  {
    std::lock_guard<std::mutex> lock(reload_mutex_);
    why = reload_reason_;
  }
  spdlog::info("reloading {} ({})", config_.file, why);
  notifier_.reloading();
  // Reading and checking a file takes a while when it is big (up to the 1 MiB limit): a thread of
  // its own does it, so that frames go on being collected and a stop is not held up.
  loading_ = std::make_unique<Loading>();
  Loading* job = loading_.get();
  job->thread = std::thread([job, file = config_.file, wake = wake_] {
    try {
      job->config = load_daemon_config(file);
    } catch (const ConfigError& e) {
      job->issues = e.issues();
    } catch (const std::exception& e) {
      job->error = e.what();
    }
    job->done = true;
    wake->notify();
  });
}

void Daemon::finish_reload() {
  loading_->thread.join();
  std::unique_ptr<Loading> job = std::move(loading_);
  if (job->config) {
    try {
      apply(std::move(*job->config));
      last_reload_error_.clear();
    } catch (const std::exception& e) {
      job->error = e.what();
    }
  }
  if (!job->issues.empty()) {
    // Keep running on the configuration we have.
    for (const auto& issue : job->issues) spdlog::error("reload rejected: {}", issue.to_string());
    last_reload_error_ = job->issues.front().to_string();
  } else if (!job->error.empty()) {
    spdlog::error("reload failed: {}; still running on the previous configuration", job->error);
    last_reload_error_ = job->error;
  }
  job.reset();
  publish::release_free_heap();  // parsing a big file leaves many free pages behind
  notifier_.ready(status_line());
  if (reload_again_) {
    reload_again_ = false;
    start_reload();
  }
}

// One reload, worked out before anything is built.
struct Daemon::ReloadPlan {
  ConfigDiff diff;
  // Where every pair runs after the reload: pairs stay on their GPU unless pinned elsewhere or
  // their GPU left gpu.devices. A pair that moves is rebuilt on its new GPU; the others go on.
  GpuAssignment gpus;
  std::vector<std::string> moved;
  std::uint64_t generation = 0;

  // The pair is built anew (every engine, its own settings, or its GPU changed).
  bool rebuild(const std::string& pair) const {
    return diff.engines_rebuilt || contains(diff.pairs_rebuilt, pair) || contains(moved, pair);
  }
  // The rig runs on through the reload (neither removed nor rebuilt).
  bool stays(const Rig& rig) const {
    return !contains(diff.rigs_removed, rig.config.name) &&
           !contains(diff.rigs_rebuilt, rig.config.name);
  }
};

// What step 1 of a reload built beside what runs.
struct Daemon::ReloadBuilt {
  std::map<std::string, std::shared_ptr<Pair>> pairs;  // of rigs that stay
  std::vector<std::unique_ptr<Rig>> rigs;              // new and rebuilt ones, with their pairs
  std::unique_ptr<publish::Publisher> old_publisher;   // replaced, still open
};

void Daemon::apply(DaemonConfig next) {
  if (!options_.engine.empty()) next.engine = options_.engine;
  ConfigDiff d = diff_configs(config_, next);
  if (d.empty()) {
    spdlog::info("reload: no changes");
    return;
  }
  const ReloadPlan plan = plan_reload(next, std::move(d));

  // 1. Everything new is built beside what runs, so that when any of it fails (a calibration, an
  // engine, a source, the socket) the daemon goes on exactly as it was.
  ReloadBuilt built = build_reload(next, plan);

  // 2. Commit: nothing below fails.
  for (const auto& name : plan.moved) {
    spdlog::info("reload: pair '{}' moves from GPU {} to GPU {}", name, gpus_.at(name),
                 plan.gpus.at(name));
  }
  config_ = std::move(next);
  gpus_ = plan.gpus;
  generation_ = plan.generation;
  spdlog::info("reload (generation {}): {}", generation_, plan.diff.summary());
  if (plan.diff.log_level && options_.log_level.empty()) set_log_level(config_.log_level);
  if (built.old_publisher) {
    built.old_publisher->stop();  // subscribers reconnect by themselves (ZeroMQ does it)
    spdlog::info("publishing on {}", publisher_->endpoint());
  } else if (publisher_) {
    if (plan.diff.publisher_outputs) publisher_->set_outputs(config_.publish.outputs);
    publisher_->set_pairs(static_cast<int>(config_.pairs.size()));
  }
  retire_rigs(plan);
  update_pairs(plan, built.pairs);
  // New and rebuilt rigs (with their pairs).
  for (auto& rig : built.rigs) {
    for (const auto& p : rig->pairs) stats_->add_pair(p->config.name);
    rigs_.push_back(std::move(rig));
    start_rig(*rigs_.back());
  }
}

Daemon::ReloadPlan Daemon::plan_reload(const DaemonConfig& next, ConfigDiff diff) const {
  ReloadPlan plan;
  plan.diff = std::move(diff);
  plan.gpus = assign_gpus(next, gpus_);
  const bool on_gpus = uses_cuda(next) && engine_name_ == "cuda";
  for (const auto& [name, device] : plan.gpus) {
    const auto it = gpus_.find(name);
    if (on_gpus && it != gpus_.end() && it->second != device) plan.moved.push_back(name);
  }
  plan.generation = generation_ + 1;
  return plan;
}

// Pairs and rigs first, the publisher last (it may have to close the running socket to bind the
// same address). Throws, leaving the daemon as it was, when anything cannot be built.
Daemon::ReloadBuilt Daemon::build_reload(const DaemonConfig& next, const ReloadPlan& plan) {
  ReloadBuilt built;
  for (const auto& rig : rigs_) {
    if (!plan.stays(*rig)) continue;
    for (const auto& pc : next.pairs) {
      if (pc.rig == rig->config.name && plan.rebuild(pc.name)) {
        built.pairs[pc.name] = build_pair(pc, *next.rig(pc.rig), next, plan.generation, plan.gpus);
      }
    }
  }
  for (const auto& rc : next.rigs) {
    const bool running = std::any_of(rigs_.begin(), rigs_.end(), [&](const auto& rig) {
      return rig->config.name == rc.name && plan.stays(*rig);
    });
    if (!running) built.rigs.push_back(build_rig(rc, next, plan.generation, plan.gpus));
  }
  if (plan.diff.publisher_rebuilt) built.old_publisher = replace_publisher(next);
  return built;
}

// Rigs that go away or change: stop their pipelines, let their pairs finish.
void Daemon::retire_rigs(const ReloadPlan& plan) {
  for (auto it = rigs_.begin(); it != rigs_.end();) {
    Rig& rig = **it;
    if (!plan.stays(rig)) {
      rig.source->stop();
      for (auto& p : rig.pairs) {
        retiring_.push_back(p);
        if (!config_.rig(rig.config.name) || !contains(plan.diff.pairs_rebuilt, p->config.name)) {
          stats_->remove_pair(p->config.name);
        }
      }
      it = rigs_.erase(it);
    } else {
      ++it;
    }
  }
}

// Pairs of the remaining rigs: retune in place, swap in the rebuilt ones (`rebuilt`), add or
// remove.
void Daemon::update_pairs(const ReloadPlan& plan,
                          const std::map<std::string, std::shared_ptr<Pair>>& rebuilt) {
  const ConfigDiff& d = plan.diff;
  for (auto& rig : rigs_) {
    std::vector<std::shared_ptr<Pair>> pairs;
    for (auto& p : rig->pairs) {
      const std::string& name = p->config.name;
      if (contains(d.pairs_removed, name) || plan.rebuild(name)) {
        retiring_.push_back(p);
        if (contains(d.pairs_removed, name)) stats_->remove_pair(name);
        continue;
      }
      pairs.push_back(p);
      if (contains(d.pairs_outputs, name)) {
        for (const auto& pc : config_.pairs) {
          if (pc.name != name) continue;
          std::lock_guard<std::mutex> lock(p->mutex);
          p->config.outputs = pc.outputs;
        }
      }
      if (contains(d.pairs_retuned, name)) retune(*p);
    }
    for (const auto& pc : config_.pairs) {
      if (pc.rig != rig->config.name || !plan.rebuild(pc.name)) continue;
      stats_->add_pair(pc.name);
      pairs.push_back(rebuilt.at(pc.name));
    }
    std::lock_guard<std::mutex> lock(rig->pairs_mutex);
    rig->pairs = std::move(pairs);
  }
}

void Daemon::retune(Pair& p) {
  for (auto& pc : config_.pairs) {
    if (pc.name != p.config.name) continue;
    try {
      // Frames submitted from now on use the new parameters: no frame is lost.
      p.engine->set_params(pc.stereo, pc.background);
    } catch (const std::exception& e) {
      // The loader checks what the engines check, so this is not expected; the pair keeps its
      // parameters, and the configuration the daemon reports says so.
      spdlog::error("pair '{}' keeps its previous parameters: {}", pc.name, e.what());
      pc.stereo = p.config.stereo;
      pc.background = p.config.background;
      return;
    }
    std::lock_guard<std::mutex> lock(p.mutex);
    p.config = pc;
    p.generations.emplace_back(++p.engine_generation, generation_);
  }
}

std::unique_ptr<publish::Publisher> Daemon::replace_publisher(const DaemonConfig& next) {
  publish::PublisherOptions wanted = publisher_options(next);
  for (const auto& w : publish::publisher_warnings(wanted)) spdlog::warn("{}", w);
  const std::string from = publisher_ ? publisher_->endpoint() : "";
  const std::string to = publish::resolve_endpoint(wanted);
  const bool any_port =
      to.size() > 2 && (to.substr(to.size() - 2) == ":0" || to.substr(to.size() - 2) == ":*");
  std::unique_ptr<publish::Publisher> old;
  if (!publisher_ || from != to || any_port) {
    // Another address: bind it while the old socket still serves.
    auto fresh = std::make_unique<publish::Publisher>(wanted, stats_);
    old = std::move(publisher_);
    publisher_ = std::move(fresh);
    return old;
  }
  // The same address with other settings: the old socket must let go of it first.
  publisher_->stop();
  try {
    auto fresh = std::make_unique<publish::Publisher>(wanted, stats_);
    old = std::move(publisher_);
    publisher_ = std::move(fresh);
    return old;
  } catch (const std::exception& e) {
    try {
      publisher_ = std::make_unique<publish::Publisher>(publisher_options(config_), stats_);
    } catch (const std::exception& again) {
      publisher_.reset();
      publisher_error_ = again.what();
      spdlog::critical("cannot publish on {} again: {}; retrying", from, again.what());
    }
    throw;
  }
}

void Daemon::drain(std::vector<std::shared_ptr<Pair>>& pairs, Clock::time_point deadline) {
  for (;;) {
    bool busy = false;
    for (auto& p : pairs) {
      collect(*p);
      busy = busy || p->engine->in_flight() > 0;
    }
    if (!busy || Clock::now() >= deadline) return;
    std::this_thread::sleep_for(milliseconds(1));
  }
}

void Daemon::stop_rigs(Clock::time_point deadline) {
  // Each rig stops on a thread of its own, all at once. Stopping a pipeline waits for its
  // streaming threads, and a source stuck where GStreamer cannot interrupt it (a hung camera
  // driver) would hold the stop, and SIGTERM, for as long: such a rig is left to the process's
  // exit (abandoned_work()).
  struct Stopping {
    std::thread thread;
    std::shared_ptr<std::atomic<bool>> done = std::make_shared<std::atomic<bool>>(false);
  };
  std::vector<Stopping> stopping(rigs_.size());
  for (std::size_t i = 0; i < rigs_.size(); ++i) {
    stopping[i].thread = std::thread([source = rigs_[i]->source.get(), done = stopping[i].done] {
      source->stop();
      *done = true;
    });
  }
  const auto all_done = [&] {
    return std::all_of(stopping.begin(), stopping.end(),
                       [](const Stopping& s) { return s.done->load(); });
  };
  while (!all_done() && Clock::now() < deadline) std::this_thread::sleep_for(milliseconds(2));
  for (std::size_t i = 0; i < rigs_.size(); ++i) {
    if (*stopping[i].done) {
      stopping[i].thread.join();
      continue;
    }
    abandoned_ = true;
    spdlog::warn("rig '{}' did not stop in time (a source is stuck): left behind",
                 rigs_[i]->config.name);
    stopping[i].thread.detach();
    static_cast<void>(rigs_[i].release());  // its stop thread still uses it
  }
  rigs_.erase(std::remove(rigs_.begin(), rigs_.end(), nullptr), rigs_.end());
}

void Daemon::shutdown() {
  // SIGTERM to exit within 2 s (docs): the frames in flight get until here, whatever the engines'
  // speed; a frame still being computed then is given up rather than waited for.
  const auto deadline = Clock::now() + kFinishFramesFor;
  if (loading_) loading_->thread.join();  // bounded: the file is at most 1 MiB
  loading_.reset();
  if (rigs_.empty() && !publisher_) return;
  notifier_.stopping();
  // No new frames, then the frames in flight are finished and sent, then the socket closes.
  stop_rigs(deadline);
  std::vector<std::shared_ptr<Pair>> all = retiring_;
  for (auto& rig : rigs_) all.insert(all.end(), rig->pairs.begin(), rig->pairs.end());
  if (publisher_) drain(all, deadline);
  if (publisher_) publisher_->stop();
  // An engine's destructor waits for the frame it computes (seconds for a large frame on a slow
  // CPU): engines still busy are left to the process's exit (abandoned_work()).
  int unfinished = 0;
  for (auto& p : all) {
    const int n = p->engine->in_flight();
    if (n == 0) continue;
    unfinished += n;
    static_cast<void>(p->engine.release());
  }
  if (unfinished > 0) {
    abandoned_ = true;
    spdlog::warn("{} frame{} still being computed at the stop deadline: not published", unfinished,
                 unfinished == 1 ? "" : "s");
  }
  // What the run amounted to, per pair, for the journal.
  if (stats_) {
    for (auto& rig : rigs_) {
      for (auto& p : rig->pairs) record_busy_drops(*p);
    }
    for (const auto& ps : stats_->snapshot().pairs) {
      const auto drops = [&](stats::DropReason r) {
        return ps.drops_total[static_cast<std::size_t>(r)];
      };
      spdlog::info("pair '{}': {} frames published; drops: sync {}, busy {}, send {}", ps.pair,
                   ps.frames_total, drops(stats::DropReason::kSync),
                   drops(stats::DropReason::kEngineBusy), drops(stats::DropReason::kSend));
    }
  }
  rigs_.clear();
  retiring_.clear();
  publisher_.reset();
}

}  // namespace stereod::daemon
