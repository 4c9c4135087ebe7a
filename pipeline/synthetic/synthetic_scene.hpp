// A synthetic stereo video with exact ground truth (issue 3, "stereod-synth"): a static textured
// background, moving textured foreground objects at known disparities rendered into both views
// with correct occlusions, sensor noise, a slight global brightness flicker and a moving shadow on
// the background. Frame i is a pure function of (options, i): any frame can be rendered on its
// own, in any order, and is the same on every machine. No OpenCV: this also backs the
// `synthetic://` camera source in the daemon's frame path.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "frame.hpp"
#include "image.hpp"

namespace stereod {

// Which way every surface's texture varies (issue 17: scenes that defeat one direction of a
// trinocular rig). Horizontal stripes are constant along rows, so a horizontal pair cannot match
// them; vertical bars are constant along columns and defeat a vertical pair. Mixed: the wall has
// stripes, the floor bars, and each object one or the other at random, so each direction is
// defeated on part of the frame.
enum class SyntheticTexture { kAny, kHorizontalStripes, kVerticalBars, kMixed };

// A third camera for an L-shaped rig: none, or one above or below the left camera, at the same
// baseline as the right one (so its disparities equal the left view's: the ground truth is the
// same map).
enum class SyntheticVertical { kNone, kAbove, kBelow };

struct SyntheticOptions {
  int width = 640;
  int height = 480;
  int objects = 3;         // moving foreground objects on screen at any time
  int min_disparity = 8;   // background disparities lie in [min, min + (max-min)/3]
  int max_disparity = 64;  // objects up to max_disparity - 1
  std::uint32_t seed = 1;
  bool shadow = true;        // a soft moving shadow darkening the background
  double noise_sigma = 2.0;  // sensor noise, gray levels, independent per pixel and view
  double flicker = 0.02;     // global brightness gain varies within 1 +- flicker
  bool color = true;         // color textures (false: gray, R = G = B)
  int frame_rate = 30;       // object speeds are in pixels per second
  SyntheticTexture texture = SyntheticTexture::kAny;
  SyntheticVertical vertical = SyntheticVertical::kNone;
  double speed = 1.0;        // objects cross the frame this many times faster (3-10 s at 1)
  double object_size = 1.0;  // object radii scale (4-30 % of the height at 1)
  int stop_frames = 0;       // each object stands still this many frames halfway along its track
  // The pinhole cameras the scene is seen through (synthetic_camera): the scene is defined in
  // disparities, and these turn them into metres. focal_px 0: the image width (a 53 degree
  // horizontal field of view).
  double focal_px = 0;
  double baseline_m = 0.1;
};

// Names as options and files write them ("any", "hstripes", "vbars", "mixed"; "none", "above",
// "below");
// false for an unknown name.
bool parse_synthetic_texture(const std::string& name, SyntheticTexture& out);
bool parse_synthetic_vertical(const std::string& name, SyntheticVertical& out);
const char* to_string(SyntheticTexture t);
const char* to_string(SyntheticVertical v);

// The scene's rectified camera pair: square pixels of focal length fx = fy, the principal point
// at the image centre, the right camera baseline_m to the right of the left one, parallel optical
// axes (doffs 0). Every surface of the scene is a plane at a constant or linearly varying
// disparity, which this model turns into a plane in metres: the true depth of a pixel is
// fx * baseline_m / disparity, exactly.
struct SyntheticCamera {
  double fx = 0, fy = 0;  // pixels
  double cx = 0, cy = 0;  // pixels; (0, 0) is the centre of the top-left pixel
  double baseline_m = 0;
  double depth_m(double disparity_px) const { return fx * baseline_m / disparity_px; }
};
SyntheticCamera synthetic_camera(const SyntheticOptions& options);

// A real background instead of the generated planes: a rectified color pair with the left
// view's disparity (+inf or NaN where unknown). Cropped (centred) to the options' size. With a
// third view (options.vertical) both partner views are rendered from the left image and its
// disparity instead (a real photo's texture on its true geometry), so that neither direction
// is given the real right camera's photometric differences; pixels without ground truth take
// the farther neighbour's colour.
struct SyntheticBackground {
  RgbImage left, right;
  Image<float> left_disparity;
};

struct SyntheticFrame {
  int index = 0;
  RgbImage left, right;          // color (R = G = B when options.color is false)
  Gray8 left_gray, right_gray;   // luma of the above
  Image<float> disparity;        // left-reference ground truth; +inf where unknown
  Image<float> right_disparity;  // right-reference ground truth
  // Left-view ground truth: kMaskBackground, kMaskShadow (background darkened by the shadow) or
  // kMaskForeground.
  Gray8 mask;
  Gray8 right_mask;
  // The third view (options.vertical): a camera above or below the left one, which sees the left
  // view's point (x, y) at (x, y + d) (above) or (x, y - d) (below). Empty without it.
  RgbImage vertical;
  Gray8 vertical_gray;
  Image<float> vertical_disparity;  // the third view's own ground truth; +inf where unknown
  Gray8 vertical_mask;
  std::int64_t time_ns = 0;  // index / frame_rate, from 0
};

constexpr std::uint8_t kMaskBackground = 0;
constexpr std::uint8_t kMaskShadow = 64;
constexpr std::uint8_t kMaskForeground = 255;

// Throws std::invalid_argument naming the option and value that cannot work (what the scene's
// constructor checks first), without building anything.
void validate_synthetic_options(const SyntheticOptions& options);

class SyntheticScene {
 public:
  // Throws std::invalid_argument naming the option and value that cannot work.
  // object_texture: a photograph the objects show (each a different part of it, mirrored where an
  // object runs past its edge) instead of the generated patterns.
  explicit SyntheticScene(const SyntheticOptions& options,
                          std::optional<SyntheticBackground> background = std::nullopt,
                          std::optional<RgbImage> object_texture = std::nullopt);
  ~SyntheticScene();
  SyntheticScene(SyntheticScene&&) noexcept;
  SyntheticScene& operator=(SyntheticScene&&) noexcept;

  const SyntheticOptions& options() const;
  // Renders frame `index` (>= 0) into `out`, reusing its buffers.
  void render(int index, SyntheticFrame& out) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace stereod
