// The AD term's input: each intensity minus its local mean (pixel_ops.hpp: mean_removed_at). A
// brightness offset between the two cameras, common in real rigs and in the Middlebury 2014 pairs,
// then costs nothing, while the per-pixel detail that sharpens depth edges stays.
#pragma once

#include <cstdint>

#include "image.hpp"

namespace stereod {

class ThreadPool;

void remove_local_mean(ImageView<const std::uint8_t> img, int radius, Gray8& out,
                       ThreadPool* pool = nullptr);

}  // namespace stereod
