// The static background of the synthetic scene, rendered once when the scene is built: both views'
// colours and ground truth, either generated (a textured wall and floor) or a real pair cropped to
// the scene's size.
#pragma once

#include <cstdint>

#include "synthetic/synthetic_scene.hpp"

namespace stereod::synth {

struct StaticBackground {
  RgbImage left, right;
  Image<float> left_disparity, right_disparity;  // +inf where unknown
  // Where the surface seen by a right pixel lies in left-view coordinates (x_left = x + shift):
  // the rounded right disparity, filled from the farther neighbour where it is unknown. The shadow
  // lies on the surface, so the right view finds it through this.
  Image<std::int16_t> right_shift;
  int shift_min = 0, shift_max = 0;
  // The third view (options.vertical), empty without it: its colours, and where the surface seen
  // by its pixel (x, y) lies in the left view, (x, y + vertical_shift) for a camera below and
  // (x, y - vertical_shift) above.
  RgbImage vertical;
  Image<float> vertical_disparity;  // the third view's own ground truth, +inf where unknown
  Image<std::int16_t> vertical_shift;
  int vertical_shift_min = 0, vertical_shift_max = 0;
  int nearest = 0;  // the largest background disparity, rounded up: objects are in front of it
};

// A textured back wall (fronto-parallel or slanted) and a textured floor whose disparity grows
// towards the bottom, at integer disparities in [min_disparity, min + (max - min) / 3].
StaticBackground generate_background(const SyntheticOptions& options);

// The centred crop of a real pair. Throws std::invalid_argument when it is smaller than the
// options' size, its images differ in size, or max_disparity leaves no room in front of it.
StaticBackground crop_background(const SyntheticOptions& options, const SyntheticBackground& real);

// R = G = B = luma, in place.
void to_grey(RgbImage& img);

}  // namespace stereod::synth
