// Host-side launchers of the stage kernels, one file per stage (kernels/<stage>.cu), in the order
// DevicePipeline::enqueue calls them. Each launcher puts its kernel(s) for every member of a batch
// on `stream` and checks the launch; none synchronises, so the whole sequence can be captured
// once as a CUDA graph and replayed. The kernels read their pairs' buffers and parameters through
// the batch record (stage_args.hpp); a launcher only needs the shape every member shares.
#pragma once

#include <cuda_runtime.h>

#include "kernels/stage_args.hpp"

namespace stereod::cuda {

// What the members of one batch share: the image size, the level structure and the switches that
// decide which kernels run (a pair whose switches differ runs in another batch).
struct BatchShape {
  int count = 1;  // members in the batch
  int width = 0, height = 0, levels = 0;
  int level_width[kMaxLevels] = {}, level_height[kMaxLevels] = {};
  bool rectify = false;
  bool derive_gray = false;   // the input is color only: gray is its luma
  bool color = false;         // the background model compares HSV (needs the color input)
  bool modeling = false;      // background model on
  bool widen = false;         // ... with background.target_margin > 0
  bool depth_ghosts = false;  // ... with background.depth_ghosts (pyramid and median variants)
  bool census = true;         // the cost has a census term
  bool mean_removal = true;   // the AD term reads mean-removed intensities
  // s = 3 without the uniqueness test or the confidence: the work-list matcher.
  bool window_path = true;
  // The window path's finest level computes the aggregations of both views once, in the left
  // view's tiles (shared_finest.cuh): more than one level (else every pixel searches the whole
  // range and none would be shared).
  bool shared_finest = false;
  bool best4 = true;  // k = 4 (the selection network for four)
  bool speckles = true;
  bool fill = false;
  bool right_output = false;  // post-process and return the right view's map too
  bool cost_ratio = false;    // return the left view's winners' cost ratios (trinocular pairs)
  bool confidence = false;    // the left view's matching confidence (match_generic.cu)
  int max_segments = 1;       // segments of the finest level's widest range
  // The multi-step refinement's voting rounds (refine.cu); -1: refine off. Then, with
  // refine_interpolate, the interpolation's launch.
  int refine_rounds = -1;
  bool refine_interpolate = false;
  // Semi-global aggregation (sgm.cu) instead of the window's winners, along sgm_paths paths; the
  // finest level's disparities size its path kernel's scratch.
  bool sgm = false;
  bool sgm_window_cost = false;  // sgm_cost window (else the pixel cost)
  // Cross-based aggregation (cross.cu) fills the volume: aggregation cross (its winners straight
  // from the volume), or sgm with sgm_cost cross (then the paths); over cross_iterations.
  bool cross = false;
  int cross_iterations = 1;
  int sgm_paths = 4;
  int max_disparity = 0;
  // The launch follows a kernel of the same frame on its stream and may overlap its tail
  // (launch.cuh); set by enqueue_stereo, not part of what members share.
  bool chained = false;

