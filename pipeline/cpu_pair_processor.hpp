// One camera pair's per-frame work on the CPU, in order: background model of each camera (it keeps
// state from frame to frame), then the matcher with the foreground masks. This is the reference
// the CUDA engine is compared with, frame by frame, model state included.
#pragma once

#include <memory>
#include <vector>

#include "background/background_model.hpp"
#include "frame.hpp"
#include "rectify/remap.hpp"
#include "stereo/matcher.hpp"
#include "thread_pool.hpp"

namespace stereod {

struct PairFrame {
  ImageView<const std::uint8_t> left, right;  // gray
  RgbView left_color, right_color;            // optional
  bool right_output = true;                   // post-process the right view's map too
  bool cost_ratio_output = false;  // the winners' cost ratios too (StereoOutput::cost_ratio)
  bool confidence = false;         // the left view's matching confidence too
};

struct PairOutput {
  StereoOutput stereo;
  Gray8 foreground;                            // left, full resolution, 255 = foreground
  std::vector<Gray8> left_masks, right_masks;  // per level, 1 = foreground
  // What matching reads for the right camera: right_masks widened by background.target_margin
  // (the same as right_masks when it is 0).
  std::vector<Gray8> right_targets;
  BackgroundStats left_stats, right_stats;
  bool background_active = false;
  double tested_fraction = 1.0;        // full-resolution pixels of both cameras tested individually
  std::vector<StageTime> stage_times;  // the background model, then the matcher's stages
};

class CpuPairProcessor {
 public:
  // threads: 0 runs on the process's shared pool, n on a pool of n threads of its own (1: all on
  // the caller). left_map / right_map: rectification applied to each frame first (both or
  // neither; null: frames are already rectified).
  CpuPairProcessor(const StereoParams& stereo, const BackgroundParams& background,
                   unsigned threads = 0, std::shared_ptr<const RectificationMap> left_map = nullptr,
                   std::shared_ptr<const RectificationMap> right_map = nullptr);
  // Throws ParameterError and keeps the old parameters when either set is unusable.
  void set_params(const StereoParams& stereo, const BackgroundParams& background);
  // Throws ParameterError for frames the parameters cannot work with.
  void process(const PairFrame& frame, PairOutput& out);

  const BackgroundModel& left_model() const { return left_model_; }
  const BackgroundModel& right_model() const { return right_model_; }
  const CpuStereoMatcher& matcher() const { return matcher_; }
  ThreadPool& pool() const { return *pool_; }

 private:
  void model_camera(ImageView<const std::uint8_t> gray, const RgbView& color,
                    BackgroundModel& model, BackgroundPlanes& planes, std::vector<Gray8>& masks,
                    BackgroundStats& stats, int levels);

  std::shared_ptr<ThreadPool> pool_;
  std::shared_ptr<const RectificationMap> left_map_, right_map_;
  Gray8 rect_gray_[2];
  RgbImage rect_color_[2];
  CpuStereoMatcher matcher_;
  BackgroundModel left_model_, right_model_;
  BackgroundPlanes left_planes_, right_planes_;
  Gray8 widen_scratch_;
};

}  // namespace stereod
