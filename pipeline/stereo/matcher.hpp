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
#include "stereo/params.hpp"
#include "stereo/search_range.hpp"
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
};

struct StereoOutput {
  Disparity16 left;   // left reference: 16*d, kInvalidDisparity where there is none
  Disparity16 right;  // right reference, same encoding (empty unless asked for)
  int levels_used = 0;
  // Candidates evaluated per level (index 0 = finest), both reference views together.
  std::vector<long long> candidates;
};

class CpuStereoMatcher {
 public:
  // threads: worker threads for the row loops (0 = one per core). Results do not depend on it.
  explicit CpuStereoMatcher(const StereoParams& params = {}, unsigned threads = 0);
  ~CpuStereoMatcher();

  // Throws ParameterError when the parameters are unusable; the previous ones stay in force.
  void set_params(const StereoParams& params);
  const StereoParams& params() const { return params_; }

  // Intermediate results of the last compute() (tests compare the CUDA engine stage by stage).
  // image/view 0 = left, 1 = right.
  const Gray8& level_gray(int level, int image) const {
    return image == 0 ? levels_[level].left : levels_[level].right;
  }
  const Image<std::uint64_t>& level_census(int level, int image) const {
    return image == 0 ? levels_[level].left_census : levels_[level].right_census;
  }
  const Image<std::int16_t>& level_disparity(int level, int view) const {
    return view == 0 ? levels_[level].left_disp : levels_[level].right_disp;
  }

  // Throws ParameterError for images the parameters cannot work with (sizes differ, too small, the
  // range does not fit, too many levels).
  void compute(const StereoInput& in, StereoOutput& out);

 private:
  struct Level {
    Gray8 left, right;
    Gray8 left_ad, right_ad;  // the AD term's input (mean removed), when it differs from left/right
    Image<std::uint64_t> left_census, right_census;
    SearchRanges left_ranges, right_ranges;
    Image<std::int16_t> left_disp, right_disp;        // winners
    Image<std::int16_t> left_checked, right_checked;  // after the cross-check
  };

  void build_pyramid(const StereoInput& in, int levels);
  bool uses_mean_removal() const {
    return params_.ad_mean_radius > 0 && params_.cost != MatchingCost::kCensus;
  }

  StereoParams params_;
  CostTables costs_;
  std::unique_ptr<ThreadPool> pool_;
  std::vector<Level> levels_;
  AdaptiveWindowMatcher left_matcher_, right_matcher_;
  Disparity16 left_q4_, right_q4_;
  SpeckleFilter speckle_;
};

}  // namespace stereod
