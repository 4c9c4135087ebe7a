// A real background for the synthetic scene from a Middlebury scene folder: the colour pair and
// the left view's ground truth (2014 PFM; 2001, 2003 and 2006 PNG/PGM with their scales).
#pragma once

#include <string>

#include "synthetic/synthetic_scene.hpp"

namespace stereod {

// Throws std::runtime_error naming the folder when it holds no scene this knows, or a file
// cannot be read.
SyntheticBackground load_middlebury_background(const std::string& scene_dir);

}  // namespace stereod
