// Scoring a foreground mask and its disparities against a synthetic sequence's ground truth
// (stereod-synth's mask: 0 background, 64 shadow, 255 foreground; left disparity, +inf unknown):
// what `stereod-bench sequence` reports and the foreground regression tests check.
#pragma once

#include <cstdint>

#include "image.hpp"

namespace stereod {

// visible(x, y) = 1 where the left pixel's partner in the right view, x - round(d), lies in the
// image and no pixel of larger disparity lands on it (the nearer surface hides the farther one);
// 0 there and where the disparity is unknown.
void right_visibility(const Image<float>& truth_disparity, Gray8& visible);

struct ForegroundScore {
  long long frames = 0;
  long long pixels = 0;
  long long tp = 0, fp = 0, fn = 0;     // mask against the true foreground
  long long shadow = 0, shadow_fg = 0;  // shadow pixels, and those called foreground
  // Over true foreground with known disparity: bad 1.0 and 2.0 (a missing disparity is bad),
  // missing.
  long long fg = 0, bad1 = 0, bad2 = 0, no_disparity = 0;
  // The part of it the right view shows: what a matcher can be asked to give a disparity.
  long long visible = 0, visible_bad1 = 0, visible_missing = 0, visible_outside_mask = 0;

  // One frame: disparity 16 d (0xFFFF none) and foreground (non-zero) of the left view.
  void add(ImageView<const std::uint16_t> disparity, ImageView<const std::uint8_t> foreground,
           const Image<float>& truth_disparity, const Gray8& truth_mask);

  static double ratio(long long a, long long b) { return b ? double(a) / double(b) : 0; }
  double iou() const { return ratio(tp, tp + fp + fn); }
  double precision() const { return ratio(tp, tp + fp); }
  double recall() const { return ratio(tp, tp + fn); }
  double shadow_called_foreground() const { return ratio(shadow_fg, shadow); }
  double bad1_visible() const { return ratio(visible_bad1, visible); }
  double visible_without_disparity() const { return ratio(visible_missing, visible); }
};

}  // namespace stereod
