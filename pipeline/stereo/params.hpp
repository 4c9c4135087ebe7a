// Parameters of the coarse-to-fine adaptive-window matcher (docs/ALGORITHM.md lists each one with
// its default and the measurement that chose it). The same struct drives the CPU reference and the
// CUDA engine, so both compute exactly the same function.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "stereo/pixel_ops.hpp"

namespace stereod {

enum class MatchingCost {
  kAbsDiff,   // truncated absolute difference of intensities
  kCensus,    // Hamming distance of census codes
  kAdCensus,  // both, each through a saturating lookup table, summed (Mei et al. 2011)
};

// How the matching costs of a pixel's candidates are aggregated before the winner is chosen.
enum class Aggregation {
  kWindow,  // the adaptive window alone (Zhao & Taubin): winner takes all over A
  kSgm,     // semi-global: A (the window cost) aggregated along 4 or 8 paths (sgm.hpp)
  kCross,   // cross-based support regions (Mei et al. 2011), winner takes all
            // (cross_aggregation.hpp)
};

// What semi-global aggregation aggregates (measured in docs/PERFORMANCE.md).
enum class SgmCost {
  kPixel,   // the pixel cost alone (the window with subwindow 1, best_k 0)
  kWindow,  // the adaptive-window cost A with this configuration's subwindow and best_k
  kCross,   // the cross-based aggregate (cross_aggregation.hpp), Mei's scanline optimisation
};

enum class FillMode {
  kIntensity,   // Chang & Maruyama: interpolate similar sides, else the side of closer intensity
  kBackground,  // interpolate similar sides, else the smaller disparity (occlusions are background)
};

struct StereoParams {
  // Search range: disparities 0 .. max_disparity-1 at full resolution (OpenCV's numDisparities).
  int max_disparity = 128;
  // Pyramid levels L (1 = single-resolution adaptive window). The matcher uses fewer when the
  // coarsest level would search fewer than min_coarse_disparities disparities.
  int levels = 4;
  int min_coarse_disparities = 8;

  MatchingCost cost = MatchingCost::kAdCensus;
  int census_width = 9;    // odd; census_width * census_height - 1 <= 64 bits
  int census_height = 7;   // odd
  int ad_truncation = 30;  // kAbsDiff: costs saturate here
  // kAdCensus: cost = round(64 (1 - exp(-ad/lambda_ad))) + round(64 (1 -
  // exp(-hamming/lambda_census)))
  int lambda_ad = 5;
  int lambda_census = 30;
  // The AD term compares intensities minus their (2r+1)^2 local mean, so a brightness offset
  // between the cameras costs nothing (0: raw intensities). Census always sees raw intensities.
  int ad_mean_radius = 1;

  int subwindow = 3;      // s: side of each of the 9 sub-windows (odd)
  int best_k = 4;         // k: how many of the 8 neighbouring sub-windows join the centre one
  int parent_radius = 3;  // r: parent neighbourhood (2r+1)^2 that bounds a finer level's search

  // Semi-global aggregation (docs/ALGORITHM.md "Semi-global aggregation"): over each pixel's own
  // search range at every level, of the cost sgm_cost names, along sgm_paths paths (4 or 8). The
  // penalties are per pixel cost of that cost, i.e. multiplied by the (1 + best_k) * subwindow^2
  // pixel costs it sums (1 for kPixel): P1 for a change of 1, P2 for a larger one, P2 divided
  // down towards P1 by the intensity step between the path's neighbours: P2 * g / (g + |dI|),
  // g = sgm_gradient (0: P2 unscaled). Defaults chosen on the v2 scenes only.
  Aggregation aggregation = Aggregation::kWindow;
  SgmCost sgm_cost = SgmCost::kPixel;
  int sgm_paths = 4;
  int sgm_p1 = 64;
  int sgm_p2 = 255;
  int sgm_gradient = 16;

  // Cross-based support regions (docs/ALGORITHM.md "Cross-based aggregation"; with aggregation
  // cross, or sgm with sgm_cost cross). Each pixel's four arms extend while the intensity step to
  // the anchor and to the previous arm pixel stays under cross_tau1 and the arm is at most
  // cross_l1 long; beyond cross_l2 the step to the anchor must also stay under cross_tau2. The
  // pixel costs are averaged over the region cross_iterations times, the order of the two passes
  // alternating.
  int cross_tau1 = 12;
  int cross_tau2 = 6;
  int cross_l1 = 34;
  int cross_l2 = 17;
  int cross_iterations = 1;

