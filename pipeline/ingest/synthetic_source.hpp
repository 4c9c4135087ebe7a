// synthetic:// cameras: the two views of one SyntheticScene, rendered in lockstep by one feeder
// thread per rig and pushed into the rig's pipeline through appsrcs (synthetic_feeder.hpp), so
// they share the pipeline's clock and pass through the same appsinks, FrameSync and fault
// handling as any other camera. Each frame carries the scene's frame index
// (CameraFrame::source_index) and the rig exposes the scene, so whoever wants the ground truth
// of a frame renders that index.
#pragma once

#include <cstddef>
#include <memory>

#include "ingest/camera_config.hpp"
#include "ingest/source_uri.hpp"
#include "synthetic/synthetic_scene.hpp"

namespace stereod {

// Which view of the scene camera `index` of a synthetic rig shows: the URI's location says so
// (synthetic://left, synthetic://right, and for an L-shaped rig's third camera synthetic://above
// or synthetic://below), or, when it is empty, the camera's place in the rig (the first is left,
// the second right).
enum class SyntheticViewKind { kLeft, kRight, kVertical };
SyntheticViewKind synthetic_view_of(const SourceUri& uri, std::size_t index);

// The scene a synthetic camera asks for: size from the camera, frame_rate its rate rounded to a
// whole number (the scene moves objects in pixels per second), everything else from the URI (the
// third view, SyntheticOptions::vertical, comes from the rig: make_synthetic_scene).
SyntheticOptions synthetic_options(const CameraConfig& camera, const SourceUri& uri);

// The scene of a synthetic rig (validate_rig has made sure its cameras agree and the scene takes
// their options), or nullptr for any other rig. Throws std::invalid_argument naming the camera
// when the scene refuses the options (e.g. max_disparity not below half the width).
std::shared_ptr<SyntheticScene> make_synthetic_scene(const RigConfig& rig);

}  // namespace stereod
