#include "daemon.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <sstream>
#include <thread>

#include "logging.hpp"
#include "publish/engine_frame.hpp"
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
}

std::string Daemon::engine_kind() const {
  return options_.engine.empty() ? config_.engine : options_.engine;
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
    publisher_ = std::make_unique<publish::Publisher>(publisher_options(), stats_);
  } catch (const std::exception& e) {
    spdlog::critical("cannot publish: {}", e.what());
    notifier_.status(std::string("cannot publish: ") + e.what());
    return false;
  }
  spdlog::info("publishing on {}", publisher_->endpoint());
  try {
    for (const auto& rc : config_.rigs) rigs_.push_back(build_rig(rc));
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
    for (auto& rig : rigs_) {
      for (auto& p : rig->pairs) collect(*p);
    }
    std::this_thread::sleep_for(milliseconds(5));
  }
  notifier_.ready(status_line());
  spdlog::info("ready: {}", status_line());
  return true;
}

std::shared_ptr<Daemon::Pair> Daemon::build_pair(const PairConfig& pc, const RigConfig& rig) {
  auto p = std::make_shared<Pair>();
  p->config = pc;
  p->left_index = index_of(rig, pc.left);
  p->right_index = index_of(rig, pc.right);
  if (pc.trinocular) p->vertical_index = index_of(rig, pc.trinocular->vertical);
  const CameraConfig& cam = rig.cameras[static_cast<std::size_t>(p->left_index)];
  EngineOptions eo;
  eo.width = cam.width;
  eo.height = cam.height;
  eo.stereo = pc.stereo;
  eo.background = pc.background;
  eo.inflight = config_.gpu.inflight;
  eo.gpu_device = config_.gpu.device;
  eo.zero_copy = config_.gpu.zero_copy;
  if (pc.calibration.kind != CalibrationConfig::Kind::kNone) {
    auto cal = std::make_shared<StereoCalibration>(load_calibration(pc.calibration));
    check_calibration_size(*cal, pc.name, cam.width, cam.height);
    eo.left_map = std::shared_ptr<const RectificationMap>(cal, &cal->left);
    eo.right_map = std::shared_ptr<const RectificationMap>(cal, &cal->right);
    p->depth = {cal->focal_px, cal->baseline_m, cal->doffs_px};
  }
  const std::string kind = engine_kind();
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
  p->generations.emplace_back(0, generation_);
  stats_->add_pair(pc.name);
  return p;
}

std::unique_ptr<Daemon::Rig> Daemon::build_rig(const RigConfig& rc) {
  auto rig = std::make_unique<Rig>();
  rig->config = rc;
  for (const auto& pc : config_.pairs) {
    if (pc.rig == rc.name) rig->pairs.push_back(build_pair(pc, rc));
  }
  Rig* raw = rig.get();
  rig->source = std::make_unique<RigSource>(
      rc, [this, raw](FrameSet&& set) { on_frame_set(*raw, std::move(set)); },
      [this, raw](const RigEvent& e) { on_rig_event(*raw, e); });
  return rig;
}

void Daemon::start_rig(Rig& rig) {
  rig.sync_dropped_seen = 0;
  rig.source->start();
}

void Daemon::on_rig_event(Rig& rig, const RigEvent& e) {
  switch (e.kind) {
    case RigEvent::Kind::kRunning:
      if (rig.failing.exchange(false)) spdlog::info("rig '{}' is running again", rig.config.name);
      break;
    case RigEvent::Kind::kFailed: {
      rig.failing = true;
      spdlog::error("rig '{}': {} (restarting in {} ms)", rig.config.name, e.message,
                    e.retry_in.count());
      std::lock_guard<std::mutex> lock(rig.pairs_mutex);
      for (const auto& p : rig.pairs) stats_->record_error(p->config.name, e.message);
      break;
    }
    case RigEvent::Kind::kEnded:
      spdlog::info("rig '{}': its recordings ended", rig.config.name);
      break;
  }
}

