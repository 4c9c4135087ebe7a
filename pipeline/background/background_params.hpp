// Parameters of the background model (docs/ALGORITHM.md step 3, Zhao & Taubin 2011 section 3.2),
// and their fixed-point forms: the model runs in integers so the CUDA engine reproduces it bit for
// bit.
#pragma once

#include <cstdint>
#include <tuple>
#include <vector>

#include "stereo/params.hpp"

namespace stereod {

constexpr int kMaxTargetMargin = 16;  // BackgroundParams::target_margin, pixels
// BackgroundParams::absorb_frames: the model counts still frames in one byte per pixel.
constexpr int kMaxAbsorbFrames = 255;
// BackgroundParams::depth_lag: the most frames it may be, and the depth records kept (a ring; a
// power of two). On the GPU a pair keeps depth_lag frames in flight without waiting for one's
// stereo part before the next one's model.
constexpr int kMaxDepthLag = 8;

struct BackgroundParams {
  bool enabled = true;  // off: every pixel is foreground (moving cameras)
  bool color = true;    // HSV when the camera delivers color; intensity otherwise
  int warmup = 60;      // frames that only learn; every pixel counts as foreground meanwhile
  double learning_rate = 0.02;              // alpha on background pixels
  double foreground_learning_rate = 0.002;  // on foreground: a parked object fades in slowly
  double threshold = 3.0;                   // k: foreground beyond k sigma on some channel
  int min_sigma = 8;  // floor on sigma (gray levels / HSV units) so flat areas don't flicker
  int hue_min_saturation =
      40;              // hue is compared only where both pixel and model are this saturated
  bool shadow = true;  // suppress shadows (darker, same hue and saturation)
  double shadow_min_ratio = 0.45;  // a shadow keeps at least this share of the brightness
  double shadow_max_ratio = 0.95;  // and at most this share
  int shadow_hue_tolerance = 12;   // 0..255 = 360 degrees; at least (color_kept: noise allows more)
  // Saturation a shadow may change by (0-255), at least; where the pixel is dark, noise allows
  // more: 255 * min_sigma / V (color_kept in background_ops.hpp). 8: with 40 (the default until
  // 2026-11-29) plain objects paler than a wall of their hue were taken for its shadow (the
  // foreground family, docs/PERFORMANCE.md: mask IoU 0.870 -> 0.891 tuning, 0.843 -> 0.864 held
  // aside), and the noise term keeps shadows on dark, noisy surfaces background.
  int shadow_saturation_tolerance = 8;
  int closing_radius = 1;  // dilate then erode with a (2r+1)^2 square; 0 = off
  // A foreground pixel whose value stays within min_sigma of the previous frame for this many
  // frames in a row is taken into the background (a parked object, or a ghost: background that an
  // object uncovered after the model learned the object). Fewer while the pixel's model has been
  // confirmed (seen as background) fewer times than this: one more than it has (docs/ALGORITHM.md,
  // absorption). 0 = never; at most kMaxAbsorbFrames.
  int absorb_frames = 30;
  // Absorb sooner where the pixel's model has been confirmed fewer than absorb_frames times, or
  // where the pixel is relit (docs/ALGORITHM.md, "How long to wait"). On by default: over the
  // real-background sequences it takes mean mask IoU from 0.79 to 0.87 (tuning set) and 0.75 to
  // 0.84 (held aside), and stereod-synth's from 0.96 to 0.97 (docs/PERFORMANCE.md, "The warm-up's
  // ghosts"). It was off while the CUDA model's halo raced with its neighbours' learning.
  bool support_absorption = true;
  bool hierarchy = true;  // test only pixels under mixed parent blocks (off: test all)
  // For matching only, the right camera's mask is widened by this many pixels at every level: a
  // left candidate is refused only where its right pixel lies farther than this from the right
  // foreground, and the right view is matched there too, so that the left-right check finds its
  // partner. 0: the right mask as decided (docs/PERFORMANCE.md has the trade-off).
  int target_margin = 0;
  // Ghosts seen in depth (docs/ALGORITHM.md, "Ghosts seen in depth"): the left model keeps, per
  // pixel, the farthest disparity it showed while the warm-up called it background, and a
  // foreground pixel that showed a surface farther than that by the share depth_ghost_farther of
  // its depth (and a pixel of disparity) -- the scene behind what the model learned, uncovered --
  // is taken into the background once it has been still for depth_lag frames, instead of
  // absorb_frames (two frames in a row must show it: shown_again). Both engines, bit for bit.
  // On the foreground family it takes mean mask IoU from 0.891 to 0.897 (tuning) and 0.864 to
  // 0.895 (held aside), shadow called foreground (held aside) from 17 % to 7.5 %; on the GPU it
  // costs 2 % of the frame rate at 1024x768 with 16 % foreground, nothing on an empty scene
  // (docs/PERFORMANCE.md, "Ghosts seen in depth"). On by default since session 16.
  bool depth_ghosts = true;
  double depth_ghost_farther = 0.25;
  // With depth_ghosts (nothing without it), the same records read the other way: a foreground
  // pixel still since two records in a row that showed it nearer than the static depth (by the
  // same share) is an object in front of the scene the model holds: its model's support is set to
  // the most (and stays so, as if confirmed that often), so the object waits absorb_frames however
  // little the model had been confirmed (a relit pixel still waits absorb_after(0))
  // (docs/ALGORITHM.md, "Objects seen in front"). On the foreground family it takes mean mask IoU
  // from 0.897 to 0.909 (tuning) and 0.895 to 0.927 (held aside); where an object's colour matches
  // the scene behind it, the object is no longer hidden by the ghosts around it (baby1: recall
  // 0.993 -> 0.970; docs/PERFORMANCE.md, "Objects seen in front").
  bool depth_in_front = true;
  // How many frames before its own a frame's model reads the record of (1..kMaxDepthLag): both
  // rules act that much later, and a revealed pixel still that long is absorbed. Shorter follows
  // objects that move off the scene they hid sooner, and takes stray disparities for the scene
  // behind more often. 3 (8 until session 17): on the foreground family mean IoU 0.906 -> 0.920
  // (tuning), 0.923 -> 0.925 (held aside), shadow called foreground 7.5 -> 4.1 % (held aside);
  // the CUDA engine's model of a frame waits for the stereo part of the frame depth_lag before,
  // which at 3 cost 0.3 % of the frame rate with six frames in flight (1024x768, 16 %
  // foreground; 10 % at 2, 32 % at 1: docs/PERFORMANCE.md, "How late depth is read").
  int depth_lag = 3;

