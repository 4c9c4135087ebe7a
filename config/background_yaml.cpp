#include "background_yaml.hpp"

namespace stereod {

void read_background_params(YamlReader& r, const YAML::Node& node, const std::string& path,
                            BackgroundParams& p) {
  if (!r.expect_map(node, path)) return;
  r.check_keys(node, path,
               {"enabled",
                "color",
                "warmup",
                "learning_rate",
                "foreground_learning_rate",
                "threshold",
                "min_sigma",
                "hue_min_saturation",
                "shadow",
                "shadow_min_ratio",
                "shadow_max_ratio",
                "shadow_hue_tolerance",
                "shadow_saturation_tolerance",
                "closing_radius",
                "absorb_frames",
                "support_absorption",
                "hierarchy",
                "target_margin",
                "depth_ghosts",
                "depth_ghost_farther",
                "depth_in_front",
                "depth_lag"});
  r.read(node, path, "enabled", p.enabled);
  r.read(node, path, "color", p.color);
  r.read(node, path, "warmup", p.warmup, 0, 100000);
  r.read(node, path, "learning_rate", p.learning_rate, 1.0 / 65536, 1.0);
  r.read(node, path, "foreground_learning_rate", p.foreground_learning_rate, 0.0, 1.0);
  r.read(node, path, "threshold", p.threshold, 0.5, 20.0);
  r.read(node, path, "min_sigma", p.min_sigma, 1, 128);
  r.read(node, path, "hue_min_saturation", p.hue_min_saturation, 0, 255);
  r.read(node, path, "shadow", p.shadow);
  r.read(node, path, "shadow_min_ratio", p.shadow_min_ratio, 0.0, 1.0);
  r.read(node, path, "shadow_max_ratio", p.shadow_max_ratio, 0.0, 1.0);
  r.read(node, path, "shadow_hue_tolerance", p.shadow_hue_tolerance, 0, 128);
  r.read(node, path, "shadow_saturation_tolerance", p.shadow_saturation_tolerance, 0, 255);
  r.read(node, path, "closing_radius", p.closing_radius, 0, 3);
  r.read(node, path, "absorb_frames", p.absorb_frames, 0, kMaxAbsorbFrames);
  r.read(node, path, "support_absorption", p.support_absorption);
  r.read(node, path, "hierarchy", p.hierarchy);
  r.read(node, path, "target_margin", p.target_margin, 0, kMaxTargetMargin);
  r.read(node, path, "depth_ghosts", p.depth_ghosts);
  r.read(node, path, "depth_ghost_farther", p.depth_ghost_farther, 0.0, 4.0);
  r.read(node, path, "depth_in_front", p.depth_in_front);
  r.read(node, path, "depth_lag", p.depth_lag, 1, kMaxDepthLag);
  for (const auto& e : check_background_params(p)) {
    const std::string key = e.parameter().substr(e.parameter().find('.') + 1);
    const YAML::Node at = node[key].IsDefined() ? node[key] : node;
    r.add(at, YamlReader::join(path, key), e.reason());
  }
}

}  // namespace stereod
