// stereod-bench: the subcommands share these settings and helpers.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "engine.hpp"
#include "image.hpp"
#include "stereo/params.hpp"
#include "stereo_yaml.hpp"

namespace stereod::bench {

struct CommonOptions {
  std::string engine = "cpu";     // cpu | cuda | auto
  std::string config;             // YAML file with a `stereo:` map
  std::vector<std::string> sets;  // "key=value" (stereo) or "background.key=value" overrides
  unsigned threads = 0;           // CPU engine threads (0 = one per core)
  bool json = false;
};

// Defaults, then the config file, then --set overrides (each checked like the config file).
PairParams resolve_params(const CommonOptions& o, const PairParams& base = {});
// For single images: no background model (it would only be warming up).
PairParams resolve_stereo_only(const CommonOptions& o, bool fill);

std::unique_ptr<Engine> open_engine(const CommonOptions& o, int width, int height,
                                    const PairParams& params, int inflight = 2,
                                    std::shared_ptr<EngineGroup> group = nullptr,
                                    bool right_output = false);

// Runs one pair through an engine and waits for it. Throws std::runtime_error on a failed frame.
Disparity16 run_pair(Engine& engine, const Gray8& left, const Gray8& right,
                     std::uint64_t sequence = 0, StageTimings* timings = nullptr);

int run_disparity(const CommonOptions& common, const std::string& left, const std::string& right,
                  int max_disparity, const std::string& out, bool fill,
                  const std::string& right_out);

struct AccuracyOptions {
  std::string data;
  bool fill = true;
  bool sgbm = true;
  std::string save;  // folder for the disparity maps, if set
  std::string only;  // substring filter on scene names
};
int run_accuracy(const CommonOptions& common, const AccuracyOptions& o);

struct SpeedOptions {
  int width = 1024, height = 768;
  int max_disparity = 128;
  int levels = 0;  // 0: from the parameters
  int frames = 200;
  int warmup = 10;
  int pairs = 1;
  int inflight = 2;
  bool profile = false;     // CUDA: time each stage of one frame with events
  bool background = false;  // background modeling on, over the synthetic video
  int objects = 3;          // moving objects in that video (3: about 15 % foreground)
  bool color_only = false;  // frames in color only: the engine derives the gray (luma)
  bool pageable = false;    // input in ordinary memory (copied into the engine's slot)
  bool batch = true;        // pairs share an EngineGroup (batched on the GPU)
  bool latency = false;     // one frame at a time (pair 0), submit to result
  std::string timeline;     // CSV of per-frame times
};
int run_speed(const CommonOptions& common, const SpeedOptions& o);

struct SequenceOptions {
  std::string left_pattern, right_pattern;
  int max_disparity = 128;
  std::string out;  // empty: write nothing
  bool fill = false;
  bool no_background = false;
  bool verbose = false;
  std::string truth_disparity, truth_mask;  // patterns; default: stereod-synth's, beside the frames
  int start = 0;
  int count = 0;  // 0 = until a file is missing
};
int run_sequence(const CommonOptions& common, const SequenceOptions& o);

}  // namespace stereod::bench
