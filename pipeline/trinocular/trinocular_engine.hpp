// An Engine for one L-shaped trinocular rig (fusion.hpp): two ordinary pair engines of one kind,
// the horizontal pair (reference, horizontal partner) and the vertical pair (the reference and
// the vertical partner, transposed), both asked for their winners' costs, and the fusion of their
// results. Frames carry the reference as `left`, the horizontal partner as `right` and the
// vertical partner as `vertical`. Background modeling runs on the reference camera in both pairs
// (the vertical pair's model sees the same camera transposed); the fused map is published where
// the horizontal pair's reference mask says foreground.
#pragma once

#include <memory>
#include <string_view>

#include "engine.hpp"
#include "trinocular/fusion.hpp"

namespace stereod {

struct TrinocularOptions {
  TrinocularModel model;
  double cost_ratio = 1.0;  // FusionParams::cost_ratio
};

// Checks what does not depend on the engine (the cost ratio, the model, the vertical pair's range
// for the transposed size); throws ParameterError naming the key.
void check_trinocular_options(const EngineOptions& options, const TrinocularOptions& trinocular);

// The vertical pair's engine options derived from the horizontal pair's.
EngineOptions vertical_engine_options(const EngineOptions& options,
                                      const TrinocularOptions& trinocular);
StereoParams vertical_stereo_params(const StereoParams& stereo, const TrinocularOptions& t);
// The parameters each direction's matcher runs with: the rig's, without the refinement. The
// fusion compares the two matchers' winners by their cost ratios; a refined pixel's value is not
// its winner and has no cost ratio of its own, and refining the direction the texture defeats
// fills its holes with values the fusion would then take (docs/ALGORITHM.md "Trinocular rigs").
StereoParams direction_stereo_params(const StereoParams& stereo);

// kind as for make_engine. Rectification maps are not supported (the cameras must deliver
// rectified images): throws ParameterError when given.
std::unique_ptr<Engine> make_trinocular_engine(std::string_view kind, const EngineOptions& options,
                                               const TrinocularOptions& trinocular);

}  // namespace stereod
