// Textures for the synthetic scene: integer value noise with structure at several scales, so that
// stereo can match every part of a surface, mapped through a two-colour palette.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "synthetic/hash.hpp"
#include "synthetic/synthetic_scene.hpp"

namespace stereod::synth {

enum class Pattern { kNoise, kChecker, kStripes, kSpots };
constexpr int kPatternCount = 4;

// Texture value 0..255 at integer surface coordinates (any sign). With a period (a power of two,
// at least 16) the texture repeats seamlessly every `period` pixels in u and v.
std::uint8_t texel(std::uint64_t seed, Pattern pattern, int u, int v, int period = 0);
// The same, varying along one axis only when `texture` says so: horizontal stripes read the
// texture's column 0 (constant along rows), vertical bars its row 0 (kMixed: as kAny; callers
// pick stripes or bars per surface).
std::uint8_t oriented_texel(SyntheticTexture texture, std::uint64_t seed, Pattern pattern, int u,
                            int v, int period = 0);

using Rgb = std::array<std::uint8_t, 3>;

// Texture value -> colour, blending a dark and a bright colour. The dark one keeps every channel
// above zero so that a shadow always makes a pixel darker.
struct Palette {
  std::array<Rgb, 256> rgb;
};
// Colours drawn from `rng`; grey (R = G = B) when `color` is false.
Palette random_palette(Rng& rng, bool color);

// A square tile of precomputed texels, so that moving objects cost a lookup per pixel. The tile
// repeats seamlessly: any (u, v) is a valid index.
struct TextureAtlas {
  int size = 0;  // a power of two, at least 16
  std::vector<std::uint8_t> texels;
  std::uint8_t at(int u, int v) const {
    const auto wrap = static_cast<unsigned>(size - 1);
    return texels[(static_cast<unsigned>(v) & wrap) * static_cast<std::size_t>(size) +
                  (static_cast<unsigned>(u) & wrap)];
  }
};
TextureAtlas make_atlas(std::uint64_t seed, Pattern pattern, int size,
                        SyntheticTexture texture = SyntheticTexture::kAny);

}  // namespace stereod::synth
