#include <yaml-cpp/yaml.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <stdexcept>

#include "disparity_io.hpp"
#include "ingest/frame_pattern.hpp"
#include "middlebury_background.hpp"
#include "synth.hpp"

namespace stereod::synth_tool {
namespace {

namespace fs = std::filesystem;

constexpr const char* kLeft = "left_%06d.png";
constexpr const char* kRight = "right_%06d.png";
constexpr const char* kVertical = "vertical_%06d.png";
constexpr const char* kDisparity = "disparity_%06d.pfm";
constexpr const char* kMask = "mask_%06d.png";
constexpr const char* kDepth = "depth_%06d.pfm";

// What a reader of the folder needs to use it without this tool: sizes, range, files, options.
void write_description(const Job& job) {
  const SyntheticOptions& o = job.options;
  YAML::Emitter y;
  y.SetDoublePrecision(12);
  y << YAML::BeginMap;
  y << YAML::Key << "generator" << YAML::Value << "stereod-synth";
  y << YAML::Key << "width" << YAML::Value << o.width;
  y << YAML::Key << "height" << YAML::Value << o.height;
  y << YAML::Key << "first_frame" << YAML::Value << job.start;
  y << YAML::Key << "frames" << YAML::Value << job.frames;
  y << YAML::Key << "frame_rate" << YAML::Value << o.frame_rate;
  y << YAML::Key << "max_disparity" << YAML::Value << o.max_disparity;
  y << YAML::Comment("search disparities 0 .. max_disparity - 1");
  y << YAML::Key << "seed" << YAML::Value << o.seed;
  y << YAML::Key << "options" << YAML::Value << YAML::BeginMap;
  y << YAML::Key << "objects" << YAML::Value << o.objects;
  y << YAML::Key << "min_disparity" << YAML::Value << o.min_disparity;
  y << YAML::Key << "max_disparity" << YAML::Value << o.max_disparity;
  y << YAML::Key << "shadow" << YAML::Value << o.shadow;
  y << YAML::Key << "noise_sigma" << YAML::Value << o.noise_sigma;
  y << YAML::Key << "flicker" << YAML::Value << o.flicker;
  y << YAML::Key << "color" << YAML::Value << o.color;
  y << YAML::Key << "texture" << YAML::Value << to_string(o.texture);
  y << YAML::Key << "vertical" << YAML::Value << to_string(o.vertical);
  y << YAML::Key << "background" << YAML::Value
    << (job.background.empty() ? std::string("generated") : job.background);
  y << YAML::Key << "object_texture" << YAML::Value
    << (job.object_texture.empty() ? std::string("generated") : job.object_texture);
  y << YAML::Key << "speed" << YAML::Value << o.speed;
  y << YAML::Key << "object_size" << YAML::Value << o.object_size;
  y << YAML::Key << "stop_frames" << YAML::Value << o.stop_frames;
  y << YAML::EndMap;
  // The cameras the scene is seen through: depth = fx * baseline / disparity.
  const SyntheticCamera camera = synthetic_camera(o);
  y << YAML::Key << "camera" << YAML::Value << YAML::BeginMap;
  y << YAML::Key << "fx" << YAML::Value << camera.fx;
  y << YAML::Key << "fy" << YAML::Value << camera.fy;
  y << YAML::Key << "cx" << YAML::Value << camera.cx;
  y << YAML::Key << "cy" << YAML::Value << camera.cy;
  y << YAML::Key << "baseline" << YAML::Value << camera.baseline_m;
  y << YAML::Comment("metres");
  y << YAML::Key << "doffs" << YAML::Value << 0;
  y << YAML::EndMap;
  y << YAML::Key << "files" << YAML::Value << YAML::BeginMap;
  y << YAML::Key << "left" << YAML::Value << kLeft;
  y << YAML::Key << "right" << YAML::Value << kRight;
  if (o.vertical != SyntheticVertical::kNone) {
    y << YAML::Key << "vertical" << YAML::Value << kVertical;
    y << YAML::Comment(o.vertical == SyntheticVertical::kAbove
                           ? "above the left camera: sees its (x, y) at (x, y + d)"
                           : "below the left camera: sees its (x, y) at (x, y - d)");
  }
  y << YAML::Key << "disparity" << YAML::Value << kDisparity;
  y << YAML::Comment("left view, Middlebury 2014 PFM, +inf = unknown");
  y << YAML::Key << "mask" << YAML::Value << kMask;
  y << YAML::Comment("left view");
  y << YAML::Key << "depth" << YAML::Value << kDepth;
  y << YAML::Comment("left view, metres (camera above), PFM, +inf = unknown");
  y << YAML::EndMap;
  y << YAML::Key << "mask_values" << YAML::Value << YAML::BeginMap;
  y << YAML::Key << "background" << YAML::Value << static_cast<int>(kMaskBackground);
  y << YAML::Key << "shadow" << YAML::Value << static_cast<int>(kMaskShadow);
  y << YAML::Key << "foreground" << YAML::Value << static_cast<int>(kMaskForeground);
  y << YAML::EndMap;
  y << YAML::EndMap;
  const std::string path = (fs::path(job.out) / "sequence.yaml").string();
  std::ofstream f(path);
  f << "# A synthetic stereo sequence with exact ground truth, written by stereod-synth.\n"
    << y.c_str() << "\n";
  if (!f) throw std::runtime_error(path + ": cannot write");
}

std::string path(const Job& job, const char* pattern, int index) {
  return (fs::path(job.out) / format_frame_path(pattern, index)).string();
}

}  // namespace

void write_sequence(const Job& job) {
  std::optional<SyntheticBackground> background;
  if (!job.background.empty()) {
    try {
      background = load_middlebury_background(job.background);
    } catch (const std::runtime_error& e) {
      // Not a scene, or unreadable: either way the option is what has to change.
      throw std::invalid_argument(std::string("--background: ") + e.what());
    }
  }
  std::optional<RgbImage> object_texture;
  if (!job.object_texture.empty()) {
    try {
      object_texture = load_middlebury_background(job.object_texture).left;
    } catch (const std::runtime_error& e) {
      throw std::invalid_argument(std::string("--object-texture: ") + e.what());
    }
  }
  const SyntheticScene scene(job.options, std::move(background), std::move(object_texture));
  fs::create_directories(job.out);
  write_description(job);

  const SyntheticCamera camera = synthetic_camera(job.options);
  Image<float> depth;
  SyntheticFrame frame;
  double render_s = 0;
  long long foreground = 0, shadow = 0;
  for (int i = job.start; i < job.start + job.frames; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    scene.render(i, frame);
    render_s += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (job.options.color) {
      write_rgb(path(job, kLeft, i), frame.left);
      write_rgb(path(job, kRight, i), frame.right);
      if (!frame.vertical.empty()) write_rgb(path(job, kVertical, i), frame.vertical);
    } else {
      write_png8(path(job, kLeft, i), frame.left_gray);
      write_png8(path(job, kRight, i), frame.right_gray);
      if (!frame.vertical_gray.empty()) write_png8(path(job, kVertical, i), frame.vertical_gray);
    }
    write_pfm(path(job, kDisparity, i), frame.disparity);
    depth.resize(frame.disparity.width(), frame.disparity.height());
    for (std::size_t k = 0; k < depth.size(); ++k) {
      const float d = frame.disparity.pixels()[k];
      depth.pixels()[k] = std::isfinite(d) && d > 0 ? static_cast<float>(camera.depth_m(d))
                                                    : std::numeric_limits<float>::infinity();
    }
    write_pfm(path(job, kDepth, i), depth);
    write_png8(path(job, kMask, i), frame.mask);
    for (const std::uint8_t m : frame.mask.pixels()) {
      foreground += m == kMaskForeground;
      shadow += m == kMaskShadow;
    }
  }
  const double pixels = static_cast<double>(job.frames) * job.options.width * job.options.height;
  std::printf(
      "stereod-synth: %d frames of %dx%d written to %s; render %.2f ms/frame; left view "
      "foreground %.1f %%, shadow %.1f %%\n",
      job.frames, job.options.width, job.options.height, job.out.c_str(),
      1000 * render_s / job.frames, 100 * foreground / pixels, 100 * shadow / pixels);
}

}  // namespace stereod::synth_tool
