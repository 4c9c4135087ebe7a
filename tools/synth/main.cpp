// stereod-synth: a synthetic stereo video with exact ground truth (left/right PNG, disparity PFM,
// foreground/shadow mask PNG per frame, and sequence.yaml describing it), optionally with a third
// view above or below the left camera (an L-shaped trinocular rig).
#include <CLI/CLI.hpp>

#include <climits>
#include <cstdint>
#include <exception>
#include <iostream>
#include <utility>

#include "size_arg.hpp"
#include "synth.hpp"

using namespace stereod;

namespace {

// The scene names its options as the configuration does ("synthetic.noise_sigma = -1: ..."); on
// the command line they are flags.
std::string with_flag_names(std::string message) {
  static const std::pair<std::string, std::string> kFlags[] = {
      {"synthetic.width", "--size (width)"},
      {"synthetic.height", "--size (height)"},
      {"synthetic.objects", "--objects"},
      {"synthetic.min_disparity", "--min-disparity"},
      {"synthetic.max_disparity", "--max-disparity"},
      {"synthetic.noise_sigma", "--noise"},
      {"synthetic.flicker", "--flicker"},
      {"synthetic.frame_rate", "--frame-rate"},
      {"synthetic.speed", "--speed"},
      {"synthetic.object_size", "--object-size"},
      {"synthetic.stop_frames", "--stop-frames"},
      {"synthetic.focal_px", "--focal-px"},
      {"synthetic.baseline_m", "--baseline-m"},
  };
  for (const auto& [name, flag] : kFlags) {
    for (auto at = message.find(name); at != std::string::npos; at = message.find(name, at)) {
      message.replace(at, name.size(), flag);
    }
  }
  return message;
}

int fail(const std::string& message) {
  std::cerr << "stereod-synth: " << message << "\n";
  return 2;
}

// The command line: the job, and what is read into it once CLI11 has parsed.
struct Args {
  synth_tool::Job job;
  std::string size = "640x480";
  std::int64_t seed = job.options.seed;
  bool no_shadow = false, gray = false;
  std::string texture = "any", vertical = "none";
  std::string config, pair;
};

void declare_options(CLI::App& app, Args& a) {
  SyntheticOptions& o = a.job.options;
  app.add_option("--out", a.job.out, "Output folder (created if missing)")->required();
  app.add_option("--size", a.size, "Image size WxH")->capture_default_str();
  app.add_option("--frames", a.job.frames, "Frames to write")
      ->capture_default_str()
      ->check(CLI::Range(1, 10000000));
  app.add_option("--start", a.job.start, "Index of the first frame")
      ->capture_default_str()
      ->check(CLI::Range(0, INT_MAX));
  app.add_option("--objects", o.objects, "Moving objects on screen at a time")
      ->capture_default_str();
  app.add_option("--min-disparity", o.min_disparity, "Smallest background disparity")
      ->capture_default_str();
  app.add_option("--max-disparity", o.max_disparity, "Objects lie below this; search 0 .. N-1")
      ->capture_default_str();
  app.add_option("--seed", a.seed, "Random seed (0 .. 4294967295)")
      ->capture_default_str()
      ->check(CLI::Range(std::int64_t{0}, std::int64_t{UINT32_MAX}));
  app.add_flag("--no-shadow", a.no_shadow, "No moving shadow");
  app.add_option("--noise", o.noise_sigma, "Sensor noise sigma, grey levels")
      ->capture_default_str();
  app.add_option("--flicker", o.flicker, "Brightness gain varies within 1 +- this")
      ->capture_default_str();
  app.add_option("--frame-rate", o.frame_rate, "Frames per second (object speeds are per second)")
      ->capture_default_str();
  app.add_flag("--gray", a.gray, "Grey images (one-channel PNG)");
  app.add_option("--focal-px", o.focal_px, "Focal length of the cameras, pixels (0: the width)")
      ->capture_default_str();
  app.add_option("--baseline-m", o.baseline_m, "Distance between the cameras, metres")
      ->capture_default_str();
  app.add_option("--background", a.job.background,
                 "Middlebury scene folder as the background (cropped to --size, centred)")
      ->check(CLI::ExistingDirectory);
  app.add_option("--texture", a.texture,
                 "Texture of every surface: any, hstripes (constant along rows: defeats a "
                 "horizontal pair), vbars (constant along columns: defeats a vertical pair) or "
                 "mixed (stripes on the wall, bars on the floor, either on each object)")
      ->capture_default_str();
  app.add_option("--vertical", a.vertical,
                 "A third view for an L-shaped rig: none, above or below the left camera (same "
                 "baseline as the right one), written as vertical_%06d.png")
      ->capture_default_str();
  app.add_option("--object-texture", a.job.object_texture,
                 "Middlebury scene folder whose left image the objects show")
      ->check(CLI::ExistingDirectory);
  app.add_option("--speed", o.speed, "Objects cross the frame this many times faster")
      ->capture_default_str();
  app.add_option("--object-size", o.object_size, "Scale of the objects' sizes")
      ->capture_default_str();
  app.add_option("--stop-frames", o.stop_frames,
                 "Frames each object stands still halfway along its track")
      ->capture_default_str();
  auto* config_opt = app.add_option(
      "--config", a.config,
      "A stereod configuration: render the scene of its synthetic pair, as the daemon does "
      "(the scene options come from its cameras)");
  app.add_option("--pair", a.pair, "With --config: the pair (default: the first)")
      ->needs(config_opt);
  for (const char* scene_flag :
       {"--size", "--objects", "--min-disparity", "--max-disparity", "--seed", "--no-shadow",
        "--noise", "--flicker", "--frame-rate", "--gray", "--background", "--focal-px",
        "--baseline-m", "--object-texture", "--speed", "--object-size", "--stop-frames",
        "--texture", "--vertical"}) {
    config_opt->excludes(app.get_option(scene_flag));
  }
}

// The job's scene options from the flags (or --config); what is wrong, empty when nothing is.
std::string resolve_options(Args& a) {
  SyntheticOptions& o = a.job.options;
  if (!parse_size(a.size, o.width, o.height))
    return "--size " + a.size + ": expected WxH, e.g. 640x480";
  o.seed = static_cast<std::uint32_t>(a.seed);
  o.shadow = !a.no_shadow;
  o.color = !a.gray;
  if (!parse_synthetic_texture(a.texture, o.texture))
    return "--texture " + a.texture + ": expected any, hstripes, vbars or mixed";
  if (!parse_synthetic_vertical(a.vertical, o.vertical))
    return "--vertical " + a.vertical + ": expected none, above or below";
  if (!a.config.empty()) {
    try {
      o = synth_tool::options_from_config(a.config, a.pair);
    } catch (const std::exception& e) {
      return e.what();
    }
  }
  if (a.job.start > INT_MAX - a.job.frames) {
    return "--start " + std::to_string(a.job.start) + ": the last frame index would exceed " +
           std::to_string(INT_MAX);
  }
  return "";
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"stereod-synth: a synthetic stereo video with exact ground truth"};
  Args args;
  declare_options(app, args);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help
    return fail(e.what());
  }
  if (const std::string problem = resolve_options(args); !problem.empty()) return fail(problem);

  try {
    synth_tool::write_sequence(args.job);
  } catch (const std::invalid_argument& e) {
    return fail(with_flag_names(e.what()));
  } catch (const std::exception& e) {
    std::cerr << "stereod-synth: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
