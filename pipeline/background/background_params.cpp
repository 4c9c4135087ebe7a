#include "background/background_params.hpp"

#include <cmath>
#include <sstream>

namespace stereod {
namespace {

template <typename T>
void check(std::vector<ParameterError>& e, const char* key, T value, T lo, T hi) {
  if (!(value >= lo && value <= hi)) {
    std::ostringstream v, rule;
    v << value;
    rule << "must be between " << lo << " and " << hi;
    e.push_back(ParameterError::bad_value(std::string("background.") + key, v.str(), rule.str()));
  }
}

std::int32_t fixed(double v, int bits) {
  return static_cast<std::int32_t>(std::lround(v * (1 << bits)));
}

}  // namespace

std::vector<ParameterError> check_background_params(const BackgroundParams& p) {
  std::vector<ParameterError> e;
  check(e, "warmup", p.warmup, 0, 100000);
  check(e, "learning_rate", p.learning_rate, 1.0 / 65536, 1.0);
  check(e, "foreground_learning_rate", p.foreground_learning_rate, 0.0, 1.0);
  check(e, "threshold", p.threshold, 0.5, 20.0);
  check(e, "min_sigma", p.min_sigma, 1, 128);
  check(e, "hue_min_saturation", p.hue_min_saturation, 0, 255);
  check(e, "shadow_min_ratio", p.shadow_min_ratio, 0.0, 1.0);
  check(e, "shadow_max_ratio", p.shadow_max_ratio, 0.0, 1.0);
  if (p.shadow_min_ratio > p.shadow_max_ratio) {
    std::ostringstream v, rule;
    v << p.shadow_min_ratio;
    rule << "must not exceed shadow_max_ratio (" << p.shadow_max_ratio << ")";
    e.push_back(ParameterError::bad_value("background.shadow_min_ratio", v.str(), rule.str()));
  }
  check(e, "shadow_hue_tolerance", p.shadow_hue_tolerance, 0, 128);
  check(e, "shadow_saturation_tolerance", p.shadow_saturation_tolerance, 0, 255);
  check(e, "closing_radius", p.closing_radius, 0, 3);
  check(e, "absorb_frames", p.absorb_frames, 0, kMaxAbsorbFrames);
  check(e, "target_margin", p.target_margin, 0, kMaxTargetMargin);
  check(e, "depth_ghost_farther", p.depth_ghost_farther, 0.0, 4.0);
  check(e, "depth_lag", p.depth_lag, 1, kMaxDepthLag);
  return e;
}

void validate_background_params(const BackgroundParams& p) {
  auto e = check_background_params(p);
  if (!e.empty()) throw e.front();
}

BackgroundFixed to_fixed(const BackgroundParams& p) {
  BackgroundFixed f;
  f.alpha_bg = fixed(p.learning_rate, 16);
  f.alpha_fg = fixed(p.foreground_learning_rate, 16);
  f.k_q4 = fixed(p.threshold, 4);
  f.min_sigma_q8 = p.min_sigma << 8;
  f.hue_min_sat_q8 = p.hue_min_saturation << 8;
  f.shadow_lo_q8 = fixed(p.shadow_min_ratio, 8);
  f.shadow_hi_q8 = fixed(p.shadow_max_ratio, 8);
  f.shadow_hue_q8 = p.shadow_hue_tolerance << 8;
  f.shadow_sat_q8 = p.shadow_saturation_tolerance << 8;
  f.shadow = p.shadow;
  f.absorb_frames = p.absorb_frames;
  f.support_absorption = p.support_absorption;
  f.still_tolerance = p.min_sigma;
  f.depth_farther_q8 = fixed(p.depth_ghost_farther, 8);
  f.depth_in_front = p.depth_in_front;
  f.depth_lag = p.depth_lag;
  return f;
}

}  // namespace stereod
