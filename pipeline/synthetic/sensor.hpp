// What the synthetic cameras add to the scene: a global brightness gain that flickers smoothly
// over frames (the same for both views) and sensor noise, independent per pixel, view and frame.
#pragma once

#include <cstdint>
#include <vector>

#include "synthetic/synthetic_scene.hpp"

namespace stereod::synth {

class Sensor {
 public:
  explicit Sensor(const SyntheticOptions& options);

  // The gain of frame `index` in 1/65536: within 1 +- flicker, following a smooth curve through a
  // random value per second.
  int gain(std::int64_t index) const;

  // Applies `gain` and the noise of (index, view) to an image in place. Colour images get noise
  // per channel; grey ones (options.color false) the same noise on R, G and B.
  void expose(RgbImage& image, int gain, std::int64_t index, int view) const;

 private:
  SyntheticOptions options_;
  std::int64_t flicker_ = 0;  // in 1/65536
  // Approximately Gaussian values (a sum of four uniform bytes) scaled to noise_sigma and
  // rounded; a row reads a stretch of it at a position hashed from (frame, view, row).
  std::vector<std::int16_t> noise_;
};

}  // namespace stereod::synth
