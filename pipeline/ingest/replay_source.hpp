// Replay: a rig whose frames are made once, at start-up, and then served from memory in a loop at
// the configured rate, so that what the daemon spends per frame is measured without the cost of
// producing frames (docs/CONFIG.md "Replay"):
//
//   synthetic://left?seed=1&replay=90     the scene's frames 0..89, rendered once
//   images:///data/left_%06d.png?replay=90 files start..start+89, decoded once (pngdec/jpegdec,
//                                          scaled and converted as the live images:// path does)
//
// Each camera gets its frames in the format it delivers (GRAY8, or RGB for color cameras) at its
// size, and the frames are pushed into the rig's pipeline through one appsrc per camera, wrapped
// without a copy: from there on they take the path of any camera (appsink, the copy into the
// frame pool, FrameSync). Every frame is pushed with a fresh PTS on the rate's grid, so capture
// times go on increasing across loops; CameraFrame::source_index says which frame it was (the
// scene's index, or the file's number).
//
// Rigs of one process with the same sources share the frames (a registry keyed by what the frames
// depend on): 32 rigs of one synthetic scene hold its frames once.
#pragma once

#include <gst/gst.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "ingest/camera_config.hpp"
#include "ingest/paced_feeder.hpp"

namespace stereod {

struct ReplayFrames {
  struct Camera {
    int width = 0;
    int height = 0;
    int channels = 1;                               // 1: GRAY8, 3: RGB
    std::vector<std::vector<std::uint8_t>> frames;  // packed rows
  };
  std::vector<Camera> cameras;      // in the rig's camera order
  std::vector<std::int64_t> index;  // per frame: the source's frame number
  std::size_t bytes() const;
};

// The rig's frames, made once and shared by every caller with the same sources. `cancelled` is
// asked between frames (a stop while loading): nullptr when it said yes. Throws
// std::runtime_error naming the camera and the file when a frame cannot be made (no image file at
// all, an unreadable or undecodable one).
std::shared_ptr<const ReplayFrames> load_replay(const RigConfig& rig,
                                                const std::function<bool()>& cancelled);

// The thread that serves a rig's replayed frames: frame k of the loop to every camera's appsrc at
// once, with one PTS, at the configured rate. `loop` false: the frames once, then end of stream.
class ReplayFeeder : private PacedFeeder {
 public:
  ReplayFeeder(FrameRate fps, bool loop);
  ~ReplayFeeder() override;

  // Starts feeding `pipeline` (set to PLAYING): `sources[i]` is camera i's appsrc.
  void start(GstElement* pipeline, std::shared_ptr<const ReplayFrames> frames,
             std::vector<GstElement*> sources);
  // Stops and joins the thread; call before the pipeline is stopped.
  void stop();

  // Frames pushed, and frames skipped to keep up with the clock.
  std::uint64_t pushed() const { return pushed_.load(std::memory_order_relaxed); }
  std::uint64_t skipped() const { return skipped_.load(std::memory_order_relaxed); }

 private:
  void feed(const Schedule& schedule) override;

  const bool loop_;
  std::shared_ptr<const ReplayFrames> frames_;
  std::vector<GstElement*> sources_;  // references held
  std::uint64_t next_ = 0;            // position in the loop; continues across restarts
  std::atomic<std::uint64_t> pushed_{0};
  std::atomic<std::uint64_t> skipped_{0};
};

}  // namespace stereod