// On a GStreamer streaming thread: hand the set to every pair of the rig, never blocking.
void Daemon::on_frame_set(Rig& rig, FrameSet&& set) {
  // After SIGTERM the frames in flight are finished, new ones are not taken: nothing collects
  // results any more, so they would only fill the slots and be miscounted as "engine busy".
  if (stop_requested_) return;
  std::vector<std::shared_ptr<Pair>> pairs;
  {
    std::lock_guard<std::mutex> lock(rig.pairs_mutex);
    pairs = rig.pairs;
  }
  for (const auto& pp : pairs) {
    Pair& p = *pp;
    const auto& left = set.frames[static_cast<std::size_t>(p.left_index)];
    const auto& right = set.frames[static_cast<std::size_t>(p.right_index)];
    if (!left || !right || left->status != FrameStatus::kOk || right->status != FrameStatus::kOk) {
      continue;
    }
    const CameraFrame* vertical = nullptr;
    if (p.vertical_index >= 0) {
      const auto& v = set.frames[static_cast<std::size_t>(p.vertical_index)];
      if (!v || v->status != FrameStatus::kOk) continue;
      vertical = v.get();
    }
    FrameInput in;
    in.sequence = set.sequence;
    in.capture_time_ns = left->capture_time_ns;
    in.left = left->gray.view();
    in.right = right->gray.view();
    if (!left->color.empty() && !right->color.empty()) {
      in.left_color = view_of(left->color);
      in.right_color = view_of(right->color);
    }
    if (vertical) {
      in.vertical = vertical->gray.view();
      if (!in.left_color.empty() && !vertical->color.empty()) {
        in.vertical_color = view_of(vertical->color);
      }
    }
    PendingFrame pending;
    pending.sequence = set.sequence;
    pending.cameras = {{left->camera, left->capture_time_ns},
                       {right->camera, right->capture_time_ns}};
    if (vertical) pending.cameras.push_back({vertical->camera, vertical->capture_time_ns});
    pending.complete_ns = set.complete_time_ns;
    pending.source_index = left->source_index;
    pending.submitted_ns = now_ns();
    {
      std::lock_guard<std::mutex> lock(p.mutex);
      p.pending.push_back(std::move(pending));
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
      stats_->record_drop(p.config.name, stats::DropReason::kEngineBusy);
      if (p.busy_logged++ % 1000 == 0) {
        spdlog::warn("pair '{}': engine busy, frame set {} dropped (logged once per 1000)",
                     p.config.name, set.sequence);
      }
    }
  }
}

bool Daemon::collect(Pair& p) {
  bool any = false;
  while (auto r = p.engine->poll(std::chrono::nanoseconds(0))) {
    any = true;
    p.last_result_ns = now_ns();
    publish::FrameInfo info;
    info.pair = p.config.name;
    info.engine = std::string(p.engine->name());
    info.min_disparity = 0;
    info.max_disparity = p.config.stereo.max_disparity;
    info.calibration = p.depth;
    {
      std::lock_guard<std::mutex> lock(p.mutex);
      while (!p.pending.empty() && p.pending.front().sequence != r->sequence) p.pending.pop_front();
      if (!p.pending.empty()) {
        const PendingFrame& f = p.pending.front();
        info.cameras = f.cameras;
        info.complete_ns = f.complete_ns;
        info.source_index = f.source_index;
        std::int64_t earliest = f.cameras.empty() ? 0 : f.cameras.front().capture_ns;
        for (const auto& c : f.cameras) earliest = std::min(earliest, c.capture_ns);
        if (f.complete_ns > 0 && earliest > 0) {
          info.latency.push_back({"sync", static_cast<double>(f.complete_ns - earliest) / 1e6});
        }
        if (f.complete_ns > 0) {
          info.latency.push_back(
              {"queue", static_cast<double>(f.submitted_ns - f.complete_ns) / 1e6});
        }
        p.pending.pop_front();
      }
      // The configuration generation the frame's parameters came from.
      while (p.generations.size() > 1 && p.generations[1].first <= r->params_generation) {
        p.generations.pop_front();
      }
      info.config_generation = p.generations.front().second;
    }
    if (!r->ok) {
      spdlog::error("pair '{}', frame set {}: {}", p.config.name, r->sequence, r->error);
    }
    publisher_->publish(publish::frame_from_result(*r, std::move(info)));
  }
  return any;
}

