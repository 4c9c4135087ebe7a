// The stereod daemon's lifecycle (DESIGN.md "Data flow", "Service behaviour"): rigs deliver frame
// sets on their GStreamer threads, each pair of a rig submits its two frames to its engine (never
// blocking: a busy engine drops the set and counts it), the main loop takes finished results in
// order and hands them to the publisher, and a reload swaps in a new, fully validated
// configuration at a frame boundary, rebuilding only what changed.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "daemon_config.hpp"
#include "engine.hpp"
#include "ingest/rig_source.hpp"
#include "publish/publisher.hpp"
#include "stats/aggregator.hpp"
#include "systemd_notify.hpp"

namespace stereod::daemon {

struct Options {
  std::string config_file;
  std::string engine;     // overrides the file's engine: when set
  std::string log_level;  // overrides the file's level when set
};

class Daemon {
 public:
  explicit Daemon(Options options);
  ~Daemon();

  // Runs until request_stop(); returns the process exit code. Throws nothing: start-up failures
  // are logged and give a non-zero code.
  int run();

  // Safe from any thread (the signal thread, the config watcher).
  void request_stop() { stop_requested_ = true; }
  void request_reload(const std::string& why);

 private:
  struct PendingFrame {
    std::uint64_t sequence = 0;
    std::vector<publish::CameraTime> cameras;
    std::int64_t complete_ns = 0;
    std::int64_t source_index = -1;
    std::int64_t submitted_ns = 0;
  };

  struct Pair {
    PairConfig config;
    std::unique_ptr<Engine> engine;
    publish::DepthCalibration depth;
    int left_index = 0, right_index = 0;  // the cameras' places in the rig's frame sets
    int vertical_index = -1;              // a trinocular pair's vertical camera, else -1
    std::mutex mutex;                     // pending, generations
    std::deque<PendingFrame> pending;     // submitted, not yet published
    // Engine parameter generation -> configuration generation, for the header.
    std::deque<std::pair<std::uint64_t, std::uint64_t>> generations;
    std::uint64_t engine_generation = 0;
    std::atomic<std::int64_t> last_result_ns{0};
    std::atomic<std::uint64_t> busy_logged{0};
  };

  struct Rig {
    RigConfig config;
    std::unique_ptr<RigSource> source;
    std::mutex pairs_mutex;  // the ingest callback reads `pairs`
    std::vector<std::shared_ptr<Pair>> pairs;
    std::uint64_t sync_dropped_seen = 0;  // FrameSync drops already counted in the stats
    std::atomic<bool> failing{false};
    std::string last_error;
  };

  bool start();
  void loop();
  void shutdown();

  std::shared_ptr<Pair> build_pair(const PairConfig& config, const RigConfig& rig);
  std::unique_ptr<Rig> build_rig(const RigConfig& config);
  void start_rig(Rig& rig);
  void on_frame_set(Rig& rig, FrameSet&& set);
  void on_rig_event(Rig& rig, const RigEvent& event);

  // Publishes every finished result; true when any was found.
  bool collect(Pair& pair);
  void drain(std::vector<std::shared_ptr<Pair>>& pairs, std::chrono::milliseconds limit);
  void count_sync_drops();

  void reload();
  void apply(DaemonConfig next);

  publish::PublisherOptions publisher_options() const;
  std::string status_line() const;
  bool healthy() const;
  std::string engine_kind() const;

  Options options_;
  SystemdNotifier notifier_;
  DaemonConfig config_;
  std::uint64_t generation_ = 1;
  std::shared_ptr<stats::StatsAggregator> stats_;
  std::unique_ptr<publish::Publisher> publisher_;
  std::vector<std::unique_ptr<Rig>> rigs_;
  std::vector<std::shared_ptr<Pair>> retiring_;  // replaced pairs whose last results are pending
  std::string engine_name_;                      // what make_engine gave
  std::string last_reload_error_;

  std::atomic<bool> stop_requested_{false};
  std::atomic<bool> reload_requested_{false};
  std::mutex reload_mutex_;
  std::string reload_reason_;
};

}  // namespace stereod::daemon
