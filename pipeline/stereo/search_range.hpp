// Which disparities each pixel of a level tries (docs/ALGORITHM.md step 5).
//
// The coarsest level tries the whole range of its level. A finer pixel (x, y) looks at the valid
// disparities of the coarser level's (2r+1)x(2r+1) neighbourhood around (x/2, y/2) and tries
// [2 min - 2, 2 max + 2], clipped to the level's range; with no valid parent nearby it tries the
// whole range. Reference pixels that are background are not matched at all (hi < lo).
#pragma once

#include <cstdint>

#include "image.hpp"

namespace stereod {

class ThreadPool;

struct SearchRanges {
  Image<std::int16_t> lo;
  Image<std::int16_t> hi;  // hi < lo: the pixel is not matched

  bool matched(int x, int y) const { return hi(x, y) >= lo(x, y); }

  // Scratch of parent_search_ranges, kept so a frame allocates nothing: per parent pixel, the
  // min and max of the valid disparities along its block's row, then its children's range.
  Image<std::uint16_t> row_min;
  Image<std::int16_t> row_max, parent_lo, parent_hi;
};

// foreground: 1 = match this pixel; an empty view means every pixel.
void full_search_ranges(int width, int height, ImageView<const std::uint8_t> foreground,
                        int disparities, SearchRanges& out);

void parent_search_ranges(const Image<std::int16_t>& parent, int width, int height,
                          ImageView<const std::uint8_t> foreground, int radius, int disparities,
                          SearchRanges& out, ThreadPool* pool = nullptr);

}  // namespace stereod
