#include "stereo/params.hpp"

#include <sstream>

namespace stereod {
namespace {

ParameterError describe(std::string_view key, long long value, const std::string& rule) {
  return ParameterError::bad_value("stereo." + std::string(key), std::to_string(value), rule);
}

void check_range(std::vector<ParameterError>& errors, std::string_view key, long long value,
                 long long lo, long long hi) {
  if (value < lo || value > hi) {
    std::ostringstream rule;
    rule << "must be between " << lo << " and " << hi;
    errors.push_back(describe(key, value, rule.str()));
  }
}

void check_odd(std::vector<ParameterError>& errors, std::string_view key, int value, int hi) {
  if (value < 1 || value > hi || value % 2 == 0) {
    std::ostringstream rule;
    rule << "must be odd, between 1 and " << hi;
    errors.push_back(describe(key, value, rule.str()));
  }
}

}  // namespace

std::vector<ParameterError> check_params(const StereoParams& p) {
  std::vector<ParameterError> e;
  check_range(e, "max_disparity", p.max_disparity, 1, kMaxDisparity);
  check_range(e, "levels", p.levels, 1, kMaxLevels);
  check_range(e, "min_coarse_disparities", p.min_coarse_disparities, 1, kMaxDisparity);
  check_odd(e, "census_width", p.census_width, 9);
  check_odd(e, "census_height", p.census_height, 9);
  if (p.census_width * p.census_height - 1 > 64) {
    e.push_back(describe("census_width", p.census_width,
                         "census_width x census_height - 1 must fit in 64 bits (census_height = " +
                             std::to_string(p.census_height) + ")"));
  }
  check_range(e, "ad_truncation", p.ad_truncation, 1, 255);
  check_range(e, "lambda_ad", p.lambda_ad, 1, 255);
  check_range(e, "lambda_census", p.lambda_census, 1, 255);
  check_odd(e, "subwindow", p.subwindow, 9);
  check_range(e, "best_k", p.best_k, 0, 8);
  check_range(e, "parent_radius", p.parent_radius, 0, 4);
  if (p.sgm_paths != 4 && p.sgm_paths != 8) {
    e.push_back(describe("sgm_paths", p.sgm_paths, "must be 4 or 8"));
  }
  check_range(e, "sgm_p1", p.sgm_p1, 0, kMaxSgmPenalty);
  check_range(e, "sgm_p2", p.sgm_p2, 0, kMaxSgmPenalty);
  if (p.sgm_p2 < p.sgm_p1) {
    e.push_back(describe("sgm_p2", p.sgm_p2,
                         "must be at least sgm_p1 (" + std::to_string(p.sgm_p1) +
                             "): a jump must not cost less than a step of 1"));
  }
  check_range(e, "sgm_gradient", p.sgm_gradient, 0, 255);
  check_range(e, "cross_tau1", p.cross_tau1, 1, 255);
  check_range(e, "cross_tau2", p.cross_tau2, 0, 255);
  if (p.cross_tau2 > p.cross_tau1) {
    e.push_back(describe("cross_tau2", p.cross_tau2,
                         "must be at most cross_tau1 (" + std::to_string(p.cross_tau1) +
                             "): the far part of an arm is the stricter one"));
  }
  check_range(e, "cross_l1", p.cross_l1, 1, kMaxCrossArm);
  check_range(e, "cross_l2", p.cross_l2, 0, kMaxCrossArm);
  if (p.cross_l2 > p.cross_l1) {
    e.push_back(describe("cross_l2", p.cross_l2,
                         "must be at most cross_l1 (" + std::to_string(p.cross_l1) +
                             "): the stricter threshold starts inside the arm"));
  }
  check_range(e, "cross_iterations", p.cross_iterations, 1, kMaxCrossIterations);
  check_range(e, "cross_check_tolerance", p.cross_check_tolerance, 0, 16);
  check_range(e, "uniqueness", p.uniqueness, 0, 99);
  check_range(e, "ad_mean_radius", p.ad_mean_radius, 0, 3);
  check_range(e, "speckle_size", p.speckle_size, 0, 10000);
  check_range(e, "speckle_range", p.speckle_range, 0, 16);
  check_range(e, "fill_interpolate_max", p.fill_interpolate_max, 0, kMaxDisparity);
  check_range(e, "refine_iterations", p.refine_iterations, 0, kMaxRefineIterations);
  check_range(e, "refine_votes", p.refine_votes, 1, kMaxRefineVotes);
  check_range(e, "refine_share", p.refine_share, 0, 99);
  check_range(e, "refine_edges", p.refine_edges, 0, kMaxDisparity);
  return e;
}

void validate_params(const StereoParams& p) {
  auto errors = check_params(p);
  if (!errors.empty()) throw errors.front();
}

int level_side(int full_side, int scale) {
  int side = full_side;
  for (int i = 0; i < scale; ++i) side = (side + 1) / 2;
  return side;
}

int level_disparities(int max_disparity, int scale) {
  const int div = 1 << scale;
  return (max_disparity + div - 1) / div;
}

int effective_levels(const StereoParams& p) {
  int levels = 1;
  while (levels < p.levels &&
         level_disparities(p.max_disparity, levels) >= p.min_coarse_disparities) {
    ++levels;
  }
  return levels;
}

void validate_for_images(const StereoParams& p, int lw, int lh, int rw, int rh) {
  validate_params(p);
  if (lw <= 0 || lh <= 0) {
    throw ParameterError(
        "left", "left image is empty (" + std::to_string(lw) + "x" + std::to_string(lh) + ")");
  }
  if (rw <= 0 || rh <= 0) {
    throw ParameterError(
        "right", "right image is empty (" + std::to_string(rw) + "x" + std::to_string(rh) + ")");
  }
  if (lw != rw || lh != rh) {
    throw ParameterError("right", "image sizes differ: left is " + std::to_string(lw) + "x" +
                                      std::to_string(lh) + ", right is " + std::to_string(rw) +
                                      "x" + std::to_string(rh));
  }
  if (lw < kMinImageSide || lh < kMinImageSide) {
    throw ParameterError("left", "image is " + std::to_string(lw) + "x" + std::to_string(lh) +
                                     ": both sides must be at least " +
                                     std::to_string(kMinImageSide));
  }
  if (p.max_disparity >= lw) {
    throw describe("max_disparity", p.max_disparity,
                   "must be smaller than the image width (" + std::to_string(lw) + ")");
  }
  const int levels = effective_levels(p);
  const int cw = level_side(lw, levels - 1);
  const int ch = level_side(lh, levels - 1);
  if (cw < kMinLevelSide || ch < kMinLevelSide) {
    int allowed = 1;
    while (allowed < levels && level_side(lw, allowed) >= kMinLevelSide &&
           level_side(lh, allowed) >= kMinLevelSide) {
      ++allowed;
    }
    throw describe("levels", p.levels,
                   "a " + std::to_string(lw) + "x" + std::to_string(lh) + " image allows at most " +
                       std::to_string(allowed) + " (the coarsest level would be " +
                       std::to_string(cw) + "x" + std::to_string(ch) + ", under " +
                       std::to_string(kMinLevelSide) + " pixels)");
  }
}

std::string_view to_string(MatchingCost c) {
  switch (c) {
    case MatchingCost::kAbsDiff:
      return "ad";
    case MatchingCost::kCensus:
      return "census";
    case MatchingCost::kAdCensus:
      return "ad_census";
  }
  return "?";
}

std::string_view to_string(FillMode m) {
  switch (m) {
    case FillMode::kIntensity:
      return "intensity";
    case FillMode::kBackground:
      return "background";
  }
  return "?";
}

std::string_view to_string(Aggregation a) {
  switch (a) {
    case Aggregation::kWindow:
      return "window";
    case Aggregation::kSgm:
      return "sgm";
    case Aggregation::kCross:
      return "cross";
  }
  return "?";
}

std::string_view to_string(SgmCost c) {
  switch (c) {
    case SgmCost::kPixel:
      return "pixel";
    case SgmCost::kWindow:
      return "window";
    case SgmCost::kCross:
      return "cross";
  }
  return "?";
}

Aggregation parse_aggregation(std::string_view name) {
  if (name == "window") return Aggregation::kWindow;
  if (name == "sgm") return Aggregation::kSgm;
  if (name == "cross") return Aggregation::kCross;
  throw ParameterError("stereo.aggregation",
                       "stereo.aggregation = \"" + std::string(name) +
                           "\": unknown aggregation (expected window, sgm or cross)");
}

MatchingCost parse_matching_cost(std::string_view name) {
  if (name == "ad") return MatchingCost::kAbsDiff;
  if (name == "census") return MatchingCost::kCensus;
  if (name == "ad_census" || name == "ad-census") return MatchingCost::kAdCensus;
  throw ParameterError("stereo.cost", "stereo.cost = \"" + std::string(name) +
                                          "\": unknown cost (expected ad, census or ad_census)");
}

FillMode parse_fill_mode(std::string_view name) {
  if (name == "intensity") return FillMode::kIntensity;
  if (name == "background") return FillMode::kBackground;
  throw ParameterError("stereo.fill_mode",
                       "stereo.fill_mode = \"" + std::string(name) +
                           "\": unknown mode (expected intensity or background)");
}

}  // namespace stereod
