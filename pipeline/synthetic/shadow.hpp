// The synthetic scene's moving shadow: a soft ellipse drifting across the background surfaces,
// one after another. Its darkening is a factor in 1/256 (256 = none), applied to R, G and B alike,
// so hue and saturation stay as they were.
#pragma once

#include <cstdint>

#include "synthetic/motion.hpp"
#include "synthetic/synthetic_scene.hpp"

namespace stereod::synth {

// A pixel darkened to this factor or below (by more than 10 %) is marked as shadow.
constexpr int kShadowMaskFactor = 230;

struct ShadowView {
  Point centre;  // on the background surface, in left-view coordinates
  int rx = 1, ry = 1;
  int core = 256;  // factor inside the core
  int inner = 0;   // the core ends at this squared normalised radius (1.0 = 65536)

  // Factor at surface point (x, y) in left-view coordinates: `core` in the core, rising to 256
  // at the rim.
  int factor(int x, int y) const;
};

class ShadowScript {
 public:
  // right_extra: how far right of the left view the right view sees the background.
  ShadowScript(const SyntheticOptions& options, int right_extra);
  ShadowView at(std::int64_t index) const;

 private:
  SyntheticOptions options_;
  int right_extra_ = 0;
};

}  // namespace stereod::synth
