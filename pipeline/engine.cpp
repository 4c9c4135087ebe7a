#include "engine.hpp"

#include <string>

#include "stereo/params.hpp"

namespace stereod {

void check_frame_size(const FrameInput& f, int width, int height) {
  auto size = [](int w, int h) { return std::to_string(w) + "x" + std::to_string(h); };
  if (f.left.width != width || f.left.height != height || f.right.width != width ||
      f.right.height != height) {
    throw ParameterError("frame", "frame " + std::to_string(f.sequence) + " is " +
                                      size(f.left.width, f.left.height) + " / " +
                                      size(f.right.width, f.right.height) +
                                      ", the engine expects " + size(width, height));
  }
  const bool has_color = !f.left_color.empty() && !f.right_color.empty();
  if (has_color && (f.left_color.width != width || f.left_color.height != height ||
                    f.right_color.width != width || f.right_color.height != height)) {
    throw ParameterError("color", "color images do not have the frame's size");
  }
}

}  // namespace stereod
