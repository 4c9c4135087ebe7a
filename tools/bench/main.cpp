// stereod-bench: disparity for one pair, accuracy on Middlebury data, speed on generated pairs, and
// a frame sequence through one engine instance.
#include <CLI/CLI.hpp>

#include <climits>
#include <cstdint>
#include <exception>
#include <iostream>

#include "bench.hpp"
#include "size_arg.hpp"
#include "yaml_reader.hpp"

using namespace stereod;
using namespace stereod::bench;

namespace {

void add_common(CLI::App* app, CommonOptions& o) {
  app->add_option("--engine", o.engine, "Engine: cpu, cuda or auto")
      ->check(CLI::IsMember({"cpu", "cuda", "auto"}));
  app->add_option("--config", o.config, "YAML file with a stereo: map of parameters")
      ->check(CLI::ExistingFile);
  app->add_option("--set", o.sets, "Override one stereo parameter, e.g. --set levels=3")
      ->take_all();
  app->add_option("--threads", o.threads, "CPU engine threads (0 = one per core)");
  app->add_flag("--json", o.json, "Machine-readable output");
}

// Each subcommand is a struct: its options (CLI11 writes into them, so they must live until the
// run), add() declares them, run() makes the checks CLI11 cannot and runs it.
// stereod-bench disparity
struct DisparityCommand {
  CommonOptions disp_common;
  DisparityOptions disp_opt;
  CLI::App* disp = nullptr;

  void add(CLI::App& app);
  int run();
};

void DisparityCommand::add(CLI::App& app) {
  disp = app.add_subcommand("disparity", "Disparity of one rectified pair");
  add_common(disp, disp_common);
  disp->add_option("--left", disp_opt.left, "Left image")->required()->check(CLI::ExistingFile);
  disp->add_option("--right", disp_opt.right, "Right image")->required()->check(CLI::ExistingFile);
  disp->add_option("--max-disparity", disp_opt.max_disparity, "Disparities 0..N-1 are searched")
      ->required();
  disp->add_option("--out", disp_opt.out, "Output: .pfm (float, Middlebury) or .png (16-bit, 16*d)")
      ->required();
  disp->add_option("--right-out", disp_opt.right_out, "Also write the right-reference map");
  disp->add_flag("--fill", disp_opt.fill, "Fill holes (dense output)");
  disp->add_option("--repeat", disp_opt.repeat, "Run the pair N times; report the median time")
      ->check(CLI::Range(1, 100000));
  disp->add_flag("--sgbm", disp_opt.sgbm, "Also time OpenCV's StereoSGBM on the pair (same run)");
  disp->add_flag("--profile", disp_opt.profile, "CPU engine: also time each stage (median of 21)");
}

int DisparityCommand::run() {
  return run_disparity(disp_common, disp_opt);
}

// stereod-bench accuracy: its flags say what to leave out.
struct AccuracyCommand {
  CommonOptions acc_common;
  AccuracyOptions acc;
  bool no_fill = false, no_sgbm = false;
  CLI::App* accuracy = nullptr;

  void add(CLI::App& app);
  int run();
};

void AccuracyCommand::add(CLI::App& app) {
  accuracy = app.add_subcommand("accuracy", "Score every Middlebury scene under a folder");
  add_common(accuracy, acc_common);
  accuracy->add_option("--data", acc.data, "Folder with scenes (../shared/data)")
      ->required()
      ->check(CLI::ExistingDirectory);
  accuracy->add_flag("--no-fill", no_fill, "Score the output without hole filling");
  accuracy->add_flag("--no-sgbm", no_sgbm, "Skip the OpenCV StereoSGBM reference row");
  accuracy->add_option("--save", acc.save, "Write each scene's disparity (PFM) into this folder");
  accuracy->add_option("--only", acc.only, "Only scenes whose name contains this");
  accuracy->add_option("--repeat", acc.repeat, "Runs per scene and matcher; times are medians")
      ->check(CLI::Range(1, 1000));
}

int AccuracyCommand::run() {
  acc.fill = !no_fill;
  acc.sgbm = !no_sgbm;
  return run_accuracy(acc_common, acc);
}

// stereod-bench speed: --size is read after parsing.
struct SpeedCommand {
  CommonOptions speed_common;
  SpeedOptions speed;
  std::string size = "1024x768";
  CLI::App* sp = nullptr;

