#include "cpu_pair_processor.hpp"

#include <chrono>

#include "background/morphology.hpp"

namespace stereod {

CpuPairProcessor::CpuPairProcessor(const StereoParams& stereo, const BackgroundParams& background,
                                   unsigned threads,
                                   std::shared_ptr<const RectificationMap> left_map,
                                   std::shared_ptr<const RectificationMap> right_map)
    : pool_(ThreadPool::for_threads(threads)),
      left_map_(std::move(left_map)),
      right_map_(std::move(right_map)),
      matcher_(stereo, pool_),
      left_model_(background),
      right_model_(background) {
  if (!left_map_ != !right_map_) {
    throw ParameterError("calibration", "rectification needs maps for both cameras or neither");
  }
}

void CpuPairProcessor::set_params(const StereoParams& stereo, const BackgroundParams& background) {
  validate_params(stereo);
  validate_background_params(background);
  matcher_.set_params(stereo);
  left_model_.set_params(background);
  right_model_.set_params(background);
}

void CpuPairProcessor::model_camera(ImageView<const std::uint8_t> gray, const RgbView& color,
                                    BackgroundModel& model, BackgroundPlanes& planes,
                                    std::vector<Gray8>& masks, BackgroundStats& stats, int levels) {
  if (model.params().color && !color.empty()) {
    if (color.width != gray.width || color.height != gray.height) {
      throw ParameterError("color", "color image is " + std::to_string(color.width) + "x" +
                                        std::to_string(color.height) + ", gray is " +
                                        std::to_string(gray.width) + "x" +
                                        std::to_string(gray.height));
    }
    make_hsv_planes(color, levels, planes);
  } else {
    make_gray_planes(gray, levels, planes);
  }
  model.process(planes, masks, &stats, pool_.get());
}

void CpuPairProcessor::process(const PairFrame& raw, PairOutput& out) {
  PairFrame f = raw;
  if (left_map_) {
    // Rectify first: everything after sees rectified gray and color.
    const RectificationMap* maps[2] = {left_map_.get(), right_map_.get()};
    const ImageView<const std::uint8_t> gray[2] = {raw.left, raw.right};
    const RgbView color[2] = {raw.left_color, raw.right_color};
    for (int i = 0; i < 2; ++i) {
      remap(gray[i], *maps[i], rect_gray_[i]);
      if (!color[i].empty()) remap_rgb(color[i], *maps[i], rect_color_[i]);
    }
    f.left = rect_gray_[0].view();
    f.right = rect_gray_[1].view();
    f.left_color = raw.left_color.empty() ? RgbView{} : view_of(rect_color_[0]);
    f.right_color = raw.right_color.empty() ? RgbView{} : view_of(rect_color_[1]);
  }
  const StereoParams& sp = matcher_.params();
  validate_for_images(sp, f.left.width, f.left.height, f.right.width, f.right.height);
  const int levels = effective_levels(sp);
  StereoInput in;
  in.left = f.left;
  in.right = f.right;
  in.right_output = f.right_output;
  in.cost_ratio_output = f.cost_ratio_output;
  in.confidence = f.confidence;
  const bool modeling = left_model_.params().enabled;
  const auto t0 = std::chrono::steady_clock::now();
  if (modeling) {
    // The two models are independent: the right one runs beside the left one.
    pool_->parallel_for(2, [&](int begin, int end) {
      for (int camera = begin; camera < end; ++camera) {
        if (camera == 0) {
          model_camera(f.left, f.left_color, left_model_, left_planes_, out.left_masks,
                       out.left_stats, levels);
        } else {
          model_camera(f.right, f.right_color, right_model_, right_planes_, out.right_masks,
                       out.right_stats, levels);
        }
      }
    });
    for (const auto& m : out.left_masks) in.left_foreground.push_back(m.view());
    // The right view is matched, and left candidates are allowed, wherever the right pixel is
    // not confidently background: within target_margin of the right foreground.
    out.right_targets.resize(out.right_masks.size());
    for (std::size_t s = 0; s < out.right_masks.size(); ++s) {
      dilate_mask(out.right_masks[s], right_model_.params().target_margin, out.right_targets[s],
                  widen_scratch_);
      in.right_foreground.push_back(out.right_targets[s].view());
    }
    out.background_active = !out.left_stats.warming_up;
    const long long pixels = out.left_stats.pixels[0] + out.right_stats.pixels[0];
    out.tested_fraction =
        out.background_active
            ? double(out.left_stats.tested[0] + out.right_stats.tested[0]) / pixels
            : 1.0;
  } else {
    out.left_masks.clear();
    out.right_masks.clear();
    out.right_targets.clear();
    out.background_active = false;
    out.tested_fraction = 1.0;
  }
  const double model_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  matcher_.compute(in, out.stereo);
  // Ghosts seen in depth: the model of a later frame compares this disparity with the static depth.
  if (modeling) left_model_.record_disparity(out.stereo.left);
  out.stage_times.assign(1, StageTime{"background model (both cameras, every level)", model_ms});
  out.stage_times.insert(out.stage_times.end(), out.stereo.stage_times.begin(),
                         out.stereo.stage_times.end());
  out.foreground.ensure_size(f.left.width, f.left.height);
  if (modeling) {
    const Gray8& m = out.left_masks[0];
    for (std::size_t i = 0; i < m.size(); ++i) out.foreground.data()[i] = m.data()[i] ? 255 : 0;
  } else {
    out.foreground.fill(255);
  }
}

}  // namespace stereod
