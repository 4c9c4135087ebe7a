// Constructed stereo scenes whose answer is known exactly: textured fronto-parallel or slanted
// planes, rendered into both views with integer disparities and correct occlusion. Used by the
// speed benchmark (images with a known disparity) and by the tests (unambiguous scenes).
#pragma once

#include <cstdint>
#include <vector>

#include "image.hpp"

namespace stereod {

// A textured rectangle seen at a disparity that is constant along rows; with rows_per_step > 0 it
// grows by one every rows_per_step rows (a plane slanted away from the camera vertically).
struct PlaneLayer {
  int x0 = 0, y0 = 0, x1 = 0, y1 = 0;  // covered left-image rectangle, [x0, x1) x [y0, y1);
                                       // x1 <= x0 covers everything (a background)
  int disparity = 0;
  int rows_per_step = 0;
  std::uint32_t seed = 1;  // texture

  bool covers(int x, int y) const { return x1 <= x0 || (x >= x0 && x < x1 && y >= y0 && y < y1); }
  int disparity_at(int y) const {
    return rows_per_step > 0 ? disparity + y / rows_per_step : disparity;
  }
};

struct SyntheticPair {
  Gray8 left, right;
  Image<float> truth;  // left-reference disparity of every pixel
  Gray8 visible;       // 255: the left pixel is seen in the right view (not occluded, in frame)
};

// Deterministic value noise in 0..255 with detail at several scales: good texture for matching.
std::uint8_t texture_value(std::uint32_t seed, int x, int y);

// Renders the layers (the one with the larger disparity is in front). Give one background layer
// that covers everything.
SyntheticPair render_planes(int width, int height, const std::vector<PlaneLayer>& layers);

// The benchmark scene: a background plane at max_disparity/4 and a box at max_disparity/2.
SyntheticPair make_benchmark_pair(int width, int height, int max_disparity, std::uint32_t seed = 7);

// A pseudo-random image (independent pixels), for tests that need arbitrary content.
Gray8 random_image(int width, int height, std::uint32_t seed);

}  // namespace stereod
