// Host-side launchers of the stereo kernels. Each takes device pointers and a stream, launches,
// and checks the launch; none synchronises. Both views (or both images) go in one launch.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "stereo/cost.hpp"

namespace stereod::cuda {

// Per level: census and mean-removed AD input of both images from their gray level, and the next
// coarser gray level (when `down` is set).
struct PreprocessArgs {
  const std::uint8_t* gray[2] = {nullptr, nullptr};
  std::uint64_t* census[2] = {nullptr, nullptr};  // null: no census term
  std::uint8_t* ad[2] = {nullptr, nullptr};       // null: AD reads gray directly
  std::uint8_t* down[2] = {nullptr, nullptr};     // null at the coarsest level
  int width = 0, height = 0;
  int down_width = 0, down_height = 0;
  int census_width = 0, census_height = 0;
  int ad_radius = 0;
};
void launch_preprocess(const PreprocessArgs& a, cudaStream_t stream);

struct MatchViewArgs {
  const std::uint8_t* ref_ad = nullptr;  // AD-term input
  const std::uint8_t* tgt_ad = nullptr;
  const std::uint64_t* ref_census = nullptr;
  const std::uint64_t* tgt_census = nullptr;
  const std::uint8_t* ref_fg = nullptr;  // null: every pixel foreground
  const std::uint8_t* tgt_fg = nullptr;
  const std::int16_t* parent_this = nullptr;   // coarser level's raw map of this view (null: coarsest)
  const std::int16_t* parent_other = nullptr;  // and of the other view, for the cross-check
  std::int16_t* out_disp = nullptr;
  std::uint16_t* out_q4 = nullptr;  // finest level: 16*d + subpixel offset
  int direction = -1;
};

struct MatchArgs {
  MatchViewArgs view[2];
  int width = 0, height = 0;
  int parent_width = 0, parent_height = 0;
  int disparities = 0;
  int subwindow = 3, best_k = 4, parent_radius = 2;
  bool cross_check = true;  // parent values are cross-checked before they bound the ranges
  int tolerance = 1;
  bool subpixel = false;
  int uniqueness = 0;
  CostTables tables;
};
void launch_match(const MatchArgs& a, cudaStream_t stream);

// Finest level: keeps q4 values whose integer disparities pass the left-right check.
struct FinalCheckArgs {
  const std::int16_t* disp[2] = {nullptr, nullptr};
  std::uint16_t* q4[2] = {nullptr, nullptr};
  int width = 0, height = 0;
  int tolerance = 1;
  bool enabled = true;
};
void launch_final_check(const FinalCheckArgs& a, cudaStream_t stream);

// Speckle removal on both q4 maps (union-find connected components).
struct SpeckleArgs {
  std::uint16_t* q4[2] = {nullptr, nullptr};
  std::int32_t* parent[2] = {nullptr, nullptr};  // width*height scratch each
  std::int32_t* count[2] = {nullptr, nullptr};   // width*height scratch each
  int width = 0, height = 0;
  int min_size = 0;
  int max_step = 16;
};
void launch_speckle(const SpeckleArgs& a, cudaStream_t stream);

struct MedianArgs {
  const std::uint16_t* in[2] = {nullptr, nullptr};
  std::uint16_t* out[2] = {nullptr, nullptr};
  int width = 0, height = 0;
  bool enabled = true;  // false: copy
};
void launch_median(const MedianArgs& a, cudaStream_t stream);

struct FillArgs {
  std::uint16_t* disp[2] = {nullptr, nullptr};
  const std::uint8_t* intensity[2] = {nullptr, nullptr};
  const std::uint8_t* fg[2] = {nullptr, nullptr};  // null: every pixel foreground
  int width = 0, height = 0;
  bool background_mode = true;
  int interpolate_max = 3;
};
void launch_fill(const FillArgs& a, cudaStream_t stream);

}  // namespace stereod::cuda
