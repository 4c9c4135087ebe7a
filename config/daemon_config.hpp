// The daemon's configuration (docs/CONFIG.md is the reference): cameras, rigs, pairs
// with their stereo and background parameters, publishing, GPU, logging. Loaded from one YAML
// file; every problem is a ConfigIssue with file, line, column and key, and nothing about a bad
// file ever crashes the loader. A loaded DaemonConfig is immutable: a reload builds a new one and
// swaps it in whole.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "background/background_params.hpp"
#include "ingest/camera_config.hpp"
#include "publish/protocol.hpp"
#include "publish/publisher_options.hpp"
#include "rectify/calibration.hpp"
#include "stereo/params.hpp"
#include "trinocular/fusion.hpp"
#include "yaml_reader.hpp"

namespace stereod {

// The camera model of a pair whose cameras deliver rectified images (calibration: {rectified:
// ...}): what the frame headers carry so that subscribers can compute depth and points.
struct RectifiedModel {
  double fx = 0;             // focal length, pixels
  std::optional<double> fy;  // default fx
  std::optional<double> cx;  // default (width - 1) / 2
  std::optional<double> cy;  // default (height - 1) / 2
  double baseline = 0;       // metres
  double doffs = 0;          // cx_left - cx_right, pixels

  bool operator==(const RectifiedModel& o) const {
    return fx == o.fx && fy == o.fy && cx == o.cx && cy == o.cy && baseline == o.baseline &&
           doffs == o.doffs;
  }
};

struct CalibrationConfig {
  enum class Kind { kNone, kOpenCv, kRos, kRectified };
  // kNone: the cameras deliver rectified images and no camera model is given (a synthetic rig
  // still has its scene's); kRectified: rectified images with the model in `rectified`.
  Kind kind = Kind::kNone;
  std::string file;         // kOpenCv
  std::string left, right;  // kRos: camera_info files
  double alpha = 0.0;       // kOpenCv without R1/R2/P1/P2: cv::stereoRectify's free scaling
  RectifiedModel rectified;

  // A calibration file (or two) to load: the images are rectified by the engine.
  bool has_files() const { return kind == Kind::kOpenCv || kind == Kind::kRos; }
  bool operator==(const CalibrationConfig& o) const {
    return kind == o.kind && file == o.file && left == o.left && right == o.right &&
           alpha == o.alpha && rectified == o.rectified;
  }
};

// An L-shaped trinocular pair (docs/CONFIG.md "trinocular"): PairConfig::left is its reference
// camera, PairConfig::right the horizontal partner, `vertical` the partner above or below.
struct TrinocularConfig {
  std::string vertical;
  TrinocularModel model;  // position, focal lengths and baselines (scale 1 when not given)
  double cost_ratio = 1.0;

  bool operator==(const TrinocularConfig& o) const {
    return vertical == o.vertical && model.position == o.model.position &&
           model.horizontal_focal_px == o.model.horizontal_focal_px &&
           model.horizontal_baseline_m == o.model.horizontal_baseline_m &&
           model.vertical_focal_px == o.model.vertical_focal_px &&
           model.vertical_baseline_m == o.model.vertical_baseline_m && cost_ratio == o.cost_ratio;
  }
  bool operator!=(const TrinocularConfig& o) const { return !(*this == o); }
};

struct PairConfig {
  std::string name;
  std::string rig;   // the rig the cameras belong to
  std::string left;  // camera names (a trinocular pair: reference and horizontal partner)
  std::string right;
  CalibrationConfig calibration;
  std::optional<TrinocularConfig> trinocular;
  StereoParams stereo;
  BackgroundParams background;
  // The optional payloads of this pair's frames: publish.outputs, overridden key by key by the
  // pair's own outputs: section.
  publish::PublisherOutputs outputs;
  int gpu_device = -1;  // the GPU this pair runs on (one of gpu.devices); -1: assigned
};

struct GpuConfig {
  // The CUDA devices the pairs are spread over (gpu.devices, or the one gpu.device); pairs
  // without a gpu_device of their own are assigned by gpu_assignment.hpp.
  std::vector<int> devices = {0};
  int inflight = 2;
  bool zero_copy = false;
  bool watch_ends = true;  // EngineOptions::watch_ends

  // What every engine depends on (a change rebuilds them all); the devices only move pairs.
  bool same_engines(const GpuConfig& o) const {
    return inflight == o.inflight && zero_copy == o.zero_copy && watch_ends == o.watch_ends;
  }
};

struct DaemonConfig {
  std::string file;             // where it was loaded from
  std::vector<RigConfig> rigs;  // each with its cameras
  std::vector<PairConfig> pairs;
  publish::PublisherOptions publish;
  GpuConfig gpu;
  std::string engine = "auto";     // auto | cuda | cpu
  std::string log_level = "info";  // trace | debug | info | warn | error | critical | off

  const RigConfig* rig(const std::string& name) const;
  const CameraConfig* camera(const std::string& name) const;  // in any rig
};

// Parses and validates everything, including that calibration files load and fit their cameras.
// Throws ConfigError listing every issue found (file:line:column: key: message).
DaemonConfig load_daemon_config(const std::string& file);
// The file's text: only a regular file of at most 1 MiB is read (a FIFO is refused without
// waiting for a writer). Throws ConfigError saying why not (with errno's words).
std::string read_config_file(const std::string& file);
// The same from text (`label` stands for the file name in messages); relative paths in it
// (calibration files, CURVE keys) are taken relative to `base_dir`.
DaemonConfig parse_daemon_config(const std::string& text, const std::string& label,
                                 const std::string& base_dir = ".");

// Loads the pair's calibration file(s) (start-up work: OpenCV computes the maps). Throws
// CalibrationError naming the file and the key.
StereoCalibration load_calibration(const CalibrationConfig& calibration);

// The camera model the pair's frame headers carry: from `loaded` (its calibration files, loaded
// by the caller; required when calibration.has_files()), from calibration.rectified, or, for a
// pair of synthetic:// cameras without calibration, the scene's own cameras (synthetic_camera).
// All zero (no depth) for rectified cameras without a model.
publish::DepthCalibration pair_camera_model(const PairConfig& pair, const RigConfig& rig,
                                            const StereoCalibration* loaded);

// Log levels as written in the file.
bool is_log_level(const std::string& name);

// What a reload has to do to go from `from` to `to` (docs/CONFIG.md says which key needs what).
struct ConfigDiff {
  std::vector<std::string> rigs_rebuilt;  // cameras, sync or restart settings changed (or new)
  std::vector<std::string> rigs_removed;
  std::vector<std::string> pairs_rebuilt;  // cameras or calibration changed (or new), or its rig
  std::vector<std::string> pairs_removed;
  std::vector<std::string> pairs_retuned;  // only stereo / background parameters changed
  std::vector<std::string> pairs_outputs;  // the pair's optional payloads changed (live)
  bool engines_rebuilt = false;            // engine kind or gpu settings changed: every pair
  // gpu.devices or a pair's gpu_device changed: the daemon works out which pairs move (and
  // rebuilds those only).
  bool gpu_placement = false;
  bool publisher_rebuilt = false;  // endpoint, hwm, queue, stats interval, CURVE
  bool publisher_outputs = false;  // mask / depth outputs (live)
  bool log_level = false;          // (live)

  bool empty() const;
  std::string summary() const;  // "pairs retuned: front; log level" ...
};
ConfigDiff diff_configs(const DaemonConfig& from, const DaemonConfig& to);

}  // namespace stereod