  bool cross_check = true;
  int cross_check_tolerance = 1;  // |D_L(x) - D_R(x - D_L(x))| <= this survives
  // Uniqueness: the best cost must beat every candidate farther than 1 from it by this many percent
  // (0 = off).
  int uniqueness = 0;

  bool subpixel = true;
  // Speckle removal: 4-connected regions whose neighbours differ by at most speckle_range
  // disparities and that have fewer than speckle_size pixels lose their disparity (0 = off).
  int speckle_size = 100;
  int speckle_range = 1;
  bool median = true;
  bool fill = false;
  FillMode fill_mode = FillMode::kBackground;
  int fill_interpolate_max = 3;  // interpolate across a hole when its two sides differ by <= this

  // Multi-step refinement (Mei et al. 2011; docs/ALGORITHM.md "Refinement", refinement.hpp) of the
  // finest level's map after the left-right check and the speckle filter, before the median: region
  // voting over the cross-based support regions of the cross_* arms, then (refine_interpolate)
  // occlusion-aware interpolation along 16 directions. Both engines. On by default, with 3 rounds:
  // Middlebury v2 9.84 -> 7.70 % after the window, most holes in the moving objects' depth
  // filled, 12 % of a frame on an H100 and cones (450x375, D 64) on two cores still under 25 ms
  // and faster than StereoSGBM (docs/PERFORMANCE.md "The default mode"). Five rounds gain 0.2 on
  // v2 for about 2 ms more on the CPU (the best mode, sgm, uses them).
  bool refine = true;
  int refine_iterations = 3;  // voting rounds (0: none)
  int refine_votes = 20;      // tau_S: fewest valid votes in the region
  int refine_share = 40;      // tau_H: the winner must hold more than this percentage of them
  // Valid pixels whose left or right neighbour differs by this many disparities or more are voted
  // on too (0: only holes). 1 was best on the v2 scenes for window and sgm (pixel cost); with the
  // cross-based modes 0 was (docs/PERFORMANCE.md "Multi-step refinement").
  int refine_edges = 1;
  // Only the pixel on the nearer (larger-disparity) side of such a step is voted on: fattening
  // moves the nearer surface's values onto the farther one, not the other way. Better than both
  // sides on the v2 scenes under every aggregation (docs/PERFORMANCE.md "Near-side edge voting").
  bool refine_edges_near = true;
  // Off by default: on the v2 scenes it lost to the scanline filling after the median (fill, on in
  // stereod-bench accuracy), docs/PERFORMANCE.md "Multi-step refinement".
  bool refine_interpolate = false;

  // Every field, in declaration order: the one list that equality (a reload retunes a pair when
  // any field differs) and the test that changes each field once go through. A field left out of
  // it is a field whose change a reload would not apply; tests/unit/params_fields_test.cpp checks
  // the list against the struct's layout.
  template <typename Self>
  static auto tie_fields(Self& s) {
    return std::tie(s.max_disparity, s.levels, s.min_coarse_disparities, s.cost, s.census_width,
                    s.census_height, s.ad_truncation, s.lambda_ad, s.lambda_census,
                    s.ad_mean_radius, s.subwindow, s.best_k, s.parent_radius, s.aggregation,
                    s.sgm_cost, s.sgm_paths, s.sgm_p1, s.sgm_p2, s.sgm_gradient, s.cross_tau1,
                    s.cross_tau2, s.cross_l1, s.cross_l2, s.cross_iterations, s.cross_check,
                    s.cross_check_tolerance, s.uniqueness, s.subpixel, s.speckle_size,
                    s.speckle_range, s.median, s.fill, s.fill_mode, s.fill_interpolate_max,
                    s.refine, s.refine_iterations, s.refine_votes, s.refine_share, s.refine_edges,
                    s.refine_edges_near, s.refine_interpolate);
  }
  bool operator==(const StereoParams& o) const { return tie_fields(*this) == tie_fields(o); }
  bool operator!=(const StereoParams& o) const { return !(*this == o); }
};

// A parameter, or an image, that the matcher cannot work with. The message names the parameter and
// the offending value, e.g. "stereo.subwindow = 4: must be odd (1, 3, 5, 7, 9)".
class ParameterError : public std::invalid_argument {
 public:
  // `message` is the whole sentence (what()); `reason` is what is wrong without naming the
  // parameter or its value, which is what a configuration error prints after file:line:column and
  // the key. Without a reason the message is the reason.
  ParameterError(std::string parameter, const std::string& message, std::string reason = {})
      : std::invalid_argument(message),
        parameter_(std::move(parameter)),
        reason_(reason.empty() ? message : std::move(reason)) {}
  // "parameter = value: rule", the form every range and rule check reports.
  static ParameterError bad_value(const std::string& parameter, const std::string& value,
                                  const std::string& rule) {
    return ParameterError(parameter, parameter + " = " + value + ": " + rule, rule);
  }
  const std::string& parameter() const { return parameter_; }
  const std::string& reason() const { return reason_; }

