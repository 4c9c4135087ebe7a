// L-shaped trinocular rigs (Yao 2012; issue 17): a reference camera, a horizontal partner beside it
// (to its right, like a pair's right camera) and a vertical partner above or below it. Both pairs
// run through the ordinary pair matcher: the vertical pair on transposed images (and, when the
// partner is above, flipped along the transposed rows), so that its partner is again "to the
// right" and the matcher needs no new indexing. Its disparities are then brought back to the
// reference's pixel grid and to the horizontal pair's scale, and the two maps are fused per pixel
// by the cost-ratio rule below. Plain C++ on the engines' outputs: the same for both engines.
// The transpositions and the fusion work tile by tile (a tile's reads and writes both stay in
// the cache, where a column walk touches a new cache line per pixel) and split their tiles over a
// ThreadPool when given one; every pixel is computed alone, so the result never depends on how.
#pragma once

#include <cstdint>

#include "frame.hpp"
#include "image.hpp"
#include "stereo/pixel_ops.hpp"

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

class ThreadPool;

// src (w x h) into the vertical pair's frame (h x w), on `pool`'s threads when given.
void to_vertical_frame(ImageView<const std::uint8_t> src, const VerticalLayout& layout, Gray8& dst,
                       ThreadPool* pool = nullptr);
void to_vertical_frame(const RgbView& src, const VerticalLayout& layout, RgbImage& dst,
                       ThreadPool* pool = nullptr);
// The same into memory the caller owns (e.g. page-locked input for the CUDA engine): dst is h
// pixels wide and w high; for RGB, dst counts bytes (3 h wide). Throws ParameterError when dst
// does not have that size.
void to_vertical_frame(ImageView<const std::uint8_t> src, const VerticalLayout& layout,
                       ImageView<std::uint8_t> dst, ThreadPool* pool = nullptr);
void to_vertical_frame(const RgbView& src, const VerticalLayout& layout,
                       ImageView<std::uint8_t> dst_bytes, ThreadPool* pool = nullptr);

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

// The rule for one pixel: dh the horizontal disparity, dv the vertical one already scaled (either
// kInvalidDisparity), rh and rv their winners' cost ratios. A pixel with one disparity takes it.
// Written without branches: on a noisy map which side wins is as good as random, and a
// mispredicted branch per pixel costs more than the whole rule.
STEREOD_HD std::uint8_t fused_direction(std::uint16_t dh, std::uint16_t dv, std::uint32_t rh,
                                        std::uint32_t rv, std::uint32_t ratio_q8) {
  const unsigned h_ok = dh != kInvalidDisparity, v_ok = dv != kInvalidDisparity;
  const unsigned v_sharper = std::uint64_t{rv} * 256u < std::uint64_t{ratio_q8} * rh;
  const unsigned vertical = v_ok & ((h_ok ^ 1u) | v_sharper);
  return static_cast<std::uint8_t>(vertical * kFusedVertical + (h_ok & (vertical ^ 1u)));
}

// The fused disparity of a pixel whose direction is `which`, without branches either.
STEREOD_HD std::uint16_t fused_disparity(std::uint8_t which, std::uint16_t dh, std::uint16_t dv) {
  const unsigned from_h = 0u - unsigned{which == kFusedHorizontal};
  const unsigned from_v = 0u - unsigned{which == kFusedVertical};
  const unsigned none = 0u - unsigned{which == kFusedNone};
  return static_cast<std::uint16_t>((dh & from_h) | (dv & from_v) | (kInvalidDisparity & none));
}

// One vertical disparity (16 d, vertical pair's scale) in the horizontal scale, rounded to the
// nearest sixteenth; kInvalidDisparity stays so, and so does one above max_q4.
std::uint16_t scale_vertical_disparity(std::uint16_t q4, double scale, int max_q4);

struct FusionInput {
  ImageView<const std::uint16_t> horizontal;        // reference grid, 16 d
  ImageView<const std::uint32_t> horizontal_ratio;  // winners' cost ratios, kNoCost where none
  ImageView<const std::uint16_t> vertical;          // the vertical pair's grid (transposed)
  ImageView<const std::uint32_t> vertical_ratio;
  VerticalLayout layout;
  // The reference camera's foreground mask (0: background): background pixels get no fused
  // disparity and direction kFusedNone (the vertical map keeps its value). Empty: all foreground.
  ImageView<const std::uint8_t> foreground;
};

struct FusionOutput {
  Disparity16 fused;     // reference grid, horizontal scale
  Gray8 direction;       // kFusedNone / kFusedHorizontal / kFusedVertical
  Disparity16 vertical;  // the vertical pair's map on the reference grid, horizontal scale
};

// Throws ParameterError when the sizes do not fit the layout. On `pool`'s threads when given.
void fuse_trinocular(const FusionInput& in, const FusionParams& params, FusionOutput& out,
                     ThreadPool* pool = nullptr);

}  // namespace stereod
