// What ingest needs to know about each camera and rig, and the checks that can be made before any
// pipeline runs. The daemon's YAML loader fills these structs and reports the issues returned here
// against its own file positions (an issue names the camera and the key).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace stereod {

// A frame rate as GStreamer caps want it (30000/1001 stays exact).
struct FrameRate {
  int num = 30;
  int den = 1;

  double hz() const { return static_cast<double>(num) / den; }
  std::int64_t interval_ns() const;  // one frame, rounded down
  std::string to_string() const;     // "30/1"
};

// "30", "29.97" (becomes 30000/1001) or "30000/1001". Throws std::invalid_argument saying what
// is wrong.
FrameRate parse_frame_rate(const std::string& text);

// Names of cameras, rigs and pairs: 1 to kMaxNameLength letters, digits, '_', '-' or '.' (they
// name topics, header fields, log lines and files a subscriber saves; the wire protocol carries
// names of up to 256 bytes).
constexpr std::size_t kMaxNameLength = 256;
// "" for a good name, else what is wrong with it.
std::string name_problem(const std::string& name);

struct CameraConfig {
  std::string name;  // unique within the configuration; names the camera in every message
  std::string uri;   // source URI (source_uri.hpp lists the schemes)
  int width = 640;   // delivered size: the source is scaled to it inside GStreamer
  int height = 480;
  FrameRate fps;
  // What to ask the device for before conversion, as a GStreamer format name ("YUY2", "NV12",
  // "GRAY8", ...) or "MJPG" for motion JPEG; empty lets GStreamer choose. v4l2:// only.
  std::string source_format;
  bool color = false;  // also deliver 8-bit RGB (the background model wants it)
  // Color cameras: "UYVY" or "NV12" takes the frames in that format (GStreamer converts only when
  // the source delivers another) and leaves their conversion to RGB to the pair's engine, on the
  // GPU with the CUDA engine (yuv.hpp); empty: GStreamer converts every frame to RGB.
  std::string raw_format;
  bool loop = true;  // file:// and images://: start over at the end; false: end cleanly
};

// Restarting a rig whose source failed: exponential backoff from `initial` up to `max`, back to
// `initial` once the restarted rig has delivered frames for `healthy_after`.
struct RestartPolicy {
  std::chrono::milliseconds initial{1000};
  std::chrono::milliseconds max{30000};
  std::chrono::milliseconds healthy_after{10000};
  // A camera that delivers nothing for this long (after the first frame, or after start-up when
  // none came) counts as failed; 0 disables the check.
  std::chrono::milliseconds stall_timeout{5000};
};

// The cameras that share one GStreamer pipeline (and so one clock).
struct RigConfig {
  std::string name;
  std::vector<CameraConfig> cameras;
  // Frames of one set lie within this of each other; negative: half the shortest frame interval.
  std::int64_t sync_tolerance_ns = -1;
  // Frames waiting for their partners, per camera, before the oldest is dropped.
  int sync_max_pending = 4;
  RestartPolicy restart;

  std::int64_t effective_sync_tolerance_ns() const;
};

struct IngestIssue {
  std::string camera;  // camera (or rig) the problem is about
  std::string key;     // "uri", "width", ... ; empty when it is about the whole camera or rig
  std::string message;

  std::string to_string() const;  // "camera 'left': uri: ..."
};

// Every problem with one camera: URI syntax and options, size, rate, format. Empty when valid.
std::vector<IngestIssue> validate_camera(const CameraConfig& camera);

// Every problem with a rig: its cameras (as above), unique names, sources that cannot share a
// rig (live cameras with video files; synthetic cameras with anything else), tolerance.
std::vector<IngestIssue> validate_rig(const RigConfig& rig);

// The two cameras of a stereo pair must deliver the same size: "" when they do, otherwise the
// message for a start-up error naming both cameras and their sizes.
std::string check_pair_sizes(const CameraConfig& left, const CameraConfig& right);

// How many frames a rig replays from memory (its cameras' `replay` option: synthetic:// and
// images://, replay_source.hpp); 0 when it does not replay.
int replay_count(const RigConfig& rig);
// The most a rig's replayed frames may hold in memory; validate_rig refuses more.
constexpr std::uint64_t kMaxReplayBytes = 8ull << 30;

// Joins issues into one message, one per line.
std::string to_string(const std::vector<IngestIssue>& issues);

}  // namespace stereod