void Daemon::count_sync_drops() {
  for (auto& rig : rigs_) {
    const std::uint64_t dropped = rig->source->stats().sync.dropped();
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

void Daemon::loop() {
  auto next_watchdog = Clock::now();
  auto next_status = Clock::now() + std::chrono::seconds(1);
  while (!stop_requested_) {
    bool any = false;
    for (auto& rig : rigs_) {
      std::vector<std::shared_ptr<Pair>> pairs;
      {
        std::lock_guard<std::mutex> lock(rig->pairs_mutex);
        pairs = rig->pairs;
      }
      for (auto& p : pairs) any = collect(*p) || any;
    }
    // Replaced pairs: publish what they still finish, then let them go.
    for (auto it = retiring_.begin(); it != retiring_.end();) {
      collect(**it);
      it = (*it)->engine->in_flight() == 0 ? retiring_.erase(it) : std::next(it);
    }
    if (reload_requested_.exchange(false)) reload();
    const auto now = Clock::now();
    if (now >= next_status) {
      count_sync_drops();
      notifier_.status(status_line());
      next_status = now + std::chrono::seconds(1);
    }
    if (notifier_.watchdog_interval().count() > 0 && now >= next_watchdog) {
      if (healthy()) notifier_.watchdog();
      next_watchdog = now + notifier_.watchdog_interval();
    }
    if (!any) std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
}

bool Daemon::healthy() const {
  const std::int64_t now = now_ns();
  for (const auto& rig : rigs_) {
    for (const auto& p : rig->pairs) {
      const std::int64_t last = p->last_result_ns.load();
      if (p->engine->in_flight() > 0 && last > 0 && now - last > kStuckNs) return false;
    }
  }
  return true;
}

publish::PublisherOptions Daemon::publisher_options() const {
  publish::PublisherOptions o = config_.publish;
  o.pairs = static_cast<int>(config_.pairs.size());  // buffers scale with the pairs sharing it
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
  if (!last_reload_error_.empty()) out << "; reload failed: " << last_reload_error_;
  return out.str();
}

void Daemon::reload() {
  std::string why;
  {
    std::lock_guard<std::mutex> lock(reload_mutex_);
    why = reload_reason_;
  }
  spdlog::info("reloading {} ({})", config_.file, why);
  notifier_.reloading();
  try {
    DaemonConfig next = load_daemon_config(config_.file);
    apply(std::move(next));
    last_reload_error_.clear();
  } catch (const ConfigError& e) {
    // Keep running on the configuration we have.
    for (const auto& issue : e.issues()) spdlog::error("reload rejected: {}", issue.to_string());
    last_reload_error_ = e.issues().empty() ? e.what() : e.issues().front().to_string();
  } catch (const std::exception& e) {
    spdlog::error("reload failed: {}; still running on the previous configuration", e.what());
    last_reload_error_ = e.what();
  }
  notifier_.ready(status_line());
}

void Daemon::apply(DaemonConfig next) {
  if (!options_.engine.empty()) next.engine = options_.engine;
  const ConfigDiff d = diff_configs(config_, next);
  if (d.empty()) {
    spdlog::info("reload: no changes");
    return;
  }
  config_ = std::move(next);
  ++generation_;
  spdlog::info("reload (generation {}): {}", generation_, d.summary());

  if (d.log_level && options_.log_level.empty()) set_log_level(config_.log_level);
  if (d.publisher_rebuilt) {
    // A new socket: subscribers reconnect (ZeroMQ does it by itself).
    publisher_->stop();
    publisher_ = std::make_unique<publish::Publisher>(publisher_options(), stats_);
    spdlog::info("publishing on {}", publisher_->endpoint());
  } else {
    if (d.publisher_outputs) publisher_->set_outputs(config_.publish.outputs);
    publisher_->set_pairs(static_cast<int>(config_.pairs.size()));
  }

  auto contains = [](const std::vector<std::string>& v, const std::string& s) {
    return std::find(v.begin(), v.end(), s) != v.end();
  };
  // Rigs that go away or change: stop their pipelines, let their pairs finish.
  for (auto it = rigs_.begin(); it != rigs_.end();) {
    Rig& rig = **it;
    if (contains(d.rigs_removed, rig.config.name) || contains(d.rigs_rebuilt, rig.config.name)) {
      rig.source->stop();
      for (auto& p : rig.pairs) {
        retiring_.push_back(p);
        if (!config_.rig(rig.config.name) || !contains(d.pairs_rebuilt, p->config.name)) {
          stats_->remove_pair(p->config.name);
        }
      }
      it = rigs_.erase(it);
    } else {
      ++it;
    }
  }
  // Pairs of the remaining rigs: retune in place, rebuild (all of them when the engine kind or the
  // GPU settings changed), add or remove.
  auto rebuild = [&](const std::string& name) {
    return d.engines_rebuilt || contains(d.pairs_rebuilt, name);
  };
  for (auto& rig : rigs_) {
    std::vector<std::shared_ptr<Pair>> pairs;
    for (auto& p : rig->pairs) {
      const std::string& name = p->config.name;
      if (contains(d.pairs_removed, name) || rebuild(name)) {
        retiring_.push_back(p);
        if (contains(d.pairs_removed, name)) stats_->remove_pair(name);
        continue;
      }
      pairs.push_back(p);
      if (!contains(d.pairs_retuned, name)) continue;
      for (const auto& pc : config_.pairs) {
        if (pc.name != name) continue;
        // Frames submitted from now on use the new parameters: no frame is lost.
        p->engine->set_params(pc.stereo, pc.background);
        std::lock_guard<std::mutex> lock(p->mutex);
        p->config = pc;
        p->generations.emplace_back(++p->engine_generation, generation_);
      }
    }
    for (const auto& pc : config_.pairs) {
      if (pc.rig != rig->config.name || !rebuild(pc.name)) continue;
      pairs.push_back(build_pair(pc, rig->config));
    }
    std::lock_guard<std::mutex> lock(rig->pairs_mutex);
    rig->pairs = std::move(pairs);
  }
  // New and rebuilt rigs (with their pairs).
  for (const auto& rc : config_.rigs) {
    bool running = false;
    for (const auto& rig : rigs_) running = running || rig->config.name == rc.name;
    if (running) continue;
    rigs_.push_back(build_rig(rc));
    start_rig(*rigs_.back());
  }
}

void Daemon::drain(std::vector<std::shared_ptr<Pair>>& pairs, std::chrono::milliseconds limit) {
  const auto deadline = Clock::now() + limit;
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

void Daemon::shutdown() {
  if (rigs_.empty() && !publisher_) return;
  notifier_.stopping();
  // No new frames, then the frames in flight are finished and sent, then the socket closes.
  for (auto& rig : rigs_) rig->source->stop();
  std::vector<std::shared_ptr<Pair>> all = retiring_;
  for (auto& rig : rigs_) all.insert(all.end(), rig->pairs.begin(), rig->pairs.end());
  if (publisher_) drain(all, milliseconds(1200));
  if (publisher_) publisher_->stop();
  // What the run amounted to, per pair, for the journal.
  if (stats_) {
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
