// The CPU reference matcher: coarse-to-fine adaptive-window stereo for one rectified pair
// (docs/ALGORITHM.md, steps 1, 2 and 4-8). Plain C++ that the CUDA engine must match bit
// for bit; each stage lives in its own file next to this one and is tested on its own.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "image.hpp"
#include "stereo/adaptive_window.hpp"
#include "stereo/cost.hpp"
#include "stereo/cross_aggregation.hpp"
#include "stereo/params.hpp"
#include "stereo/refinement.hpp"
#include "stereo/search_range.hpp"
#include "stereo/sgm.hpp"
#include "stereo/speckle.hpp"

namespace stereod {

class ThreadPool;

struct StereoInput {
  ImageView<const std::uint8_t> left;  // rectified 8-bit gray
  ImageView<const std::uint8_t> right;
  // Foreground masks per pyramid level, index 0 = full resolution (1 = foreground). Empty: every
  // pixel is foreground. When given they must cover every level the matcher uses.
  std::vector<ImageView<const std::uint8_t>> left_foreground;
  std::vector<ImageView<const std::uint8_t>> right_foreground;
  // Post-process the right view's map too (StereoOutput::right); off, it stays empty.
  bool right_output = true;
  // Also return the left view's winners' cost ratios at the finest level (StereoOutput::
  // cost_ratio); off, it stays empty and costs nothing.
  bool cost_ratio_output = false;
  // Also compute the left view's matching confidence (StereoOutput::confidence).
  bool confidence = false;
};

// Wall-clock time of one stage of a frame (both views together), for profiles.
struct StageTime {
  const char* stage;  // a string literal
  double ms = 0;
};

struct StereoOutput {
  Disparity16 left;   // left reference: 16*d, kInvalidDisparity where there is none
  Disparity16 right;  // right reference, same encoding (empty unless asked for)
  // With StereoInput::cost_ratio_output: per full-resolution left pixel, how sharply the finest
  // level's integer winner d stands out of its neighbours' aggregated costs,
  // winner_cost_ratio(A(d - 1), A(d), A(d + 1)) (pixel_ops.hpp; A as docs/ALGORITHM.md
  // "Adaptive window" defines it), before the cross-check and post-processing; kNoCost where the
  // finest level chose nothing. Empty otherwise.
  Image<std::uint32_t> cost_ratio;
  // With StereoInput::confidence, each left pixel's confidence8 (stereo/confidence.hpp) from the
  // finest level's matching; 0 where the cross-check, the speckle filter or the median left the
  // pixel no disparity (so also where hole filling then gave it one). Empty otherwise.
  Gray8 confidence;
  int levels_used = 0;
  // Candidates evaluated per level (index 0 = finest), both reference views together.
  std::vector<long long> candidates;
  // Where compute() spent its time, stage by stage in order (stereod-bench speed --profile).
  std::vector<StageTime> stage_times;
};

class CpuStereoMatcher {
 public:
  // threads: 0 runs the row loops on the process's shared pool, n on a pool of n threads of its own
  // (1: all on the caller). Results do not depend on it.
  explicit CpuStereoMatcher(const StereoParams& params = {}, unsigned threads = 0);
  CpuStereoMatcher(const StereoParams& params, std::shared_ptr<ThreadPool> pool);
  ~CpuStereoMatcher();

  // Throws ParameterError when the parameters are unusable; the previous ones stay in force.
  void set_params(const StereoParams& params);
  const StereoParams& params() const { return params_; }

  // Intermediate results of the last compute() (tests compare the CUDA engine stage by stage).
  // image/view 0 = left, 1 = right.
  const Gray8& level_gray(int level, int image) const { return levels_[level].gray[image]; }
  const Image<std::uint64_t>& level_census(int level, int image) const {
    return levels_[level].census[image];
  }
  const Image<std::int16_t>& level_disparity(int level, int view) const {
    return levels_[level].disp[view];
  }

  // Throws ParameterError for images the parameters cannot work with (sizes differ, too small, the
  // range does not fit, too many levels).
  void compute(const StereoInput& in, StereoOutput& out);

 private:
  // One pyramid level; index 0 = the left image and left-reference view, 1 = the right ones.
  struct Level {
    Gray8 gray[2];
    Gray8 ad[2];  // the AD term's input (mean removed), when it differs from gray
    Image<std::uint64_t> census[2];
    SearchRanges ranges[2];
    Image<std::int16_t> disp[2];     // winners
    Image<std::int16_t> checked[2];  // after the cross-check
  };

  void build_pyramid(const StereoInput& in, int levels);
  void match_level(const StereoInput& in, int s, StereoOutput& out);
  void post_process(const StereoInput& in, StereoOutput& out);
  // The multi-step refinement of view v's finest map q4_[v] (refinement.hpp).
  void refine(const StereoInput& in, int v);
  // Cross-based aggregation of a level's two views into volumes_.
  void aggregate_cross(Level& lv, const ViewMatch (&views)[2]);
  // The semi-global pass's options at level s; `scale`: the costs' units per pixel cost.
  SgmOptions sgm_options(int s, int disparities, std::uint32_t scale) const;
  bool uses_cross() const { return uses_cross_aggregation(params_); }
  bool uses_mean_removal() const {
    return params_.ad_mean_radius > 0 && params_.cost != MatchingCost::kCensus;
  }

  StereoParams params_;
  CostTables costs_;
  std::shared_ptr<ThreadPool> pool_;
  std::vector<Level> levels_;
  AdaptiveWindowMatcher matcher_;
  SgmMatcher sgm_;
  CostVolume volumes_[2];  // with aggregation sgm or cross: each view's costs over its ranges
  CrossArms arms_[2];
  CrossAggregator cross_[2];
  Disparity16 q4_[2];
  SpeckleFilter speckle_[2];
  Refiner refiner_[2];
  Disparity16 unrefined_;  // the left map before the refinement, for the confidence
};

}  // namespace stereod
