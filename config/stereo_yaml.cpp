#include "stereo_yaml.hpp"

#include <fstream>

#include "background_yaml.hpp"

namespace stereod {

void read_stereo_params(YamlReader& r, const YAML::Node& node, const std::string& path,
                        StereoParams& p) {
  if (!r.expect_map(node, path)) return;
  r.check_keys(node, path,
               {"max_disparity",
                "levels",
                "min_coarse_disparities",
                "cost",
                "census_width",
                "census_height",
                "ad_truncation",
                "lambda_ad",
                "lambda_census",
                "subwindow",
                "best_k",
                "parent_radius",
                "aggregation",
                "sgm_cost",
                "sgm_paths",
                "sgm_p1",
                "sgm_p2",
                "sgm_gradient",
                "cross_tau1",
                "cross_tau2",
                "cross_l1",
                "cross_l2",
                "cross_iterations",
                "cross_check",
                "cross_check_tolerance",
                "uniqueness",
                "ad_mean_radius",
                "speckle_size",
                "speckle_range",
                "subpixel",
                "median",
                "fill",
                "fill_mode",
                "fill_interpolate_max",
                "refine",
                "refine_iterations",
                "refine_votes",
                "refine_share",
                "refine_edges",
                "refine_edges_near",
                "refine_interpolate"});
  r.read(node, path, "max_disparity", p.max_disparity, 1, kMaxDisparity);
  r.read(node, path, "levels", p.levels, 1, kMaxLevels);
  r.read(node, path, "min_coarse_disparities", p.min_coarse_disparities, 1, kMaxDisparity);
  r.read_choice(node, path, "cost", p.cost,
                {{"ad", MatchingCost::kAbsDiff},
                 {"census", MatchingCost::kCensus},
                 {"ad_census", MatchingCost::kAdCensus}});
  r.read(node, path, "census_width", p.census_width, 1, 9);
  r.read(node, path, "census_height", p.census_height, 1, 9);
  r.read(node, path, "ad_truncation", p.ad_truncation, 1, 255);
  r.read(node, path, "lambda_ad", p.lambda_ad, 1, 255);
  r.read(node, path, "lambda_census", p.lambda_census, 1, 255);
  r.read(node, path, "subwindow", p.subwindow, 1, 9);
  r.read(node, path, "best_k", p.best_k, 0, 8);
  r.read(node, path, "parent_radius", p.parent_radius, 0, 4);
  r.read_choice(node, path, "aggregation", p.aggregation,
                {{"window", Aggregation::kWindow},
                 {"sgm", Aggregation::kSgm},
                 {"cross", Aggregation::kCross}});
  r.read_choice(
      node, path, "sgm_cost", p.sgm_cost,
      {{"pixel", SgmCost::kPixel}, {"window", SgmCost::kWindow}, {"cross", SgmCost::kCross}});
  r.read(node, path, "sgm_paths", p.sgm_paths, 4, 8);
  r.read(node, path, "sgm_p1", p.sgm_p1, 0, kMaxSgmPenalty);
  r.read(node, path, "sgm_p2", p.sgm_p2, 0, kMaxSgmPenalty);
  r.read(node, path, "sgm_gradient", p.sgm_gradient, 0, 255);
  r.read(node, path, "cross_tau1", p.cross_tau1, 1, 255);
  r.read(node, path, "cross_tau2", p.cross_tau2, 0, 255);
  r.read(node, path, "cross_l1", p.cross_l1, 1, kMaxCrossArm);
  r.read(node, path, "cross_l2", p.cross_l2, 0, kMaxCrossArm);
  r.read(node, path, "cross_iterations", p.cross_iterations, 1, kMaxCrossIterations);
  r.read(node, path, "cross_check", p.cross_check);
  r.read(node, path, "cross_check_tolerance", p.cross_check_tolerance, 0, 16);
  r.read(node, path, "uniqueness", p.uniqueness, 0, 99);
  r.read(node, path, "ad_mean_radius", p.ad_mean_radius, 0, 3);
  r.read(node, path, "speckle_size", p.speckle_size, 0, 10000);
  r.read(node, path, "speckle_range", p.speckle_range, 0, 16);
  r.read(node, path, "subpixel", p.subpixel);
  r.read(node, path, "median", p.median);
  r.read(node, path, "fill", p.fill);
  r.read_choice(node, path, "fill_mode", p.fill_mode,
                {{"intensity", FillMode::kIntensity}, {"background", FillMode::kBackground}});
  r.read(node, path, "fill_interpolate_max", p.fill_interpolate_max, 0, kMaxDisparity);
  r.read(node, path, "refine", p.refine);
  r.read(node, path, "refine_iterations", p.refine_iterations, 0, kMaxRefineIterations);
  r.read(node, path, "refine_votes", p.refine_votes, 1, kMaxRefineVotes);
  r.read(node, path, "refine_share", p.refine_share, 0, 99);
  r.read(node, path, "refine_edges", p.refine_edges, 0, kMaxDisparity);
  r.read(node, path, "refine_edges_near", p.refine_edges_near);
  r.read(node, path, "refine_interpolate", p.refine_interpolate);
  // Rules between keys (odd sizes, the census code's 64 bits), reported at the offending key.
  for (const auto& e : check_params(p)) {
    const std::string key = e.parameter().substr(e.parameter().find('.') + 1);
    const YAML::Node at = node[key].IsDefined() ? node[key] : node;
    r.add(at, YamlReader::join(path, key), e.reason());
  }
}

StereoParams load_stereo_params_file(const std::string& file, const StereoParams& defaults) {
  PairParams d;
  d.stereo = defaults;
  return load_params_file(file, d).stereo;
}

PairParams load_params_file(const std::string& file, const PairParams& defaults) {
  YamlReader r(file);
  PairParams p = defaults;
  YAML::Node root;
  std::ifstream in(file);
  if (!in) {
    r.issues().push_back({file, 0, 0, "", "cannot open the file"});
    r.throw_if_failed();
  }
  try {
    root = YAML::Load(in);
  } catch (const YAML::Exception& e) {
    r.issues().push_back(
        {file, e.mark.line + 1, e.mark.column + 1, "", "not valid YAML: " + e.msg});
    r.throw_if_failed();
  }
  if (r.expect_map(root, "", false)) {
    r.check_keys(root, "", {"stereo", "background"});
    read_stereo_params(r, root["stereo"], "stereo", p.stereo);
    read_background_params(r, root["background"], "background", p.background);
  }
  r.throw_if_failed();
  return p;
}

}  // namespace stereod
