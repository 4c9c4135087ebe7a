#include "synthetic/shadow.hpp"

#include <algorithm>
#include <cstdlib>

namespace stereod::synth {
namespace {

constexpr std::uint64_t kTagShadowSlot = 0x5D;
constexpr std::uint64_t kTagShadow = 0x5E;
constexpr std::int64_t kOne = 65536;  // normalised radius 1.0, squared

}  // namespace

int ShadowView::factor(int x, int y) const {
  const std::int64_t dx = std::abs(x - centre.x), dy = std::abs(y - centre.y);
  if (dx >= rx || dy >= ry) return 256;
  // (dx / rx)^2 + (dy / ry)^2 in 1/65536.
  const std::int64_t r2 = dx * dx * kOne / (static_cast<std::int64_t>(rx) * rx) +
                          dy * dy * kOne / (static_cast<std::int64_t>(ry) * ry);
  if (r2 >= kOne) return 256;
  if (r2 <= inner) return core;
  return core + static_cast<int>((256 - core) * (r2 - inner) / (kOne - inner));
}

ShadowScript::ShadowScript(const SyntheticOptions& o, int right_extra)
    : options_(o), right_extra_(right_extra) {}

ShadowView ShadowScript::at(std::int64_t index) const {
  const int fps = options_.frame_rate;
  const Life life = life_at(hash_key(kTagShadowSlot, options_.seed), 6 * fps, 12 * fps, index);
  Rng rng(hash_key(kTagShadow, options_.seed, static_cast<std::uint64_t>(life.number)));
  ShadowView s;
  s.rx = std::max(4, options_.width * rng.range(15, 28) / 100);
  s.ry = std::max(4, s.rx * rng.range(50, 90) / 100);
  // Darkened to 0.5 .. 0.7 in the core, which covers 20 % to 45 % of the squared radius.
  s.core = rng.range(128, 179);
  s.inner = static_cast<int>(kOne * rng.range(20, 45) / 100);
  // Sideways, across the longer way, so that most frames show a shadow.
  const Track track = random_track(rng, options_.width, options_.height, std::max(s.rx, s.ry),
                                   right_extra_, Crossing::kSideways);
  s.centre = track.at(life.frame, life.length);
  return s;
}

}  // namespace stereod::synth
