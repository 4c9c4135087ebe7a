// A synthetic frame as an engine's input: gray and color of both views, numbered i.
#pragma once

#include <cstdint>

#include "engine.hpp"
#include "synthetic/synthetic_scene.hpp"

namespace stereod::test {

inline FrameInput synthetic_input(const SyntheticFrame& f, int i) {
  FrameInput in;
  in.sequence = static_cast<std::uint64_t>(i);
  in.left = f.left_gray.view();
  in.right = f.right_gray.view();
  in.left_color = view_of(f.left);
  in.right_color = view_of(f.right);
  return in;
}

}  // namespace stereod::test
