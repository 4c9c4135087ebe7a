// What one level's matching of one reference view reads, and its options (adaptive_window.hpp
// defines what is computed from them).
#pragma once

#include <cstdint>

#include "image.hpp"

namespace stereod {

struct MatchSide {
  ImageView<const std::uint8_t> ref;  // the AD term's input (mean removed or raw)
  ImageView<const std::uint8_t> tgt;
  ImageView<const std::uint64_t> ref_census;  // empty when the cost has no census term
  ImageView<const std::uint64_t> tgt_census;
  ImageView<const std::uint8_t> tgt_foreground;  // empty: every target pixel is foreground
  int direction = -1;  // -1: left reference (target x - d); +1: right reference (target x + d)
};

struct LevelMatchOptions {
  int disparities = 0;  // this level's range is 0 .. disparities-1
  int subwindow = 3;
  int best_k = 4;
  int uniqueness = 0;           // percent; 0 = off
  bool subpixel = false;        // also produce 16*d + parabola offset (the finest level)
  bool refine_subpixel = true;  // with `subpixel`: the parabola offset (false: exactly 16*d)
};

}  // namespace stereod
