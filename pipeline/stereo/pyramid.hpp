// Image pyramid (docs/ALGORITHM.md step 2): each coarser level is the rounded 2x2 mean of the finer
// one; an odd side rounds up and the last row/column repeats the edge.
#pragma once

#include <cstdint>

#include "image.hpp"

namespace stereod {

class ThreadPool;

void downsample(ImageView<const std::uint8_t> fine, Gray8& coarse, ThreadPool* pool = nullptr);

}  // namespace stereod
