// How things cross the synthetic scene: a slot holds one thing after another ("lives" of fixed
// length per slot), and each life moves in a straight line from outside the frame to outside it.
// Everything is a closed-form function of the frame index, so any frame can be rendered alone.
#pragma once

#include <cstdint>

#include "synthetic/hash.hpp"

namespace stereod::synth {

struct Life {
  std::int64_t number = 0;  // which life of the slot (negative before frame 0 is fine)
  std::int64_t frame = 0;   // frames since this life began, 0 .. length-1
  int length = 1;           // frames
};

// The life of the slot with key `slot_key` at frame `index`. The slot's life length lies in
// [min_frames, max_frames] and its phase is random, so frame 0 finds slots mid-life.
Life life_at(std::uint64_t slot_key, int min_frames, int max_frames, std::int64_t index);

struct Point {
  int x = 0, y = 0;
};

// A straight track in left-view coordinates between two points just outside the frame: a thing
// whose points lie within `margin` pixels of its centre is invisible at both ends, in the left
// view and (shifted left by up to `right_extra` pixels) in the right view.
struct Track {
  Point from, to;
  Point at(std::int64_t frame, int length) const;
};
enum class Crossing {
  kAny,       // between any two edges, not just clipping a corner
  kSideways,  // from the left edge to the right one or back
};
Track random_track(Rng& rng, int width, int height, int margin, int right_extra,
                   Crossing crossing = Crossing::kAny);

}  // namespace stereod::synth
