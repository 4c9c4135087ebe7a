// stereod-synth --config: the scene of a configuration's synthetic pair, so that the ground truth
// of what the daemon publishes can be rendered (frame headers carry the scene's frame index).
#include <stdexcept>

#include "daemon_config.hpp"
#include "ingest/synthetic_source.hpp"
#include "synth.hpp"

namespace stereod::synth_tool {

SyntheticOptions options_from_config(const std::string& file, const std::string& pair) {
  DaemonConfig c;
  try {
    c = load_daemon_config(file);
  } catch (const ConfigError& e) {
    throw std::runtime_error(std::string("--config: ") + e.what());
  }
  const PairConfig* p = nullptr;
  for (const auto& candidate : c.pairs) {
    if (!p && (pair.empty() || candidate.name == pair)) p = &candidate;
  }
  if (!p) throw std::runtime_error("--pair " + pair + ": no such pair in " + file);
  const CameraConfig* left = c.camera(p->left);
  const SourceUri uri = parse_source_uri(left->uri);
  if (uri.scheme != SourceScheme::kSynthetic) {
    throw std::runtime_error("--config " + file + ": pair '" + p->name + "' has camera '" +
                             left->name + "' (" + left->uri + "), not a synthetic:// one");
  }
  SyntheticOptions o = synthetic_options(*left, uri);
  // A trinocular pair's third view, as make_synthetic_scene takes it from the rig.
  if (p->trinocular) {
    if (const CameraConfig* v = c.camera(p->trinocular->vertical)) {
      const SourceUri vu = parse_source_uri(v->uri);
      if (vu.location == "above") o.vertical = SyntheticVertical::kAbove;
      if (vu.location == "below") o.vertical = SyntheticVertical::kBelow;
    }
  }
  return o;
}

}  // namespace stereod::synth_tool
