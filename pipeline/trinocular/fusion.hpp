// L-shaped trinocular rigs (Yao 2012; issue 17): a reference camera, a horizontal partner beside it
// (to its right, like a pair's right camera) and a vertical partner above or below it. Both pairs
// run through the ordinary pair matcher: the vertical pair on transposed images (and, when the
// partner is above, flipped along the transposed rows), so that its partner is again "to the
// right" and the matcher needs no new indexing. Its disparities are then brought back to the
// reference's pixel grid and to the horizontal pair's scale, and the two maps are fused per pixel
// by the cost-ratio rule below. Plain C++ on the engines' outputs: the same for both engines.
#pragma once

#include <cstdint>

#include "frame.hpp"
#include "image.hpp"

namespace stereod {

enum class VerticalPosition { kAbove, kBelow };

// Which direction gave a fused pixel its disparity (the "direction" payload).
constexpr std::uint8_t kFusedNone = 0;
constexpr std::uint8_t kFusedHorizontal = 1;
constexpr std::uint8_t kFusedVertical = 2;

// The reference's pixel (x, y) as the vertical pair sees it: transposed, so the reference image
// of width w and height h becomes h wide and w high, and a partner below (which sees a point at
// y - d) becomes a partner "to the right" (x - d). A partner above sees the point at y + d: the
// transposed rows are flipped as well (u = h - 1 - y).
struct VerticalLayout {
  int width = 0, height = 0;  // the reference image's size
  bool flip = false;          // partner above

  // Where the reference's row y lands along the vertical pair's rows; its column x is that
  // pair's row x.
  int u(int y) const { return flip ? height - 1 - y : y; }
};

inline VerticalLayout vertical_layout(int width, int height, VerticalPosition position) {
  return {width, height, position == VerticalPosition::kAbove};
}

// src (w x h) into the vertical pair's frame (h x w).
void to_vertical_frame(ImageView<const std::uint8_t> src, const VerticalLayout& layout, Gray8& dst);
void to_vertical_frame(const RgbView& src, const VerticalLayout& layout, RgbImage& dst);

// How the vertical pair's disparities become the horizontal pair's: d_h = d_v * scale, with
// scale = (focal_h * baseline_h) / (focal_v * baseline_v) from the two pairs' camera models.
struct TrinocularModel {
  double horizontal_focal_px = 1, horizontal_baseline_m = 1;
  double vertical_focal_px = 1, vertical_baseline_m = 1;
  VerticalPosition position = VerticalPosition::kBelow;

  double scale() const {
    return (horizontal_focal_px * horizontal_baseline_m) /
           (vertical_focal_px * vertical_baseline_m);
  }
};

// The vertical pair's search range that covers the horizontal pair's max_disparity after
// scaling: ceil(max_disparity / scale), at least 1.
int vertical_max_disparity(int horizontal_max_disparity, double scale);

struct FusionParams {
  // Where both pairs have a disparity, the vertical one wins when
  //   ratio_vertical < cost_ratio * ratio_horizontal
  // (each the winner's cost ratio, winner_cost_ratio in stereo/pixel_ops.hpp: how sharply its
  // cost minimum stands out; docs/ALGORITHM.md "Trinocular rigs"). 1: the sharper minimum wins,
  // ties to the horizontal pair; below 1 the vertical pair must be clearly sharper.
  double cost_ratio = 1.0;
  double scale = 1.0;             // TrinocularModel::scale()
  int max_disparity_q4 = 0xFFFE;  // scaled vertical disparities above this are dropped
};

// Fixed point of the rule above, so every machine draws the same line: the vertical pair wins
// where ratio_v * 256 < ratio_q8 * ratio_h.
std::uint32_t cost_ratio_q8(double cost_ratio);
// One vertical disparity (16 d, vertical pair's scale) in the horizontal scale, rounded to the
// nearest sixteenth; kInvalidDisparity stays so, and so does one above max_q4.
std::uint16_t scale_vertical_disparity(std::uint16_t q4, double scale, int max_q4);

struct FusionInput {
  ImageView<const std::uint16_t> horizontal;        // reference grid, 16 d
  ImageView<const std::uint32_t> horizontal_ratio;  // winners' cost ratios, kNoCost where none
  ImageView<const std::uint16_t> vertical;          // the vertical pair's grid (transposed)
  ImageView<const std::uint32_t> vertical_ratio;
  VerticalLayout layout;
};

struct FusionOutput {
  Disparity16 fused;     // reference grid, horizontal scale
  Gray8 direction;       // kFusedNone / kFusedHorizontal / kFusedVertical
  Disparity16 vertical;  // the vertical pair's map on the reference grid, horizontal scale
};

// Throws ParameterError when the sizes do not fit the layout.
void fuse_trinocular(const FusionInput& in, const FusionParams& params, FusionOutput& out);

}  // namespace stereod