  void add(CLI::App& app);
  int run();
};

void SpeedCommand::add(CLI::App& app) {
  sp = app.add_subcommand("speed", "Frames per second on generated textured pairs");
  add_common(sp, speed_common);
  sp->add_option("--size", size, "Image size WxH");
  sp->add_option("--max-disparity", speed.max_disparity, "Disparities 0..N-1 are searched");
  sp->add_option("--levels", speed.levels, "Pyramid levels (default: from the parameters)");
  sp->add_option("--frames", speed.frames, "Frames timed per pair")->check(CLI::Range(1, 1000000));
  sp->add_option("--warmup", speed.warmup, "Frames run before timing")->check(CLI::Range(0, 10000));
  sp->add_option("--pairs", speed.pairs, "Pairs processed at once")->check(CLI::Range(1, 256));
  sp->add_option("--inflight", speed.inflight, "Slots per pair")->check(CLI::Range(1, 64));
  sp->add_option("--stalled", speed.stalled,
                 "Of the pairs, the last N send nothing after the warm-up (cameras that stopped); "
                 "the others are timed")
      ->check(CLI::Range(0, 255));
  sp->add_flag("--profile", speed.profile,
               "Also time each stage of a frame (CPU and CUDA engines)");
  sp->add_flag("--background", speed.background,
               "Background modeling on, over a synthetic video with moving objects");
  sp->add_option("--objects", speed.objects, "With --background: moving objects in the video")
      ->check(CLI::Range(0, 64));
  sp->add_flag("--color-only", speed.color_only,
               "With --background: frames in color only (the engine derives the gray)");
  sp->add_option("--yuv", speed.yuv,
                 "With --background: frames as a camera delivers them, in this YUV format "
                 "(color only; the engine converts them on the device)")
      ->check(CLI::IsMember({"nv12", "uyvy"}));
  sp->add_flag("--pageable", speed.pageable,
               "Input frames in ordinary memory, copied into the engine (default: page-locked)");
  sp->add_flag("!--no-batch", speed.batch, "Pairs on engines of their own (no batching)");
  sp->add_flag("--latency", speed.latency, "One frame at a time: submit, wait for it, repeat");
  sp->add_flag("--busy-poll", speed.busy_poll,
               "CUDA engine: wait for results watching the GPU on the waiting thread, not woken by "
               "the engine's callback (EngineOptions::busy_poll)");
  sp->add_flag("!--no-watch", speed.watch_ends,
               "CUDA engine: results woken by the driver's completion callback alone, not watched "
               "for around each batch's forecast end (EngineOptions::watch_ends)");
  sp->add_option("--timeline", speed.timeline, "Write each timed frame's times to this CSV");
  sp->add_option("--scene", speed.scene,
                 "Time a Middlebury scene folder instead of the generated pairs (the same frame "
                 "each time; its size and disparity range replace --size and --max-disparity)")
      ->check(CLI::ExistingDirectory)
      ->excludes("--background");
}

int SpeedCommand::run() {
  if (!parse_size(size, speed.width, speed.height)) {
    std::cerr << "stereod-bench speed: --size " << size << ": expected WxH, e.g. 1024x768\n";
    return 2;
  }
  return run_speed(speed_common, speed);
}

// stereod-bench sequence
struct SequenceCommand {
  CommonOptions seq_common;
  SequenceOptions seq;
  CLI::App* sq = nullptr;

