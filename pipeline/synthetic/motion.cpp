#include "synthetic/motion.hpp"

#include <algorithm>

namespace stereod::synth {

Life life_at(std::uint64_t slot_key, int min_frames, int max_frames, std::int64_t index) {
  Rng rng(slot_key);
  Life life;
  life.length = rng.range(min_frames, max_frames);
  const std::int64_t phase = rng.range(0, life.length - 1);
  life.number = floor_div(index + phase, life.length);
  life.frame = index + phase - life.number * life.length;
  return life;
}

Point Track::at(std::int64_t frame, int length) const {
  return {from.x + static_cast<int>(scale_round(to.x - from.x, frame, length)),
          from.y + static_cast<int>(scale_round(to.y - from.y, frame, length))};
}

Track random_track(Rng& rng, int width, int height, int margin, int right_extra,
                   Crossing crossing) {
  enum Edge { kLeft, kRight, kTop, kBottom };
  auto point_on = [&](int edge) -> Point {
    switch (edge) {
      case kLeft:
        return {-margin, rng.range(height / 10, height - 1 - height / 10)};
      case kRight:
        return {width - 1 + right_extra + margin, rng.range(height / 10, height - 1 - height / 10)};
      case kTop:
        return {rng.range(width / 10, width - 1 - width / 10 + right_extra), -margin};
      default:
        return {rng.range(width / 10, width - 1 - width / 10 + right_extra), height - 1 + margin};
    }
  };
  // Across to the opposite edge half of the time, else round a corner; a track that would only
  // clip a corner is drawn again, so that things stay in view for a while.
  const long long min_length = std::min(width, height) / 2 + 2 * static_cast<long long>(margin);
  Track t;
  for (int attempt = 0; attempt < 16; ++attempt) {
    const int from = crossing == Crossing::kSideways ? rng.range(kLeft, kRight) : rng.range(0, 3);
    const bool across = crossing == Crossing::kSideways || rng.chance(1, 2);
    const int to = across ? (from ^ 1) : (from < 2 ? rng.range(2, 3) : rng.range(0, 1));
    t.from = point_on(from);
    t.to = point_on(to);
    const long long dx = t.to.x - t.from.x, dy = t.to.y - t.from.y;
    if (dx * dx + dy * dy >= min_length * min_length) break;
  }
  return t;
}

}  // namespace stereod::synth
