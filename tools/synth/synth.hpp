// stereod-synth: writes a synthetic stereo sequence with its ground truth to a folder.
#pragma once

#include <string>

#include "synthetic/synthetic_scene.hpp"

namespace stereod::synth_tool {

struct Job {
  SyntheticOptions options;
  std::string out;             // folder, created if missing
  std::string background;      // Middlebury scene folder; empty: generated planes
  std::string object_texture;  // Middlebury scene folder whose left image textures the objects
  int frames = 300;
  int start = 0;
};

// Renders and writes frames start .. start + frames - 1 and sequence.yaml, then prints one line
// of figures. Throws std::invalid_argument for options the scene rejects and for a background
// folder that cannot be loaded, std::runtime_error when an output file cannot be written.
void write_sequence(const Job& job);

// The scene options of a configuration's synthetic pair (`pair`, or the first one when empty),
// exactly as the daemon renders it. Throws std::runtime_error naming the file (every issue of an
// invalid one) or the pair that has no synthetic cameras.
SyntheticOptions options_from_config(const std::string& file, const std::string& pair);

}  // namespace stereod::synth_tool
