// The stereod daemon's lifecycle (docs/ARCHITECTURE.md "Data flow", "Threads of the daemon",
// "Reloads"): rigs deliver frame sets on their GStreamer threads, each pair of a rig submits its
// two frames to its engine (never blocking: a busy engine drops the set and counts it), the main
// loop takes finished results in order and hands them to the publisher, and a reload swaps in a
// new, fully validated configuration at a frame boundary, rebuilding only what changed.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
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
#include "gpu_assignment.hpp"
#include "ingest/frame_pool.hpp"
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
  void request_stop() {
    stop_requested_ = true;
    wake_->notify();
  }
  void request_reload(const std::string& why);

 private:
  // What wakes the main loop: a result ready in some pair's engine (the engines' on_result), a
  // stop or reload request, a finished configuration read. Shared with the engines' callbacks,
  // so it outlives an engine left computing at the stop deadline.
  struct Wake {
    std::mutex mutex;
    std::condition_variable cv;
    std::uint64_t count = 0;
    void notify() {
      {
        std::lock_guard<std::mutex> lock(mutex);
        ++count;
      }
      cv.notify_one();
    }
    std::uint64_t seen() {
      std::lock_guard<std::mutex> lock(mutex);
      return count;
    }
    // Until something was notified after `seen`, or `until`.
    void wait(std::uint64_t seen, std::chrono::steady_clock::time_point until) {
      std::unique_lock<std::mutex> lock(mutex);
      cv.wait_until(lock, until, [&] { return count != seen; });
    }
  };

  // A frame set submitted to a pair's engine and not yet collected. It holds the two frames the
  // engine reads (FrameInput::pinned: they stay unchanged until the result is polled), whose
  // camera names and capture times go into the header.
  struct PendingFrame {
    std::uint64_t sequence = 0;
    std::int64_t complete_ns = 0;
    std::int64_t submitted_ns = 0;
    // Both cameras' frames: the engine reads them in place (pinned), and the left one also feeds
    // the left image and colored points payloads.
    std::shared_ptr<const CameraFrame> left, right;
    std::shared_ptr<const CameraFrame> vertical;  // a trinocular pair's third camera, else null
    bool confidence = false;                      // the engine was asked for the confidence map
  };
  // Submitted frames in order, in a ring sized once (no allocation per frame).
  class PendingRing {
   public:
    void reserve(std::size_t capacity) { items_.resize(capacity); }
    bool empty() const { return count_ == 0; }
    bool full() const { return count_ == items_.size(); }
    PendingFrame& front() { return items_[head_]; }
    PendingFrame& push_back() {
      PendingFrame& f = items_[(head_ + count_++) % items_.size()];
      return f;
    }
    void pop_back() { items_[(head_ + --count_) % items_.size()] = {}; }
    void pop_front() {
      items_[head_] = {};  // the frames go back to their pools
      head_ = (head_ + 1) % items_.size();
      --count_;
    }

   private:
    std::vector<PendingFrame> items_;
    std::size_t head_ = 0, count_ = 0;
  };

  struct Pair {
    PairConfig config;
    int gpu_device = 0;  // where its engine runs (the CUDA engine)
    std::unique_ptr<Engine> engine;
    publish::DepthCalibration depth;                   // the camera model in the headers
    std::shared_ptr<const RectificationMap> left_map;  // null: the cameras are rectified
    int left_index = 0, right_index = 0;  // the cameras' places in the rig's frame sets
    int vertical_index = -1;              // a trinocular pair's vertical camera, else -1
    std::mutex mutex;                     // pending, generations, config.outputs
    bool warned_confidence = false;       // main loop only
    PendingRing pending;                  // submitted, not yet published
    // A pair of a color and a gray camera matches gray: the color frame's luma goes here.
    std::unique_ptr<FramePool> luma_pool;
    PixelAllocator allocate;
    // Engine parameter generation -> configuration generation, for the header.
    std::deque<std::pair<std::uint64_t, std::uint64_t>> generations;
    std::uint64_t engine_generation = 0;
    std::atomic<bool> result_ready{false};          // the engine said so; the main loop polls it
    std::atomic<std::uint64_t> busy_unrecorded{0};  // engine-busy drops not yet in the stats
    std::atomic<std::int64_t> last_result_ns{0};
    std::int64_t built_ns = 0;     // when it was made
    bool silent_reported = false;  // main loop only: its outage has been logged
    std::atomic<std::uint64_t> busy_logged{0};
    std::uint64_t publish_errors_logged = 0;  // main loop only
  };

  struct Rig {
    RigConfig config;
    std::unique_ptr<RigSource> source;
    bool pinned = false;     // its frames are in page-locked memory (FrameInput::pinned)
    std::mutex pairs_mutex;  // the ingest callback reads `pairs`
    std::vector<std::shared_ptr<Pair>> pairs;
    std::vector<std::shared_ptr<Pair>> submitting;  // on_frame_set's copy of `pairs`
    std::uint64_t sync_dropped_seen = 0;            // FrameSync drops already counted in the stats
    std::atomic<bool> failing{false};
    std::atomic<std::int64_t> running_since_ns{0};  // when it last reported running
    std::string last_error;
  };

  bool start();
  void loop();
  void shutdown();

  // A pair or rig of `config` (whose generation it is), not yet running; throws when its engine,
  // calibration or source cannot be made. `gpus`: the pairs' devices.
  std::shared_ptr<Pair> build_pair(const PairConfig& pair, const RigConfig& rig,
                                   const DaemonConfig& config, std::uint64_t generation,
                                   const GpuAssignment& gpus);
  std::unique_ptr<Rig> build_rig(const RigConfig& rig, const DaemonConfig& config,
                                 std::uint64_t generation, const GpuAssignment& gpus);
  // True when `config`'s engine is the CUDA engine (frames then go to page-locked memory).
  bool uses_cuda(const DaemonConfig& config) const;
  void start_rig(Rig& rig);
  void on_frame_set(Rig& rig, FrameSet&& set);
  // One pair's frames of `set` to its engine; nothing when one of them is missing or failed.
  void submit_set(Rig& rig, Pair& pair, const FrameSet& set);
  // `frame` (color) replaced by its luma in a buffer of the pair's pool; false when there is no
  // buffer (counted as an engine-busy drop) or no memory (an error).
  bool replace_with_luma(Pair& pair, std::uint64_t sequence,
                         std::shared_ptr<const CameraFrame>& frame);
  void on_rig_event(Rig& rig, const RigEvent& event);

  // Publishes every finished result; true when any was found.
  bool collect(Pair& pair);
  struct Collected;  // daemon.cpp
  // The result's frame set taken off the pair's pending ones, described for its header.
  Collected match_pending(Pair& pair, const EngineResult& result);
  void publish_result(Pair& pair, const EngineResult& result, Collected collected);
  // Collects the pairs whose engines said a result is ready, and the retiring pairs.
  void collect_ready();
  // An engine-busy drop, counted on the ingest thread (no lock another pair takes)...
  void record_busy(Pair& pair, std::uint64_t sequence);
  // ...and given to the stats by the main loop.
  void record_busy_drops(Pair& pair);
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
  // The steps of apply (daemon.cpp).
  struct ReloadPlan;
  struct ReloadBuilt;
  ReloadPlan plan_reload(const DaemonConfig& next, ConfigDiff diff) const;
  ReloadBuilt build_reload(const DaemonConfig& next, const ReloadPlan& plan);
  void retire_rigs(const ReloadPlan& plan);
  void update_pairs(const ReloadPlan& plan,
                    const std::map<std::string, std::shared_ptr<Pair>>& rebuilt);
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
  GpuAssignment gpus_;                           // pair -> CUDA device
  std::map<int, std::shared_ptr<EngineGroup>> engine_groups_;  // per device
  std::shared_ptr<Wake> wake_ = std::make_shared<Wake>();
  std::vector<std::shared_ptr<Pair>> collecting_;  // main loop's scratch list of pairs
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
