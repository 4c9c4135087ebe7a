#include "synthetic/objects.hpp"

#include <algorithm>

namespace stereod::synth {
namespace {

constexpr std::uint64_t kTagSlot = 0x51;
constexpr std::uint64_t kTagObject = 0x0B;
constexpr std::uint64_t kTagAtlas = 0xA7;
constexpr std::uint64_t kTagMixed = 0x3D;

}  // namespace

ObjectScript::ObjectScript(const SyntheticOptions& o, int nearest_background, const RgbImage* photo)
    : options_(o), photo_(photo) {
  min_disparity_ = nearest_background + 1;
  max_disparity_ = o.max_disparity - 1;
  // Radii from 4 % to 30 % of the height: from small things to ones more than half the frame high
  // (times object_size; truncated, as integer division was before the scale existed).
  const auto scaled = [](double v) { return static_cast<int>(v); };
  min_radius_ = std::max(2, scaled(o.height * 4 * o.object_size / 100));
  max_radius_ = std::max(min_radius_, scaled(o.height * 30 * o.object_size / 100));
  // Each object crosses the frame in 3 to 10 seconds (divided by speed), plus its stop.
  min_life_ = std::max(2, scaled(3 * o.frame_rate / o.speed)) + o.stop_frames;
  max_life_ = std::max(min_life_, scaled(10 * o.frame_rate / o.speed) + o.stop_frames);
  if (o.objects == 0) return;
  // One tile per pattern, large enough that objects of ordinary frame sizes never repeat their
  // texture (larger ones repeat it, seamlessly, every 512 pixels).
  const int largest_bound = max_radius_ * 3 / 2 + 1;
  int size = 16;
  while (size < 2 * largest_bound + 1 && size < 512) size *= 2;
  const bool mixed = o.texture == SyntheticTexture::kMixed;
  for (int p = 0; p < kPatternCount; ++p) {
    const std::uint64_t seed = hash_key(kTagAtlas, o.seed, static_cast<std::uint64_t>(p));
    atlases_[p] = make_atlas(seed, static_cast<Pattern>(p), size,
                             mixed ? SyntheticTexture::kHorizontalStripes : o.texture);
    if (mixed) {
      atlases_[p + kPatternCount] =
          make_atlas(seed, static_cast<Pattern>(p), size, SyntheticTexture::kVerticalBars);
    }
  }
}

void ObjectScript::make_object(int slot, const Life& life, ObjectView& o) const {
  Rng rng(hash_key(kTagObject, options_.seed, static_cast<std::uint64_t>(slot),
                   static_cast<std::uint64_t>(life.number)));
  o.slot = slot;
  o.life = life.number;
  // The larger of two draws: large objects are more likely, small ones still common.
  const int radius =
      std::max(rng.range(min_radius_, max_radius_), rng.range(min_radius_, max_radius_));
  o.shape = random_shape(rng, radius);
  o.disparity = rng.range(min_disparity_, max_disparity_);
  // Mixed: stripes or bars, from a hash of its own so the other draws stay as they are.
  const int set =
      options_.texture == SyntheticTexture::kMixed
          ? static_cast<int>(hash_key(kTagMixed, options_.seed, static_cast<std::uint64_t>(slot),
                                      static_cast<std::uint64_t>(life.number)) &
                             1u)
          : 0;
  o.atlas = &atlases_[rng.range(0, kPatternCount - 1) + set * kPatternCount];
  const int bound = o.shape.bound;
  o.u0 = rng.range(0, o.atlas->size - 1);
  o.v0 = rng.range(0, o.atlas->size - 1);
  o.mirror_u = rng.chance(1, 2) ? 1 : -1;
  o.mirror_v = rng.chance(1, 2) ? 1 : -1;
  o.palette = random_palette(rng, options_.color);
  const Track track = random_track(rng, options_.width, options_.height, bound + 1, o.disparity);
  if (photo_) {
    o.photo = photo_;
    o.u0 = rng.range(0, photo_->width - 1);
    o.v0 = rng.range(0, photo_->height - 1);
  }
  // Moving for length - stop frames, standing still for `stop` frames at the halfway point.
  const int stop = options_.stop_frames;
  const int moving = life.length - stop;
  const std::int64_t half = moving / 2;
  const std::int64_t f = life.frame < half          ? life.frame
                         : life.frame < half + stop ? half
                                                    : life.frame - stop;
  o.centre = track.at(f, moving);
}

void ObjectScript::at(std::int64_t index, std::vector<ObjectView>& out) const {
  out.clear();
  for (int slot = 0; slot < options_.objects; ++slot) {
    const Life life = life_at(hash_key(kTagSlot, options_.seed, static_cast<std::uint64_t>(slot)),
                              min_life_, max_life_, index);
    ObjectView o;
    make_object(slot, life, o);
    // Seen in the left view at x, in the right view at x - disparity.
    const int r = o.shape.bound;
    // A third view above (below) the left one sees it up to a disparity lower (higher).
    const int up = options_.vertical == SyntheticVertical::kBelow ? o.disparity : 0;
    const int down = options_.vertical == SyntheticVertical::kAbove ? o.disparity : 0;
    const bool rows = o.centre.y + r + down >= 0 && o.centre.y - up - r < options_.height;
    const bool cols = o.centre.x + r >= 0 && o.centre.x - o.disparity - r < options_.width;
    if (rows && cols) out.push_back(o);
  }
  // Painted in this order, so that the nearer object covers the farther one in both views.
  std::sort(out.begin(), out.end(), [](const ObjectView& a, const ObjectView& b) {
    return a.disparity != b.disparity ? a.disparity < b.disparity : a.slot < b.slot;
  });
}

}  // namespace stereod::synth
