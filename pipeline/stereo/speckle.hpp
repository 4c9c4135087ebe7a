// Speckle removal (as in Hirschmueller's SGM post-processing and OpenCV's filterSpeckles): small
// islands of disparity that disagree with their surroundings are almost always wrong matches.
// A speckle is a 4-connected region of valid pixels, neighbours within `max_step` (in 16*d units)
// of each other, with fewer than `min_size` pixels; its pixels become invalid. Which pixels form a
// region does not depend on how the regions are found, so any engine gets the same answer.
#pragma once

#include <cstdint>
#include <vector>

#include "image.hpp"

namespace stereod {

class SpeckleFilter {
 public:
  void apply(Disparity16& disparity, int min_size, int max_step);

 private:
  std::vector<std::uint16_t> map_;     // the map with a border of kInvalidDisparity
  std::vector<std::uint8_t> visited_;  // the same layout
  std::vector<std::int32_t> members_;  // the region being grown (and its queue)
};

}  // namespace stereod
