// Left-right consistency check (docs/ALGORITHM.md step 6), run at every level on the integer maps.
// A left disparity d at x survives when the right map at x - d holds a disparity within
// `tolerance` of d; symmetrically a right disparity d at x survives when the left map at x + d
// agrees. Failed pixels become holes that the next finer level searches again.
#pragma once

#include <cstdint>

#include "image.hpp"

namespace stereod {

class ThreadPool;

void cross_check(const Image<std::int16_t>& left, const Image<std::int16_t>& right, int tolerance,
                 Image<std::int16_t>& left_checked, Image<std::int16_t>& right_checked,
                 ThreadPool* pool = nullptr);

}  // namespace stereod
