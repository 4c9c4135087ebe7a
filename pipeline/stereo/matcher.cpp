#include "stereo/matcher.hpp"

#include <chrono>

#include "stereo/census.hpp"
#include "stereo/cross_check.hpp"
#include "stereo/cross_ops.hpp"
#include "stereo/mean_removal.hpp"
#include "stereo/pixel_ops.hpp"
#include "stereo/post_process.hpp"
#include "stereo/pyramid.hpp"
#include "thread_pool.hpp"

namespace stereod {
namespace {

// The confidence belongs to the matcher's own disparities: 0 wherever the checked map (after the
// cross-check and the speckle filter) or the median's output has none; called with each. Hole
// filling, which comes after, only gives disparities to pixels without one, so those keep 0; so
// does the refinement's voting at holes (its changes at depth edges: below).
void keep_confidence_where_matched(const Disparity16& map, Gray8& confidence) {
  for (int y = 0; y < confidence.height(); ++y) {
    const std::uint16_t* m = map.row(y);
    std::uint8_t* out = confidence.row(y);
    for (int x = 0; x < confidence.width(); ++x) {
      if (m[x] == kInvalidDisparity) out[x] = 0;
    }
  }
}

// Nor to a disparity the refinement changed (at a depth edge): 0 wherever `after` differs from
// `before`.
void keep_confidence_where_unchanged(const Disparity16& before, const Disparity16& after,
                                     Gray8& confidence) {
  for (std::size_t i = 0; i < confidence.size(); ++i) {
    if (before.data()[i] != after.data()[i]) confidence.data()[i] = 0;
  }
}

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

// Appends the time since the last lap to a frame's stage list.
class StageClock {
 public:
  explicit StageClock(std::vector<StageTime>& times) : times_(times) { times_.clear(); }
  void lap(const char* stage) {
    const auto now = std::chrono::steady_clock::now();
    times_.push_back({stage, std::chrono::duration<double, std::milli>(now - last_).count()});
    last_ = now;
  }