  void add(CLI::App& app);
  int run();
};

void SequenceCommand::add(CLI::App& app) {
  sq = app.add_subcommand("sequence", "Run one engine over a frame sequence");
  add_common(sq, seq_common);
  sq->add_option("--left", seq.left_pattern, "Left frames, printf pattern (dir/l_%04d.png)")
      ->required();
  sq->add_option("--right", seq.right_pattern, "Right frames, printf pattern")->required();
  sq->add_option("--max-disparity", seq.max_disparity, "Disparities 0..N-1 are searched")
      ->required();
  sq->add_option("--out", seq.out, "Write disparity PFMs and foreground PNGs into this folder");
  sq->add_flag("--fill", seq.fill, "Fill holes (dense output)");
  sq->add_flag("--no-background", seq.no_background, "Background modeling off");
  sq->add_flag("--verbose", seq.verbose, "One line per frame");
  sq->add_option("--truth-disparity", seq.truth_disparity,
                 "Ground-truth disparity PFMs, printf pattern (default: disparity_%06d.pfm "
                 "beside the left frames)");
  sq->add_option("--truth-mask", seq.truth_mask,
                 "Ground-truth masks (0 background, 64 shadow, 255 foreground), printf pattern "
                 "(default: mask_%06d.png beside the left frames)");
  sq->add_option("--start", seq.start, "First frame number");
  sq->add_option("--count", seq.count, "Frames to run (0 = until a file is missing)");
}

int SequenceCommand::run() {
  return run_sequence(seq_common, seq);
}

// stereod-bench trinocular: --size, --texture, --vertical and --seed are read after parsing.
struct TrinocularCommand {
  CommonOptions tri_common;
  TrinocularBenchOptions tri;
  std::string tri_size = "640x480", tri_texture = "any", tri_vertical = "below";
  std::int64_t tri_seed = tri.seed;
  CLI::App* tr = nullptr;

  void add(CLI::App& app);
  int run();
};

void TrinocularCommand::add(CLI::App& app) {
  tr = app.add_subcommand("trinocular",
                          "An L-shaped rig on the synthetic scene: fused vs each pair alone");
  add_common(tr, tri_common);
  tr->add_option("--size", tri_size, "Image size WxH")->capture_default_str();
  tr->add_option("--max-disparity", tri.max_disparity, "Disparities 0..N-1 are searched")
      ->capture_default_str();
  tr->add_option("--min-disparity", tri.min_disparity, "Smallest background disparity")
      ->capture_default_str();
  tr->add_option("--objects", tri.objects, "Moving objects")->capture_default_str();
  tr->add_option("--seed", tri_seed, "Scene seed")
      ->capture_default_str()
      ->check(CLI::Range(std::int64_t{0}, std::int64_t{UINT32_MAX}));
  tr->add_option("--texture", tri_texture, "any, hstripes, vbars or mixed")->capture_default_str();
  tr->add_option("--vertical", tri_vertical, "above or below")->capture_default_str();
  tr->add_option("--background", tri.background,
                 "Middlebury scene folder: its photo on its geometry as the background")
      ->check(CLI::ExistingDirectory);
  tr->add_option("--frames", tri.frames, "Frames scored (or timed with --speed)")
      ->capture_default_str()
      ->check(CLI::Range(1, 1000000));
  tr->add_option("--start", tri.start, "First frame index")->check(CLI::Range(0, 100000000));
  tr->add_option("--step", tri.step, "Frame index step")
      ->capture_default_str()
      ->check(CLI::Range(1, 100000));
  tr->add_option("--cost-ratio", tri.cost_ratio, "Fusion: vertical wins when its cost < ratio x")
      ->capture_default_str();
  tr->add_option("--inflight", tri.inflight, "Slots")->check(CLI::Range(1, 64));
  tr->add_flag("--speed", tri.speed, "Frames/s of the fused rig against the horizontal pair alone");
}

int TrinocularCommand::run() {
  if (!parse_size(tri_size, tri.width, tri.height)) {
    std::cerr << "stereod-bench trinocular: --size " << tri_size << ": expected WxH\n";
    return 2;
  }
  if (!parse_synthetic_texture(tri_texture, tri.texture)) {
    std::cerr << "stereod-bench trinocular: --texture " << tri_texture
              << ": expected any, hstripes, vbars or mixed\n";
    return 2;
  }
  if (!parse_synthetic_vertical(tri_vertical, tri.vertical) ||
      tri.vertical == SyntheticVertical::kNone) {
    std::cerr << "stereod-bench trinocular: --vertical " << tri_vertical
              << ": expected above or below\n";
    return 2;
  }
  tri.seed = static_cast<std::uint32_t>(tri_seed);
  return run_trinocular(tri_common, tri);
}

// stereod-bench matcher-work
struct MatcherWorkCommand {
  CommonOptions mw_common;
  MatcherWorkOptions mw;
  std::string size = "1024x768";
  CLI::App* app_ = nullptr;

