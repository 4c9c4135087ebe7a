// The stereod daemon's lifecycle (docs/ARCHITECTURE.md "Data flow", "Threads of the daemon",
// "Reloads"): rigs deliver frame sets on their GStreamer threads, each pair of a rig submits its
// two frames to its engine (never blocking: a busy engine drops the set and counts it), the main
// loop takes finished results in order and hands them to the publisher, and a reload swaps in a
// new, fully validated configuration at a frame boundary, rebuilding only what changed.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
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

  // After run(): true when engines were still computing at the stop deadline and were left
  // running; the process must then end without destroying them (std::quick_exit), which would
  // wait for their frames.
  bool abandoned_work() const { return abandoned_; }

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
    // The left camera's frame, kept when the pair sends the left image or colored points.
    std::shared_ptr<const CameraFrame> left;
    bool confidence = false;  // the engine was asked for the confidence map
  };

  struct Pair {
    PairConfig config;
    std::unique_ptr<Engine> engine;
    publish::DepthCalibration depth;                   // the camera model in the headers
    std::shared_ptr<const RectificationMap> left_map;  // null: the cameras are rectified
    int left_index = 0, right_index = 0;  // the cameras' places in the rig's frame sets
    std::mutex mutex;                     // pending, generations, config.outputs
    bool warned_confidence = false;       // main loop only
    std::deque<PendingFrame> pending;     // submitted, not yet published
    // Engine parameter generation -> configuration generation, for the header.
    std::deque<std::pair<std::uint64_t, std::uint64_t>> generations;
    std::uint64_t engine_generation = 0;
    std::atomic<std::int64_t> last_result_ns{0};
    std::int64_t built_ns = 0;     // when it was made
    bool silent_reported = false;  // main loop only: its outage has been logged
    std::atomic<std::uint64_t> busy_logged{0};
    std::uint64_t publish_errors_logged = 0;  // main loop only
  };

  struct Rig {
    RigConfig config;
    std::unique_ptr<RigSource> source;
    std::mutex pairs_mutex;  // the ingest callback reads `pairs`
    std::vector<std::shared_ptr<Pair>> pairs;
    std::uint64_t sync_dropped_seen = 0;  // FrameSync drops already counted in the stats
    std::atomic<bool> failing{false};
    std::atomic<std::int64_t> running_since_ns{0};  // when it last reported running
    std::string last_error;
  };

  bool start();
  void loop();
  void shutdown();

  // A pair or rig of `config` (whose generation it is), not yet running; throws when its engine,
  // calibration or source cannot be made.
  std::shared_ptr<Pair> build_pair(const PairConfig& pair, const RigConfig& rig,
                                   const DaemonConfig& config, std::uint64_t generation);
  std::unique_ptr<Rig> build_rig(const RigConfig& rig, const DaemonConfig& config,
                                 std::uint64_t generation);
  void start_rig(Rig& rig);
  void on_frame_set(Rig& rig, FrameSet&& set);
  void on_rig_event(Rig& rig, const RigEvent& event);

  // Publishes every finished result; true when any was found.
  bool collect(Pair& pair);
  void drain(std::vector<std::shared_ptr<Pair>>& pairs,
             std::chrono::steady_clock::time_point deadline);
  void count_sync_drops();
  // Stops every rig by `deadline`; a rig that cannot stop by then is left behind (abandoned_).
  void stop_rigs(std::chrono::steady_clock::time_point deadline);

  // A reload: the file is read and checked on a thread of its own (start_reload), the result
  // applied by the main loop once it is there (finish_reload).
  struct Loading {
    std::thread thread;
    std::atomic<bool> done{false};
    std::optional<DaemonConfig> config;  // when valid
    std::vector<ConfigIssue> issues;     // when refused
    std::string error;                   // when it could not be read at all
  };
  void start_reload();
  void finish_reload();
  // All or nothing: throws (the daemon unchanged) when anything of `next` cannot be built.
  void apply(DaemonConfig next);
  void retune(Pair& pair);
  // A publisher for `next` in publisher_'s place; returns the old one, still open, for the caller
  // to stop. Throws when the new one cannot be made, publisher_ then serving as before (or, when
  // even rebinding the old address failed, null, with publisher_error_ saying why).
  std::unique_ptr<publish::Publisher> replace_publisher(const DaemonConfig& next);

  static publish::PublisherOptions publisher_options(const DaemonConfig& config);
  std::string status_line() const;
  // Pairs of running rigs that have published nothing for kSilentNs: the status names them, the
  // log says so once per outage ("pair name" -> seconds).
  std::vector<std::pair<std::string, double>> silent_pairs() const;
  void report_silent_pairs();
  bool healthy() const;
  std::string engine_kind(const DaemonConfig& config) const;

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
  std::string publisher_error_;  // why there is no publisher, while there is none

  std::atomic<bool> stop_requested_{false};
  bool abandoned_ = false;
  std::atomic<bool> reload_requested_{false};
  std::unique_ptr<Loading> loading_;  // main loop only
  bool reload_again_ = false;         // asked again while loading
  std::mutex reload_mutex_;
  std::string reload_reason_;
};

}  // namespace stereod::daemon