 private:
  std::vector<StageTime>& times_;
  std::chrono::steady_clock::time_point last_ = std::chrono::steady_clock::now();
};

// Keeps the subpixel value where the integer disparity survived the cross-check.
void apply_check(const Image<std::int16_t>& checked, Disparity16& q4) {
  for (std::size_t i = 0; i < q4.size(); ++i) {
    if (checked.data()[i] == kNoDisparity) q4.data()[i] = kInvalidDisparity;
  }
}

}  // namespace

CpuStereoMatcher::CpuStereoMatcher(const StereoParams& params, unsigned threads)
    : CpuStereoMatcher(params, ThreadPool::for_threads(threads)) {}

CpuStereoMatcher::CpuStereoMatcher(const StereoParams& params, std::shared_ptr<ThreadPool> pool)
    : pool_(std::move(pool)) {
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
  copy_into(in.left, levels_[0].gray[0]);
  copy_into(in.right, levels_[0].gray[1]);
  ThreadPool* pool = pool_.get();
  // Each image's pyramid, then each level's census codes and mean-removed intensities; the two
  // images side by side, each stage's rows spread further.
  pool->parallel_for(2, [&](int i0, int i1) {
    for (int i = i0; i < i1; ++i) {
      for (int s = 1; s < levels; ++s) {
        downsample(levels_[s - 1].gray[i].view(), levels_[s].gray[i], pool);
      }
      for (auto& lv : levels_) {
        if (costs_.uses_census) {
          census_transform(lv.gray[i].view(), params_.census_width, params_.census_height,
                           lv.census[i], pool);
        }
        if (uses_mean_removal()) {
          remove_local_mean(lv.gray[i].view(), params_.ad_mean_radius, lv.ad[i], pool);
        }
      }
    }
  });
}

void CpuStereoMatcher::match_level(const StereoInput& in, int s, StereoOutput& out) {
  Level& lv = levels_[s];
  const int w = lv.gray[0].width(), h = lv.gray[0].height();
  const int disparities = level_disparities(params_.max_disparity, s);
  const bool coarsest = s == static_cast<int>(levels_.size()) - 1;
  LevelMatchOptions opt;
  opt.disparities = disparities;
  opt.subwindow = params_.subwindow;
  opt.best_k = params_.best_k;
  opt.uniqueness = params_.uniqueness;
  opt.subpixel = s == 0;
  opt.refine_subpixel = params_.subpixel;
  const bool census = costs_.uses_census;
  const bool mean_removed = uses_mean_removal();
  ThreadPool* pool = pool_.get();
  const std::vector<ImageView<const std::uint8_t>>* masks[2] = {&in.left_foreground,
                                                                &in.right_foreground};
  pool->parallel_for(2, [&](int v0, int v1) {
    for (int v = v0; v < v1; ++v) {
      const auto fg = mask_at(*masks[v], s);
      if (coarsest) {
        full_search_ranges(w, h, fg, disparities, lv.ranges[v]);
      } else {
        parent_search_ranges(levels_[s + 1].checked[v], w, h, fg, params_.parent_radius,
                             disparities, lv.ranges[v], pool);
      }
    }
  });
  // View v matches image v against image 1 - v.
  ViewMatch views[2];
  for (int v = 0; v < 2; ++v) {
    const int o = 1 - v;
    views[v].side = {(mean_removed ? lv.ad[v] : lv.gray[v]).view(),
                     (mean_removed ? lv.ad[o] : lv.gray[o]).view(),
                     census ? lv.census[v].view() : ImageView<const std::uint64_t>{},
                     census ? lv.census[o].view() : ImageView<const std::uint64_t>{},
                     mask_at(*masks[o], s),
                     v == 0 ? -1 : +1};
    views[v].ranges = &lv.ranges[v];
    views[v].disparity = &lv.disp[v];
    views[v].q4 = s == 0 ? &q4_[v] : nullptr;
  }
  views[0].cost_ratio = s == 0 && in.cost_ratio_output ? &out.cost_ratio : nullptr;
  if (s == 0 && in.confidence) views[0].confidence = &out.confidence;
  // The semi-global pass scales P2 by the reference view's raw intensity steps.
  const ImageView<const std::uint8_t> gray[2] = {lv.gray[0].view(), lv.gray[1].view()};
  if (uses_cross()) {
    aggregate_cross(lv, views);
    out.candidates[s] = static_cast<long long>(volumes_[0].size() + volumes_[1].size());
    if (params_.aggregation == Aggregation::kCross) {
      for (int v = 0; v < 2; ++v) size_view_outputs(views[v], w, h);
      for_rows(pool, 2 * h, [&](int r0, int r1) {
        for (int v = 0; v < 2; ++v) {
          const int y0 = std::max(r0 - v * h, 0), y1 = std::min(r1 - v * h, h);
          if (y0 >= y1) continue;
          const std::uint32_t* e = volumes_[v].at(0, 0);
          pick_volume_winners(
              views[v], volumes_[v], [e](std::size_t at) { return e[at]; }, disparities,
              params_.uniqueness, params_.subpixel, y0, y1);
        }
      });
    } else {
      for (int v = 0; v < 2; ++v) views[v].volume = &volumes_[v];
      sgm_.match(views, gray, sgm_options(s, disparities, kCrossScale), pool);
    }
  } else if (params_.aggregation == Aggregation::kSgm) {
    // The window pass only fills the cost volumes (its own winners are overwritten); the
    // semi-global pass then decides, with the same rules.
    ViewMatch window[2] = {views[0], views[1]};
    for_rows(pool, 2, [&](int v0, int v1) {
      for (int v = v0; v < v1; ++v) volumes_[v].layout(lv.ranges[v]);
    });
    for (int v = 0; v < 2; ++v) {
      window[v].q4 = nullptr;
      window[v].cost_ratio = nullptr;
      window[v].confidence = nullptr;
      window[v].volume = &volumes_[v];
      views[v].volume = &volumes_[v];
    }
    LevelMatchOptions window_opt = opt;
    window_opt.uniqueness = 0;
    window_opt.subwindow = sgm_subwindow(params_);
    window_opt.best_k = sgm_best_k(params_);
    matcher_.match(window, costs_, window_opt, pool);
    sgm_.match(views, gray,
               sgm_options(s, disparities, sgm_penalty(1, window_opt.subwindow, window_opt.best_k)),
               pool);
    out.candidates[s] = matcher_.candidates_evaluated();
  } else {
    matcher_.match(views, costs_, opt, pool);
    out.candidates[s] = matcher_.candidates_evaluated();
  }
  if (params_.cross_check) {
    cross_check(lv.disp[0], lv.disp[1], params_.cross_check_tolerance, lv.checked[0], lv.checked[1],
                pool);
  } else {
    lv.checked[0] = lv.disp[0];
    lv.checked[1] = lv.disp[1];
  }
}

void CpuStereoMatcher::aggregate_cross(Level& lv, const ViewMatch (&views)[2]) {
  ThreadPool* pool = pool_.get();
  const CrossOptions o = cross_options(params_);
  for (int v = 0; v < 2; ++v) {
    cross_arms(lv.gray[v].view(), o, arms_[v], pool);
    volumes_[v].layout(lv.ranges[v], Aggregation::kCross);
    cross_[v].aggregate(views[v].side, costs_, lv.ranges[v], arms_[v], o.iterations, volumes_[v],
                        pool);
  }
}

SgmOptions CpuStereoMatcher::sgm_options(int s, int disparities, std::uint32_t scale) const {
  SgmOptions so;
  so.disparities = disparities;
  so.paths = params_.sgm_paths;
  so.p1 = static_cast<std::uint32_t>(params_.sgm_p1) * scale;
  so.p2 = static_cast<std::uint32_t>(params_.sgm_p2) * scale;
  so.gradient = params_.sgm_gradient;
  so.uniqueness = params_.uniqueness;
  so.subpixel = s == 0;
  so.refine_subpixel = params_.subpixel;
  return so;
}

void CpuStereoMatcher::post_process(const StereoInput& in, StereoOutput& out) {
  ThreadPool* pool = pool_.get();
  Disparity16* result[2] = {&out.left, &out.right};
  // The two views side by side (speckle labelling is sequential within a view); the right view's
  // map only when the caller wants it: the left-right check was all the left map needed from it.
  const int views = in.right_output ? 2 : 1;
  if (!in.right_output) out.right.resize(0, 0);
  if (!in.confidence) out.confidence.resize(0, 0);
  pool->parallel_for(views, [&](int v0, int v1) {
    for (int v = v0; v < v1; ++v) {
      apply_check(levels_[0].checked[v], q4_[v]);
      if (params_.speckle_size > 0) {
        speckle_[v].apply(q4_[v], params_.speckle_size, params_.speckle_range * kSubpixelScale);
      }
      if (v == 0 && in.confidence) keep_confidence_where_matched(q4_[0], out.confidence);
      if (params_.refine) {
        if (v == 0 && in.confidence) unrefined_ = q4_[0];
        refine(in, v);
        if (v == 0 && in.confidence)
          keep_confidence_where_unchanged(unrefined_, q4_[0], out.confidence);
      }
      if (params_.median) {
        median3x3(q4_[v], *result[v], pool);
      } else {
        *result[v] = q4_[v];
      }
      if (v == 0 && in.confidence) keep_confidence_where_matched(out.left, out.confidence);
      if (params_.fill) {
        fill_holes(*result[v], levels_[0].gray[v].view(),
                   mask_at(v == 0 ? in.left_foreground : in.right_foreground, 0), params_.fill_mode,
                   params_.fill_interpolate_max, pool);
      }
    }
  });
}

void CpuStereoMatcher::refine(const StereoInput& in, int v) {
  ThreadPool* pool = pool_.get();
  const Level& lv = levels_[0];
  // With cross-based aggregation the finest level (matched last) left its arms, with the same
  // options, in arms_.
  if (!uses_cross()) cross_arms(lv.gray[v].view(), cross_options(params_), arms_[v], pool);
  RefineInput r;
  r.gray = lv.gray[v].view();
  r.foreground = mask_at(v == 0 ? in.left_foreground : in.right_foreground, 0);
  r.arms = &arms_[v];
  r.partner = &lv.disp[1 - v];
  r.sign = v == 0 ? -1 : +1;
  r.disparities = level_disparities(params_.max_disparity, 0);
  r.tolerance = params_.cross_check_tolerance;
  refiner_[v].refine(q4_[v], r, params_, pool);
}

void CpuStereoMatcher::compute(const StereoInput& in, StereoOutput& out) {
  validate_for_images(params_, in.left.width, in.left.height, in.right.width, in.right.height);
  const int levels = effective_levels(params_);
  check_masks(in.left_foreground, "left_foreground", in.left.width, in.left.height, levels);
  check_masks(in.right_foreground, "right_foreground", in.right.width, in.right.height, levels);
  StageClock clock(out.stage_times);
  build_pyramid(in, levels);
  clock.lap("pyramid, census, mean removal");
  out.levels_used = levels;
  if (!in.cost_ratio_output) out.cost_ratio.resize(0, 0);
  out.candidates.assign(static_cast<std::size_t>(levels), 0);
  static const char* const kLevelNames[] = {"level 0 (finest): ranges, match, cross-check",
                                            "level 1",
                                            "level 2",
                                            "level 3",
                                            "level 4",
                                            "level 5"};
  for (int s = levels - 1; s >= 0; --s) {
    match_level(in, s, out);
    clock.lap(kLevelNames[s]);
  }
  post_process(in, out);
  clock.lap("speckles, median, filling");
}

}  // namespace stereod
