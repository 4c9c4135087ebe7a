// Binary closing of a foreground mask (values 0/1): dilate, then erode, each with a (2r+1)^2
// square over the pixels inside the image. Closing joins a foreground object's fragments and fills
// its small holes without growing it.
#pragma once

#include <cstdint>

#include "image.hpp"

namespace stereod {

void close_mask(const Gray8& in, int radius, Gray8& out, Gray8& scratch);

// Dilation alone: out(x, y) = max of `in` over the (2r+1)^2 square around (x, y), clipped to the
// image. radius 0 copies.
void dilate_mask(const Gray8& in, int radius, Gray8& out, Gray8& scratch);

}  // namespace stereod
