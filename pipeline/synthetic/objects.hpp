// The moving foreground objects of the synthetic scene: `objects` slots, each showing one object
// after another; every object has its own outline, size, texture, constant disparity and straight
// track across the frame.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "synthetic/motion.hpp"
#include "synthetic/shape.hpp"
#include "synthetic/synthetic_scene.hpp"
#include "synthetic/texture.hpp"

namespace stereod::synth {

// One object as it appears in one frame.
struct ObjectView {
  int slot = 0;
  std::int64_t life = 0;
  Shape shape;
  Point centre;  // left-view coordinates; the right view sees it at x - disparity
  int disparity = 0;
  // The texture moves with the object: point (u, v) relative to the centre shows texel
  // atlas(u0 + mirror_u * u, v0 + mirror_v * v).
  const TextureAtlas* atlas = nullptr;
  int u0 = 0, v0 = 0, mirror_u = 1, mirror_v = 1;
  Palette palette;
  // A photograph instead of atlas and palette: point (u, v) shows its pixel (u0 + mirror_u * u,
  // v0 + mirror_v * v), reflected at the photograph's edges.
  const RgbImage* photo = nullptr;

  Rgb color(int u, int v) const {
    if (photo) {
      const std::uint8_t* p = photo->row(reflect(v0 + mirror_v * v, photo->height)) +
                              3 * reflect(u0 + mirror_u * u, photo->width);
      return {p[0], p[1], p[2]};
    }
    return palette.rgb[atlas->at(u0 + mirror_u * u, v0 + mirror_v * v)];
  }

  // i folded into 0 .. n - 1 by mirroring at both ends (period 2n).
  static int reflect(int i, int n) {
    const int period = 2 * n;
    int r = i % period;
    if (r < 0) r += period;
    return r < n ? r : period - 1 - r;
  }
};

class ObjectScript {
 public:
  // Objects get disparities in [nearest_background + 1, max_disparity - 1]. photo: null, or the
  // photograph every object shows a part of (it must outlive the script).
  ObjectScript(const SyntheticOptions& options, int nearest_background,
               const RgbImage* photo = nullptr);

  // The objects of frame `index` seen in either view, back to front: larger disparity in front,
  // equal disparities ordered by slot.
  void at(std::int64_t index, std::vector<ObjectView>& out) const;

 private:
  void make_object(int slot, const Life& life, ObjectView& o) const;

  SyntheticOptions options_;
  int min_disparity_ = 0, max_disparity_ = 0;
  int min_radius_ = 0, max_radius_ = 0;
  int min_life_ = 0, max_life_ = 0;  // frames, standing still included
  const RgbImage* photo_ = nullptr;
  // One per pattern; with the mixed texture the first kPatternCount have horizontal stripes and
  // the next kPatternCount vertical bars.
  std::array<TextureAtlas, 2 * kPatternCount> atlases_;
};

}  // namespace stereod::synth
