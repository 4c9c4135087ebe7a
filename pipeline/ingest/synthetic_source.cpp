#include "ingest/synthetic_source.hpp"

#include <cmath>
#include <stdexcept>

namespace stereod {

SyntheticViewKind synthetic_view_of(const SourceUri& uri, std::size_t index) {
  if (uri.location == "above" || uri.location == "below") return SyntheticViewKind::kVertical;
  if (uri.location == "right" || (uri.location.empty() && index == 1)) {
    return SyntheticViewKind::kRight;
  }
  return SyntheticViewKind::kLeft;
}

SyntheticOptions synthetic_options(const CameraConfig& camera, const SourceUri& uri) {
  SyntheticOptions o;
  o.width = camera.width;
  o.height = camera.height;
  o.frame_rate = static_cast<int>(std::lround(camera.fps.hz()));
  o.objects = static_cast<int>(uri.option_int("objects", o.objects));
  o.seed = static_cast<std::uint32_t>(uri.option_int("seed", o.seed));
  o.min_disparity = static_cast<int>(uri.option_int("min_disparity", o.min_disparity));
  o.max_disparity = static_cast<int>(uri.option_int("max_disparity", o.max_disparity));
  o.noise_sigma = uri.option_double("noise_sigma", o.noise_sigma);
  o.flicker = uri.option_double("flicker", o.flicker);
  o.shadow = uri.option_bool("shadow", o.shadow);
  o.color = uri.option_bool("color", o.color);
  parse_synthetic_texture(uri.option("texture", "any"), o.texture);  // checked by the URI parser
  o.focal_px = uri.option_double("focal_px", o.focal_px);
  o.baseline_m = uri.option_double("baseline_m", o.baseline_m);
  return o;
}

std::shared_ptr<SyntheticScene> make_synthetic_scene(const RigConfig& rig) {
  if (rig.cameras.empty()) return nullptr;
  const CameraConfig& first = rig.cameras[0];
  const SourceUri uri = parse_source_uri(first.uri);
  if (uri.scheme != SourceScheme::kSynthetic) return nullptr;
  SyntheticOptions o = synthetic_options(first, uri);
  for (const auto& cam : rig.cameras) {
    const SourceUri u = parse_source_uri(cam.uri);
    if (u.location == "above") o.vertical = SyntheticVertical::kAbove;
    if (u.location == "below") o.vertical = SyntheticVertical::kBelow;
  }
  try {
    return std::make_shared<SyntheticScene>(o);
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(IngestIssue{first.name, "uri", e.what()}.to_string());
  }
}

}  // namespace stereod
