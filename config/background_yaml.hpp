// The `background:` section of a configuration: BackgroundParams from YAML, every key checked.
#pragma once

#include <string>

#include <yaml-cpp/yaml.h>

#include "background/background_params.hpp"
#include "yaml_reader.hpp"

namespace stereod {

void read_background_params(YamlReader& reader, const YAML::Node& node, const std::string& path,
                            BackgroundParams& params);

}  // namespace stereod