 private:
  std::string parameter_;
  std::string reason_;
};

// Every problem with the parameters on their own (no image involved); empty when they are usable.
std::vector<ParameterError> check_params(const StereoParams& p);
// The window whose cost A fills the semi-global pass's volume: (1, 0) for SgmCost::kPixel, else
// the configuration's subwindow and best_k.
// Host-device: the CUDA engine's volume pass reads them too.
STEREOD_HD int sgm_subwindow(const StereoParams& p) {
  return p.sgm_cost == SgmCost::kPixel ? 1 : p.subwindow;
}
STEREOD_HD int sgm_best_k(const StereoParams& p) {
  return p.sgm_cost == SgmCost::kPixel ? 0 : p.best_k;
}
// Whether matching aggregates over cross-based regions: aggregation cross, or sgm whose cost is
// the region average (sgm_cost cross). Both engines decide their passes by it.
inline bool uses_cross_aggregation(const StereoParams& p) {
  return p.aggregation == Aggregation::kCross ||
         (p.aggregation == Aggregation::kSgm && p.sgm_cost == SgmCost::kCross);
}

// Throws the first problem that check_params finds.
void validate_params(const StereoParams& p);
// Throws when the parameters cannot be used on left/right images of these sizes.
void validate_for_images(const StereoParams& p, int left_width, int left_height, int right_width,
                         int right_height);

constexpr int kMinImageSide = 16;  // smallest image the matcher accepts
constexpr int kMinLevelSide = 8;   // smallest side any pyramid level may have
constexpr int kMaxLevels = 6;
constexpr int kMaxDisparity = 1024;
// Largest sgm_p1 / sgm_p2 (per pixel cost): with the largest window (9 sub-windows of 81 pixel
// costs) and 8 paths, S = 8 (C + P2) stays far below 2^32.
constexpr int kMaxSgmPenalty = 1023;
// Longest cross arm: a region is at most (2 * 64 + 1)^2 pixels, whose summed costs (times the
// fixed-point scale of cross_aggregation.hpp) stay far below 2^32.
constexpr int kMaxCrossArm = 64;
constexpr int kMaxCrossIterations = 4;
// Most voting rounds, and most votes a region can hold (the largest arms' (2 * 64 + 1)^2 pixels).
constexpr int kMaxRefineIterations = 16;
constexpr int kMaxRefineVotes = (2 * kMaxCrossArm + 1) * (2 * kMaxCrossArm + 1);

// Levels the matcher actually uses: at most p.levels, fewer when the coarsest level would search
// fewer than p.min_coarse_disparities disparities.
int effective_levels(const StereoParams& p);
// Side of an image after `scale` halvings (each rounding up).
int level_side(int full_side, int scale);
// Disparities searched at a level: ceil(max_disparity / 2^scale).
int level_disparities(int max_disparity, int scale);

std::string_view to_string(MatchingCost c);
std::string_view to_string(FillMode m);
std::string_view to_string(Aggregation a);
std::string_view to_string(SgmCost c);
// Parses "ad", "census" or "ad_census" ("ad-census" too); throws ParameterError("stereo.cost",
// ...).
MatchingCost parse_matching_cost(std::string_view name);
FillMode parse_fill_mode(std::string_view name);
Aggregation parse_aggregation(std::string_view name);

}  // namespace stereod
