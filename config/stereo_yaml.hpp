// The `stereo:` section of a configuration: StereoParams from YAML, every key checked.
#pragma once

#include <string>

#include <yaml-cpp/yaml.h>

#include "background/background_params.hpp"
#include "stereo/params.hpp"
#include "yaml_reader.hpp"

namespace stereod {

// Reads the keys present in `node` over `params` (absent keys keep their value). Problems go to
// `reader`; `path` is the section's own key path, e.g. "stereo" or "pairs[1].stereo".
void read_stereo_params(YamlReader& reader, const YAML::Node& node, const std::string& path,
                        StereoParams& params);

struct PairParams {
  StereoParams stereo;
  BackgroundParams background;
};

// A file whose top level holds `stereo:` and/or `background:` maps (stereod-bench --config).
// Throws ConfigError.
PairParams load_params_file(const std::string& file, const PairParams& defaults = {});
StereoParams load_stereo_params_file(const std::string& file, const StereoParams& defaults = {});

}  // namespace stereod