  int tiles_x(int level) const { return (level_width[level] + kTileW - 1) / kTileW; }
  int tiles_y(int level) const { return (level_height[level] + kTileH - 1) / kTileH; }
  int views_out() const { return right_output ? 2 : 1; }
};

// Rectification of both cameras (gray, or the luma of the color, and the color) through their
// fixed-point maps.
void launch_rectify(const BatchShape& shape, const BatchRecord* batch, cudaStream_t stream);

// The gray pyramid of both cameras (and, for the background model, the color pyramid and its
// HSV planes) for every level in one pass; also zeroes the members' background statistics and
// the batch's `levels` list counters (a memset node of its own cost a graph node per frame).
void launch_pyramid(const BatchShape& shape, const BatchRecord* batch, ListCounters* counters,
                    int levels, cudaStream_t stream);

// Census codes and mean-removed intensities of every level, both cameras.
void launch_census(const BatchShape& shape, const BatchRecord* batch, cudaStream_t stream);

// What the finest level of the background model raises when either camera's mask holds
// foreground in any member (widening the right mask, below, neither empties nor fills a mask, so
// it holds for that too): `word` (zeroed before the model) becomes non-zero; the gate of a gated
// graph reads it (batch_graph.cu). In a gated graph (`gated`) the finest level also writes what a
// frame without foreground outputs (what matching and post-processing give it: no disparity,
// confidence 0, no semi-global error) in every pixel; the stereo branch, when the gate opens it,
// overwrites every one of those values.
struct ForegroundSignal {
  std::uint32_t* word = nullptr;
  bool gated = false;
};

// The background model at one level (coarsest first), one kernel: classification (hierarchical),
// closing and learning, which also mark the blocks that hold foreground; the finest level raises
// `signal` (the coarser ones get an empty one).
void launch_background_model(const BatchShape& shape, const BatchRecord* batch, int level,
                             const ForegroundSignal& signal, cudaStream_t stream);
// Then, with a target margin (BatchShape::widen), the right camera's mask for matching: its
// closed decision widened by target_margin (all ones while warming up), with its block marks
// redone. Without one the model's own mask and marks are it.
void launch_background_widen(const BatchShape& shape, const BatchRecord* batch, int level,
                             cudaStream_t stream);

// Each pixel's candidate range from the coarser level (cross-checked there once per tile), and
// the level's work list: tiles without foreground get "no disparity" here and no work.
void launch_search_ranges(const BatchShape& shape, const BatchRecord* batch, const Workspace& ws,
                          int level, cudaStream_t stream);

// With BatchShape::shared_finest, at the finest level after the search ranges: each tile's work
// items from both views' unions (shared_finest.cu).
void launch_list_shared_tiles(const BatchShape& shape, const BatchRecord* batch,
                              const Workspace& ws, cudaStream_t stream);
// ... and after the matcher: the shared right pixels' winners from their slots.
void launch_right_winners(const BatchShape& shape, const BatchRecord* batch, cudaStream_t stream);

// The adaptive-window matcher (s = 3) over the work list: a fixed grid of resident blocks takes
// the items in turn, split tiles first.
void launch_match_window(const BatchShape& shape, const BatchRecord* batch, const Workspace& ws,
                         int level, cudaStream_t stream);
// How many blocks of the window matcher the current device keeps resident.
int match_window_workers();

// Any sub-window size and the uniqueness test: one block per 32 x 8 pixels, every pixel. With
// `volume` (semi-global aggregation) it writes every candidate's A into the volume instead of
// choosing winners.
void launch_match_generic(const BatchShape& shape, const BatchRecord* batch, int level,
                          cudaStream_t stream, bool volume = false);

// Semi-global aggregation at one level, after the search ranges (sgm.cu): the volume's layout (a
// scan of the range widths) and its costs (the pixel cost, launch_match_generic's volume mode, or
// launch_cross_aggregation's averages); the paths (sgm only); the winners (from S, or with
// aggregation cross from the averages themselves).
void launch_sgm_volume(const BatchShape& shape, const BatchRecord* batch, int level,
                       cudaStream_t stream);
// Cross-based aggregation at one level (cross.cu), called by launch_sgm_volume after the layout:
// each pixel's arms, then per iteration the hulls, their layout, the inner arms' sums and the
// outer arms' averages E into the volume (with sgm, S zeroed for the paths).
void launch_cross_aggregation(const BatchShape& shape, const BatchRecord* batch, int level,
                              cudaStream_t stream);
void launch_sgm_paths(const BatchShape& shape, const BatchRecord* batch, int level,
                      cudaStream_t stream);
void launch_sgm_winners(const BatchShape& shape, const BatchRecord* batch, int level,
                        cudaStream_t stream);

// Finest level, over the tiles that were matched: the left-right check of the subpixel map and
// speckle labelling within each tile; then labels joined across tile borders; then component
// sizes.
void launch_check_and_label(const BatchShape& shape, const BatchRecord* batch, cudaStream_t stream);
void launch_speckle_join(const BatchShape& shape, const BatchRecord* batch, cudaStream_t stream);
void launch_speckle_count(const BatchShape& shape, const BatchRecord* batch, cudaStream_t stream);

// With the multi-step refinement (BatchShape::refine_rounds >= 0; refine.cu): small components
// removed from the checked map in place (what speckle_median does on the fly without it) and each
// pixel's cross arms; then voting round k (0 ..) from the map before it (the checked map for k =
// 0) into MemberArgs::refined[view][k & 1].
void launch_refine_prepare(const BatchShape& shape, const BatchRecord* batch, cudaStream_t stream);
void launch_refine_round(const BatchShape& shape, const BatchRecord* batch, int round,
                         cudaStream_t stream);
// Mei's interpolation of the holes left after the rounds (stereo.refine_interpolate), from the
// last round's map into MemberArgs::refine_interpolated.
void launch_refine_interpolate(const BatchShape& shape, const BatchRecord* batch,
                               cudaStream_t stream);

// The output map of every tile: small components removed, then the 3x3 median (tiles that were
// not matched get "no disparity"). With the refinement: the median of the last round's map (every
// tile: voting may give a hole of an unmatched tile a disparity).
void launch_speckle_median(const BatchShape& shape, const BatchRecord* batch, cudaStream_t stream);

// Scanline hole filling of the output maps (dense output).
void launch_fill(const BatchShape& shape, const BatchRecord* batch, cudaStream_t stream);

}  // namespace stereod::cuda
