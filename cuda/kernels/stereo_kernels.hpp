// Host-side launchers of the stereo kernels. Each takes device pointers and a stream, launches,
// and checks the launch; none synchronises. Both views (or both images) go in one launch.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "stereo/cost.hpp"

namespace stereod::cuda {

// Rectification of both cameras' frames (gray, and interleaved RGB when given) through their
// fixed-point maps: remap_bilinear_at (pipeline/rectify/remap.hpp), the CPU's own arithmetic.
struct RectifyArgs {
  const std::uint8_t* gray[2] = {nullptr, nullptr};
  const std::uint8_t* rgb[2] = {nullptr, nullptr};
  const std::int32_t* map[2] = {nullptr, nullptr};  // sx, sy per pixel, 1/256 pixel
  std::uint8_t* out_gray[2] = {nullptr, nullptr};
  std::uint8_t* out_rgb[2] = {nullptr, nullptr};
  int width = 0, height = 0;
};
void launch_rectify(const RectifyArgs& a, cudaStream_t stream);

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
  const std::int16_t* parent_this =
      nullptr;  // coarser level's raw map of this view (null: coarsest)
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
// Scratch of the chunked s = 3 path: per-pixel ranges, per-tile unions, per-pixel best keys and
// (finest level) the parabola neighbours found by each chunk. Sized by match_scratch_sizes().
struct MatchScratch {
  std::int16_t* lo[2] = {nullptr, nullptr};
  std::int16_t* hi[2] = {nullptr, nullptr};
  std::int32_t* tile_lo[2] = {nullptr, nullptr};
  std::int32_t* tile_hi[2] = {nullptr, nullptr};
  std::uint32_t* key[2] = {nullptr, nullptr};   // (cost << 16) | d, the minimum over chunks
  std::uint32_t* cmcp[2] = {nullptr, nullptr};  // [chunk][pixel]: (A(d-1) << 16) | A(d+1)
  // The (tile, view, chunk) blocks that have work, listed by ranges_kernel (capacity: work_items)
  // and taken in turn by a fixed number of chunk_kernel blocks. counters[0]: items listed,
  // counters[1]: items taken.
  std::uint32_t* work = nullptr;
  std::uint32_t* counters = nullptr;
  int workers = 0;  // chunk_kernel blocks: as many as the GPU keeps resident
};
struct MatchScratchSizes {
  std::size_t pixels = 0, tiles = 0, chunks = 0;
  std::size_t work_items = 0;  // tiles x 2 views x chunks
};
// How many chunk_kernel blocks the current device keeps resident at once (for MatchScratch).
int match_workers();
// What the chunked path needs for a level of this size and range (chunks = 0: it is not used).
MatchScratchSizes match_scratch_sizes(int width, int height, int disparities, int subwindow);

// Matching one level. With s = 3 and no uniqueness test the work is split into chunks of
// disparities (needs `scratch`); otherwise one kernel does it.
void launch_match(const MatchArgs& a, const MatchScratch& scratch, cudaStream_t stream);

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
