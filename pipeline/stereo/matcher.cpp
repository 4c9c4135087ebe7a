#include "stereo/matcher.hpp"

#include "stereo/census.hpp"
#include "stereo/cross_check.hpp"
#include "stereo/mean_removal.hpp"
#include "stereo/pixel_ops.hpp"
#include "stereo/post_process.hpp"
#include "stereo/pyramid.hpp"
#include "thread_pool.hpp"

namespace stereod {
namespace {

ImageView<const std::uint8_t> mask_at(const std::vector<ImageView<const std::uint8_t>>& masks,
                                      int scale) {
  return masks.empty() ? ImageView<const std::uint8_t>{} : masks[static_cast<std::size_t>(scale)];
}

void check_masks(const std::vector<ImageView<const std::uint8_t>>& masks, const char* name,
                 int width, int height, int levels) {
  if (masks.empty()) return;
  if (static_cast<int>(masks.size()) < levels) {
    throw ParameterError(name, std::string(name) + ": " + std::to_string(masks.size()) +
                                   " mask levels given, the matcher uses " +
                                   std::to_string(levels));
  }
  for (int s = 0; s < levels; ++s) {
    const int w = level_side(width, s), h = level_side(height, s);
    if (masks[s].width != w || masks[s].height != h) {
      throw ParameterError(name, std::string(name) + "[" + std::to_string(s) + "] is " +
                                     std::to_string(masks[s].width) + "x" +
                                     std::to_string(masks[s].height) + ", expected " +
                                     std::to_string(w) + "x" + std::to_string(h));
    }
  }
}

// Keeps the subpixel value where the integer disparity survived the cross-check.
void apply_check(const Image<std::int16_t>& checked, Disparity16& q4) {
  for (std::size_t i = 0; i < q4.size(); ++i) {
    if (checked.data()[i] == kNoDisparity) q4.data()[i] = kInvalidDisparity;
  }
}

}  // namespace

CpuStereoMatcher::CpuStereoMatcher(const StereoParams& params, unsigned threads)
    : pool_(std::make_unique<ThreadPool>(threads)) {
  set_params(params);
}

CpuStereoMatcher::~CpuStereoMatcher() = default;

void CpuStereoMatcher::set_params(const StereoParams& params) {
  validate_params(params);
  params_ = params;
  costs_ = make_cost_tables(params_);
}

void CpuStereoMatcher::build_pyramid(const StereoInput& in, int levels) {
  levels_.resize(static_cast<std::size_t>(levels));
  copy_into(in.left, levels_[0].left);
  copy_into(in.right, levels_[0].right);
  for (int s = 1; s < levels; ++s) {
    downsample(levels_[s - 1].left.view(), levels_[s].left, pool_.get());
    downsample(levels_[s - 1].right.view(), levels_[s].right, pool_.get());
  }
  if (costs_.uses_census) {
    for (auto& lv : levels_) {
      census_transform(lv.left.view(), params_.census_width, params_.census_height, lv.left_census,
                       pool_.get());
      census_transform(lv.right.view(), params_.census_width, params_.census_height,
                       lv.right_census, pool_.get());
    }
  }
  if (uses_mean_removal()) {
    for (auto& lv : levels_) {
      remove_local_mean(lv.left.view(), params_.ad_mean_radius, lv.left_ad, pool_.get());
      remove_local_mean(lv.right.view(), params_.ad_mean_radius, lv.right_ad, pool_.get());
    }
  }
}

void CpuStereoMatcher::compute(const StereoInput& in, StereoOutput& out) {
  validate_for_images(params_, in.left.width, in.left.height, in.right.width, in.right.height);
  const int levels = effective_levels(params_);
  check_masks(in.left_foreground, "left_foreground", in.left.width, in.left.height, levels);
  check_masks(in.right_foreground, "right_foreground", in.right.width, in.right.height, levels);
  build_pyramid(in, levels);
  out.levels_used = levels;
  out.candidates.assign(static_cast<std::size_t>(levels), 0);

  for (int s = levels - 1; s >= 0; --s) {
    Level& lv = levels_[s];
    const int w = lv.left.width(), h = lv.left.height();
    const int disparities = level_disparities(params_.max_disparity, s);
    const auto left_fg = mask_at(in.left_foreground, s);
    const auto right_fg = mask_at(in.right_foreground, s);
    if (s == levels - 1) {
      full_search_ranges(w, h, left_fg, disparities, lv.left_ranges);
      full_search_ranges(w, h, right_fg, disparities, lv.right_ranges);
    } else {
      const Level& parent = levels_[s + 1];
      parent_search_ranges(parent.left_checked, w, h, left_fg, params_.parent_radius, disparities,
                           lv.left_ranges, pool_.get());
      parent_search_ranges(parent.right_checked, w, h, right_fg, params_.parent_radius, disparities,
                           lv.right_ranges, pool_.get());
    }

    LevelMatchOptions opt;
    opt.disparities = disparities;
    opt.subwindow = params_.subwindow;
    opt.best_k = params_.best_k;
    opt.uniqueness = params_.uniqueness;
    opt.subpixel = s == 0;
    const bool census = costs_.uses_census;
    const bool mean_removed = uses_mean_removal();
    const Gray8& left_ad = mean_removed ? lv.left_ad : lv.left;
    const Gray8& right_ad = mean_removed ? lv.right_ad : lv.right;
    MatchSide left_side{left_ad.view(),
                        right_ad.view(),
                        census ? lv.left_census.view() : ImageView<const std::uint64_t>{},
                        census ? lv.right_census.view() : ImageView<const std::uint64_t>{},
                        right_fg,
                        -1};
    MatchSide right_side{right_ad.view(),
                         left_ad.view(),
                         census ? lv.right_census.view() : ImageView<const std::uint64_t>{},
                         census ? lv.left_census.view() : ImageView<const std::uint64_t>{},
                         left_fg,
                         +1};
    left_matcher_.match(left_side, lv.left_ranges, costs_, opt, lv.left_disp,
                        s == 0 ? &left_q4_ : nullptr, pool_.get());
    right_matcher_.match(right_side, lv.right_ranges, costs_, opt, lv.right_disp,
                         s == 0 ? &right_q4_ : nullptr, pool_.get());
    out.candidates[s] =
        left_matcher_.candidates_evaluated() + right_matcher_.candidates_evaluated();

    if (params_.cross_check) {
      cross_check(lv.left_disp, lv.right_disp, params_.cross_check_tolerance, lv.left_checked,
                  lv.right_checked, pool_.get());
    } else {
      lv.left_checked = lv.left_disp;
      lv.right_checked = lv.right_disp;
    }
  }

  Level& finest = levels_[0];
  apply_check(finest.left_checked, left_q4_);
  apply_check(finest.right_checked, right_q4_);
  // The right view's map is post-processed only when the caller wants it (the left-right check
  // above is all the left map needs from it).
  const int step = params_.speckle_range * kSubpixelScale;
  if (params_.speckle_size > 0) {
    speckle_.apply(left_q4_, params_.speckle_size, step);
    if (in.right_output) speckle_.apply(right_q4_, params_.speckle_size, step);
  }
  if (params_.median) {
    median3x3(left_q4_, out.left, pool_.get());
    if (in.right_output) median3x3(right_q4_, out.right, pool_.get());
  } else {
    out.left = left_q4_;
    if (in.right_output) out.right = right_q4_;
  }
  if (params_.fill) {
    fill_holes(out.left, finest.left.view(), mask_at(in.left_foreground, 0), params_.fill_mode,
               params_.fill_interpolate_max, pool_.get());
    if (in.right_output) {
      fill_holes(out.right, finest.right.view(), mask_at(in.right_foreground, 0), params_.fill_mode,
                 params_.fill_interpolate_max, pool_.get());
    }
  }
  if (!in.right_output) out.right.resize(0, 0);
}

}  // namespace stereod
