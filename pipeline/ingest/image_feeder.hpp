// The thread that drives a rig of images:// cameras: frame set k is file start + k of every
// camera's pattern, read together and pushed into each camera's appsrc with one PTS, so the rig's
// frame sets can only ever hold frames of one number (a decoder in each camera's branch turns the
// PNG or JPEG into raw video). Where one camera's file of a number is missing and another's is
// there, that number is skipped for all of them (counted in gaps(), logged): before, each camera
// read its files on its own (multifilesrc), a missing file made that camera start over, and the
// rig then paired frames of different numbers and published them as good (issue 15).
//
// A number at which no camera has a file is the end of the recording: the feeder starts over at
// the start numbers (loop) or ends every camera's stream. No file at all at the start is an error
// posted on the bus for the first camera that lacks one, so the rig fails and retries as for any
// source. Numbers go on across restarts of the rig.
#pragma once

#include <gst/gst.h>

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "ingest/camera_config.hpp"
#include "ingest/paced_feeder.hpp"

namespace stereod {

class ImageFeeder : private PacedFeeder {
 public:
  struct Camera {
    std::string name;
    std::string pattern;        // printf pattern with one integer conversion
    int start = 0;              // the first file's number
    GstElement* src = nullptr;  // its appsrc (owned by the pipeline)
  };

  // `rig` names the rig in log lines.
  ImageFeeder(std::string rig, FrameRate fps, bool loop);
  ~ImageFeeder() override;

  // Starts feeding `pipeline`, which has been set to PLAYING.
  void start(GstElement* pipeline, std::vector<Camera> cameras);
  // Stops and joins the thread; call before the pipeline is stopped.
  void stop();

  // Frame sets skipped because some camera's file of that number was missing or unreadable.
  std::uint64_t gaps() const { return gaps_.load(std::memory_order_relaxed); }
  // Frame sets skipped to keep up with the clock (reading fell behind).
  std::uint64_t skipped() const { return skipped_.load(std::memory_order_relaxed); }

 private:
  void feed(const Schedule& schedule) override;
  // The file of camera `c` for frame set k, read into a buffer; nullptr when it cannot be read
  // (`why` says why: "No such file or directory", ...).
  GstBuffer* read(const Camera& camera, std::int64_t k, std::string& path, std::string& why) const;
  void post_error(const Camera& camera, const std::string& message) const;
  // The cameras whose file of a number could not be read: how many, and the first one's.
  struct Missing {
    std::size_t count = 0;
    std::size_t first = 0;  // index in cameras_
    std::string path, why;
  };
  // Every camera's file of number next_k_ into `buffers` (nullptr where it cannot be read).
  Missing read_set(std::vector<GstBuffer*>& buffers) const;

  const std::string rig_;
  const bool loop_;
  std::vector<Camera> cameras_;
  std::int64_t next_k_ = 0;  // continues across restarts
  std::atomic<std::uint64_t> gaps_{0};
  std::atomic<std::uint64_t> skipped_{0};
};

}  // namespace stereod
