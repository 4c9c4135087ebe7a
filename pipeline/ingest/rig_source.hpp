// RigSource: one rig's cameras in one GStreamer pipeline (one clock), synchronised into FrameSets.
//
// Each camera is a bin in the pipeline (pipeline_description.hpp) ending in appsinks; frames go
// through FrameSync, and every complete set is handed to the caller's callback. A supervisor
// thread watches the pipeline's bus: a camera that errors, cannot negotiate its caps, reaches end
// of stream while live, or stops delivering (stall timeout) is logged with its name and reason,
// and the whole rig pipeline is rebuilt after an exponential backoff (RestartPolicy) while other
// rigs, each with its own RigSource, run on untouched. Recordings loop (a flushing seek to the
// start) or end cleanly. Sequence numbers, per camera and per set, go on across restarts.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "frame.hpp"
#include "ingest/camera_config.hpp"
#include "ingest/frame_sync.hpp"
#include "ingest/realtime_clock.hpp"

namespace stereod {

class Backoff;
class CameraBranch;
class ImageFeeder;
class ReplayFeeder;
struct ReplayFrames;
class SyntheticFeeder;
class SyntheticScene;

enum class RigState {
  kStopped,     // not started, or stopped
  kStarting,    // pipeline built, waiting for every camera's first frame
  kRunning,     // every camera has delivered
  kRestarting,  // a source failed; waiting out the backoff
  kEnded,       // recordings reached their end (loop off)
};
const char* to_string(RigState state);

struct CameraStats {
  std::string name;
  std::uint64_t delivered = 0;  // frames handed to FrameSync
  std::uint64_t dropped = 0;    // lost before FrameSync (pool exhausted, color half unpaired)
};

struct RigStats {
  RigState state = RigState::kStopped;
  std::uint64_t failures = 0;           // faults seen (each followed by a restart)
  std::string last_error;               // "camera 'left' (v4l2:///dev/video0): reason"
  std::int64_t last_error_time_ns = 0;  // CLOCK_REALTIME
  std::vector<CameraStats> cameras;
  FrameSyncStats sync;
  // synthetic:// and replays: frames skipped to keep up with the clock.
  std::uint64_t synthetic_skipped = 0;
  // images://: frame sets skipped because a camera's file of that number was missing (counted
  // by the daemon as sync drops: the set could not be completed).
  std::uint64_t image_gaps = 0;
};

struct RigEvent {
  enum class Kind { kRunning, kFailed, kEnded };
  Kind kind = Kind::kRunning;
  std::string rig;
  std::string camera;                     // the camera at fault; empty when not known
  std::string message;                    // what happened, with camera name and URI
  std::chrono::milliseconds retry_in{0};  // kFailed: when the rig restarts
};

struct RigSourceOptions {
  // Where the cameras' frames are put (default: ordinary memory; the daemon gives page-locked
  // memory when its engine uploads from it).
  PixelAllocator allocate;
  // Frames of a camera the consumer may hold at once (e.g. the frame sets it has submitted to an
  // engine and not yet collected): the camera's frame pool has room for them on top of FrameSync's.
  int frames_held = 2;
};

class RigSource {
 public:
  // Called on a GStreamer streaming thread for each complete set, in order; it must not block
  // (hand the set on, e.g. Engine::submit) and must not call stop() (stats() is fine).
  using FrameSetCallback = std::function<void(FrameSet&& set)>;
  // Called on the rig's supervisor thread.
  using EventCallback = std::function<void(const RigEvent& event)>;

  // Throws std::invalid_argument listing every problem with the configuration (validate_rig),
  // or std::runtime_error when GStreamer cannot be initialised.
  RigSource(RigConfig config, FrameSetCallback on_set, EventCallback on_event = {},
            RigSourceOptions options = {});
  ~RigSource();  // stops
  RigSource(const RigSource&) = delete;
  RigSource& operator=(const RigSource&) = delete;

  // Builds and plays the pipeline on the supervisor thread and returns at once; problems are
  // reported through events, logs and stats.
  void start();
  // Stops the pipeline and the supervisor; returns once no callback can run any more.
  void stop();

  const RigConfig& config() const { return config_; }
  RigStats stats() const;

  // synthetic:// rigs: the scene both cameras are rendered from, so that a caller can render
  // the ground truth of a frame (CameraFrame::source_index); nullptr for other rigs and for
  // replaying ones (make_synthetic_scene(config()) makes the same scene).
  std::shared_ptr<const SyntheticScene> synthetic_scene() const;

 private:
  enum class Outcome { kStopped, kFault, kEnded, kRestartNow };
  struct Fault {
    int camera = -1;
    std::string reason;
  };

  struct Run;  // one build of the pipeline (rig_source.cpp)

  void supervise();
  // Builds, plays and watches the pipeline once; returns why it stopped (`fault` says which
  // camera failed and how).
  Outcome run_pipeline(Backoff& backoff, Fault& fault);
  // The steps of run_pipeline, in order.
  bool add_camera_bins(Run& run, Fault& fault);
  bool start_feeders(Run& run, Fault& fault);
  Outcome watch(Run& run, Backoff& backoff, Fault& fault);
  Outcome poll_bus(Run& run, bool& all_ended_now, Fault& fault);
  Outcome end_of_recordings(Run& run);
  Outcome check_progress(Run& run, Backoff& backoff, Fault& fault);
  void teardown(Run& run);
  void deliver(int camera, std::shared_ptr<CameraFrame> frame);
  std::string label(int camera) const;  // "camera 'left' (uri)"
  void set_state(RigState state);
  void emit(const RigEvent& event);
  bool wait_for_stop(std::chrono::milliseconds delay);

  const RigConfig config_;
  const bool recordings_;  // file:// or images:// cameras
  const FrameSetCallback on_set_;
  const EventCallback on_event_;
  RealtimeOffset offset_;
  std::vector<std::unique_ptr<CameraBranch>> branches_;
  std::shared_ptr<SyntheticScene> scene_;  // synthetic:// rigs
  std::unique_ptr<SyntheticFeeder> feeder_;
  std::unique_ptr<ImageFeeder> image_feeder_;    // rigs of images:// cameras
  std::unique_ptr<ReplayFeeder> replay_feeder_;  // replaying rigs (replay_source.hpp)
  std::shared_ptr<const ReplayFrames> replay_;   // their frames, once loaded

  mutable std::mutex sync_mutex_;
  FrameSync sync_;
  // Sets reach the callback in FrameSync's order: each waits for next_delivery_ to be its number.
  std::mutex deliver_mutex_;
  std::condition_variable deliver_turn_;
  std::uint64_t next_delivery_ = 0;

  mutable std::mutex state_mutex_;
  RigState state_ = RigState::kStopped;
  std::uint64_t failures_ = 0;
  std::string last_error_;
  std::int64_t last_error_time_ns_ = 0;

  std::mutex stop_mutex_;
  std::condition_variable stop_cv_;
  std::atomic<bool> stop_requested_{false};
  std::thread supervisor_;
};

}  // namespace stereod