  void add(CLI::App& app);
  int run();
};

void MatcherWorkCommand::add(CLI::App& app) {
  app_ = app.add_subcommand("matcher-work",
                            "The matcher's work per level on the benchmark pair: candidates, "
                            "the CUDA tile design's pixel costs, and their floor (no GPU needed)");
  add_common(app_, mw_common);
  app_->add_option("--size", size, "Image size WxH")->capture_default_str();
  app_->add_option("--max-disparity", mw.max_disparity, "Disparities 0..N-1 are searched")
      ->capture_default_str();
  app_->add_option("--tile", mw.tile_w, "Tile width of the modelled design")
      ->capture_default_str()
      ->check(CLI::Range(8, 256));
  app_->add_option("--tile-height", mw.tile_h, "Tile height of the modelled design")
      ->capture_default_str()
      ->check(CLI::Range(4, 4096));
  app_->add_option("--segment", mw.segment, "Candidates per work item at the finest level")
      ->capture_default_str()
      ->check(CLI::Range(4, 4096));
  app_->add_option("--scene", mw.scene,
                   "A Middlebury scene folder instead of the benchmark pair (its size and "
                   "disparity range replace --size and --max-disparity)")
      ->check(CLI::ExistingDirectory);
}

int MatcherWorkCommand::run() {
  if (!parse_size(size, mw.width, mw.height)) {
    std::cerr << "stereod-bench matcher-work: --size " << size << ": expected WxH\n";
    return 2;
  }
  return run_matcher_work(mw_common, mw);
}

// stereod-bench matcher-volume
struct MatcherVolumeCommand {
  CommonOptions mv_common;
  MatcherVolumeOptions mv;
  std::string size = "1280x720";
  CLI::App* app_ = nullptr;

  void add(CLI::App& app) {
    app_ = app.add_subcommand("matcher-volume",
                              "Times a prototype of the finest matcher as ragged cost volumes on "
                              "the GPU and checks it against the CPU engine (left view)");
    add_common(app_, mv_common);
    app_->add_option("--size", size, "Image size WxH")->capture_default_str();
    app_->add_option("--max-disparity", mv.max_disparity, "Disparities 0..N-1 are searched")
        ->capture_default_str();
    app_->add_option("--iterations", mv.iterations, "Timed runs of the prototype's kernels")
        ->capture_default_str()
        ->check(CLI::Range(1, 100000));
    app_->add_option("--scene", mv.scene,
                     "A Middlebury scene folder instead of the benchmark pair (its size and "
                     "disparity range replace --size and --max-disparity)")
        ->check(CLI::ExistingDirectory);
  }
  int run() {
    if (!parse_size(size, mv.width, mv.height)) {
      std::cerr << "stereod-bench matcher-volume: --size " << size << ": expected WxH\n";
      return 2;
    }
    return run_matcher_volume(mv_common, mv);
  }
};

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"stereod-bench: accuracy and speed of the stereod matcher"};
  app.require_subcommand(1);
  // Added in this order, so --help lists them so.
  DisparityCommand disparity;
  disparity.add(app);
  AccuracyCommand accuracy;
  accuracy.add(app);
  SpeedCommand speed;
  speed.add(app);
  SequenceCommand sequence;
  sequence.add(app);
  TrinocularCommand trinocular;
  trinocular.add(app);
  MatcherWorkCommand matcher_work;
  matcher_work.add(app);
  MatcherVolumeCommand matcher_volume;
  matcher_volume.add(app);

  CLI11_PARSE(app, argc, argv);

  try {
    if (*disparity.disp) return disparity.run();
    if (*accuracy.accuracy) return accuracy.run();
    if (*speed.sp) return speed.run();
    if (*sequence.sq) return sequence.run();
    if (*trinocular.tr) return trinocular.run();
    if (*matcher_work.app_) return matcher_work.run();
    if (*matcher_volume.app_) return matcher_volume.run();
  } catch (const ConfigError& e) {
    std::cerr << "stereod-bench: configuration error:\n" << e.what() << "\n";
    return 2;
  } catch (const ParameterError& e) {
    std::cerr << "stereod-bench: " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "stereod-bench: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