  // Every field, in declaration order (see StereoParams::tie_fields).
  template <typename Self>
  static auto tie_fields(Self& s) {
    return std::tie(s.enabled, s.color, s.warmup, s.learning_rate, s.foreground_learning_rate,
                    s.threshold, s.min_sigma, s.hue_min_saturation, s.shadow, s.shadow_min_ratio,
                    s.shadow_max_ratio, s.shadow_hue_tolerance, s.shadow_saturation_tolerance,
                    s.closing_radius, s.absorb_frames, s.support_absorption, s.hierarchy,
                    s.target_margin, s.depth_ghosts, s.depth_ghost_farther, s.depth_in_front,
                    s.depth_lag);
  }
  bool operator==(const BackgroundParams& o) const { return tie_fields(*this) == tie_fields(o); }
  bool operator!=(const BackgroundParams& o) const { return !(*this == o); }
};

// Every problem with the parameters; empty when they are usable. Keys are "background.<name>".
std::vector<ParameterError> check_background_params(const BackgroundParams& p);
void validate_background_params(const BackgroundParams& p);

// The integer form the model computes with.
struct BackgroundFixed {
  std::int32_t alpha_bg = 0;  // learning rates, Q16 (65536 = 1)
  std::int32_t alpha_fg = 0;
  std::int32_t k_q4 = 0;  // threshold, Q4
  std::int32_t min_sigma_q8 = 0;
  std::int32_t hue_min_sat_q8 = 0;
  std::int32_t shadow_lo_q8 = 0;  // ratios, Q8
  std::int32_t shadow_hi_q8 = 0;
  std::int32_t shadow_hue_q8 = 0;
  std::int32_t shadow_sat_q8 = 0;
  bool shadow = false;
  std::int32_t absorb_frames = 0;
  bool support_absorption = false;
  std::int32_t still_tolerance = 0;   // gray levels
  std::int32_t depth_farther_q8 = 0;  // depth_ghost_farther, Q8
  bool depth_in_front = false;
  std::int32_t depth_lag = 0;
};
BackgroundFixed to_fixed(const BackgroundParams& p);

}  // namespace stereod
