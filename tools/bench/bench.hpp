// stereod-bench: the subcommands share these settings and helpers.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cpu_pair_processor.hpp"
#include "engine.hpp"
#include "image.hpp"
#include "middlebury.hpp"
#include "plane_scenes.hpp"
#include "stereo/params.hpp"
#include "stereo_yaml.hpp"
#include "synthetic/synthetic_scene.hpp"

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

// The Middlebury scene in folder `dir` (a --scene option of `command`), or none, having said on
// stderr that there is no scene there.
std::optional<Scene> load_scene_option(const char* command, const std::string& dir);

std::unique_ptr<Engine> open_engine(const CommonOptions& o, int width, int height,
                                    const PairParams& params, int inflight = 2,
                                    std::shared_ptr<EngineGroup> group = nullptr,
                                    bool right_output = false, bool busy_poll = false,
                                    bool watch_ends = true);

// Runs one pair through an engine and waits for it. Throws std::runtime_error on a failed frame.
Disparity16 run_pair(Engine& engine, const Gray8& left, const Gray8& right,
                     std::uint64_t sequence = 0, StageTimings* timings = nullptr);

// The result of the frame submitted as `sequence` (earlier ones are dropped). Throws
// std::runtime_error on a failed frame or when none comes within 60 s.
EngineResult wait_for_result(Engine& engine, std::uint64_t sequence);

// The median of the values (the upper one of the middle two for an even count); 0 when empty.
double median(std::vector<double> values);

// The CPU engine's stages: a CpuPairProcessor with the engine's parameters and threads runs
// frames 0 .. skip + 20 (frame(i) gives frame i) and returns each stage's median wall time over
// the last 21, in order.
std::vector<std::pair<std::string, double>> cpu_profile(const CommonOptions& common,
                                                        const PairParams& params, int skip,
                                                        const std::function<PairFrame(int)>& frame);
// Prints them, with their sum.
void print_stages(const std::vector<std::pair<std::string, double>>& stages, const char* where);

struct DisparityOptions {
  std::string left, right;
  int max_disparity = 0;
  std::string out, right_out;
  bool fill = false;
  int repeat = 1;        // the pair this many times through the engine; times are medians
  bool sgbm = false;     // also time OpenCV's StereoSGBM on the pair, as many times
  bool profile = false;  // also time each stage of the CPU engine (median of 21 frames)
};
int run_disparity(const CommonOptions& common, const DisparityOptions& o);

struct AccuracyOptions {
  std::string data;
  bool fill = true;
  bool sgbm = true;
  std::string save;  // folder for the disparity maps, if set
  std::string only;  // substring filter on scene names
  int repeat = 1;    // runs per scene and matcher; times are medians
};
int run_accuracy(const CommonOptions& common, const AccuracyOptions& o);

struct SpeedOptions {
  int width = 1024, height = 768;
  int max_disparity = 128;
  int levels = 0;  // 0: from the parameters
  int frames = 200;
  int warmup = 10;
  int pairs = 1;
  // Of the pairs, the last `stalled` send nothing after the warm-up, as cameras that stopped:
  // their slots stay free; the others are timed (the CUDA engine's batches must not wait for them).
  int stalled = 0;
  int inflight = 2;
  bool profile = false;     // also time each stage of a frame (median of 21)
  bool background = false;  // background modeling on, over the synthetic video
  int objects = 3;          // moving objects in that video (3: about 15 % foreground)
  bool color_only = false;  // frames in color only: the engine derives the gray (luma)
  std::string yuv;          // "nv12" / "uyvy": color frames in that camera format (color only)
  bool pageable = false;    // input in ordinary memory (copied into the engine's slot)
  bool batch = true;        // pairs share an EngineGroup (batched on the GPU)
  bool latency = false;     // one frame at a time (pair 0), submit to result
  bool busy_poll = false;   // the caller watches the GPU while it waits (EngineOptions::busy_poll)
  bool watch_ends = true;   // the engine watches batches' forecast ends (EngineOptions::watch_ends)
  std::string timeline;     // CSV of per-frame times
  // A Middlebury scene folder timed instead of the generated pairs (background off; its size and
  // disparity range replace width, height and max_disparity).
  std::string scene;
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

struct TrinocularBenchOptions {
  int width = 640, height = 480;
  int max_disparity = 64;
  int min_disparity = 8;
  int objects = 3;
  std::uint32_t seed = 1;
  SyntheticTexture texture = SyntheticTexture::kAny;
  SyntheticVertical vertical = SyntheticVertical::kBelow;
  std::string background;  // Middlebury scene folder: real-photo textures
  int frames = 10;
  int start = 0;
  int step = 30;  // frame indices start, start + step, ...
  double cost_ratio = 1.0;
  int inflight = 2;
  bool speed = false;  // fused against the horizontal pair alone, frames/s
};
int run_trinocular(const CommonOptions& common, const TrinocularBenchOptions& o);

// The matcher's work at each level on the benchmark pair (matcher_work.cpp): candidates, needs,
// the CUDA tile design's items, rounds and pixel costs, and the exact floor of pixel costs.
struct MatcherWorkOptions {
  int width = 1024, height = 768;
  int max_disparity = 256;
  int tile_w = 32, tile_h = 16;  // cuda/kernels/stage_args.hpp's kTileW x kTileH
  int segment = 32;              // kSegment
  std::string scene;  // a Middlebury scene folder instead of the benchmark pair (its own range)
};
int run_matcher_work(const CommonOptions& common, const MatcherWorkOptions& o);

// The frame matcher-work and matcher-volume study: the benchmark pair of `speed` (seed 11) at the
// given size and range, or a Middlebury scene at its own, with the parameters of the command line.
// Not copied or moved: `frame` views the images it holds.
struct StudiedFrame {
  PairParams params;
  std::optional<Scene> scene;
  SyntheticPair pair;
  std::string source;  // what the images are, for the report
  PairFrame frame;
  std::unique_ptr<CpuPairProcessor> cpu;
  StudiedFrame() = default;
  StudiedFrame(const StudiedFrame&) = delete;
  StudiedFrame& operator=(const StudiedFrame&) = delete;
  // The CPU engine's matcher after it matched the frame (with params as they are then).
  const CpuStereoMatcher& match(unsigned threads);
};
// False, having said why on stderr, when the scene cannot be read.
bool load_studied_frame(const char* command, const CommonOptions& common, int width, int height,
                        int max_disparity, const std::string& scene_dir, StudiedFrame& out);

// The candidates view v (0 left, 1 right) tried at level s of the frame `m` matched last
// (search_range.cpp's rule over the cross-checked parents), hi within the image; lo > hi: none.
struct LevelCandidates {
  int w = 0, h = 0, nd = 0;
  std::vector<int> lo, hi;
};
LevelCandidates level_candidates(const CpuStereoMatcher& m, const StereoParams& sp, int s, int v);

// The ragged-volume prototype of the finest matcher against the CPU engine (matcher_volume.cpp).
struct MatcherVolumeOptions {
  int width = 1280, height = 720;
  int max_disparity = 128;
  int iterations = 200;
  std::string scene;
};
int run_matcher_volume(const CommonOptions& common, const MatcherVolumeOptions& o);

}  // namespace stereod::bench
