#include "synthetic/texture.hpp"

#include <algorithm>

#include "frame.hpp"

namespace stereod::synth {
namespace {

// One well-mixed hash per lattice point: the texel functions call this millions of times when a
// scene is built, so it is a single mix rather than hash_key's four.
std::uint32_t lattice(std::uint64_t seed, int u, int v) {
  const std::uint64_t key = (static_cast<std::uint64_t>(static_cast<std::uint32_t>(u)) << 32) |
                            static_cast<std::uint32_t>(v);
  return static_cast<std::uint32_t>(mix64(seed ^ (key * 0xD6E8FEB86659FD93ull)) >> 32);
}

// Floor of u / 2^shift for any sign, without relying on how >> treats negative numbers.
int floor_shift(int u, int shift) {
  return u >= 0 ? u >> shift : ~((~u) >> shift);
}

// Bilinear value noise over a lattice of 2^shift pixels, 0..255; repeating every `period` pixels
// (a power of two, at least 16) unless that is 0.
int value_noise(std::uint64_t seed, int u, int v, int shift, int period) {
  const int cu = floor_shift(u, shift), cv = floor_shift(v, shift);
  const int fu = u - (cu << shift), fv = v - (cv << shift);
  const int cell = 1 << shift;
  const int wrap = period > 0 ? (period >> shift) - 1 : -1;  // -1: every bit kept
  auto corner = [&](int du, int dv) {
    return static_cast<int>(lattice(seed, (cu + du) & wrap, (cv + dv) & wrap) & 255u);
  };
  const int top = corner(0, 0) * (cell - fu) + corner(1, 0) * fu;
  const int bottom = corner(0, 1) * (cell - fu) + corner(1, 1) * fu;
  return (top * (cell - fv) + bottom * fv) >> (2 * shift);
}

// The pattern's structure, added to the noise: edges in several directions for the matcher.
int structure(std::uint64_t seed, Pattern pattern, int u, int v, int period) {
  switch (pattern) {
    case Pattern::kNoise:
      return 0;
    case Pattern::kChecker:
      return ((floor_shift(u, 3) ^ floor_shift(v, 3)) & 1) ? 40 : -40;
    case Pattern::kStripes:
      // Slanted, so that no row is periodic along the epipolar line.
      return (floor_shift(u + 2 * v, 3) & 1) ? 36 : -36;
    case Pattern::kSpots:
      return value_noise(seed ^ 0x5u, u, v, 3, period) > 150 ? 56 : -12;
  }
  return 0;
}

}  // namespace

std::uint8_t texel(std::uint64_t seed, Pattern pattern, int u, int v, int period) {
  const int coarse = value_noise(seed ^ 0x1u, u, v, 4, period);
  const int fine = value_noise(seed ^ 0x2u, u, v, 2, period);
  const int grain = static_cast<int>(lattice(seed ^ 0x3u, u, v) & 255u);
  // Averaging squeezes the range towards 128; stretch it back for contrast.
  const int mean = (3 * coarse + 3 * fine + 2 * grain) / 8;
  const int t = 128 + (mean - 128) * 3 / 2 + structure(seed, pattern, u, v, period);
  return static_cast<std::uint8_t>(std::clamp(t, 0, 255));
}

std::uint8_t oriented_texel(SyntheticTexture texture, std::uint64_t seed, Pattern pattern, int u,
                            int v, int period) {
  switch (texture) {
    case SyntheticTexture::kHorizontalStripes:
      return texel(seed, pattern, 0, v, period);
    case SyntheticTexture::kVerticalBars:
      return texel(seed, pattern, u, 0, period);
    case SyntheticTexture::kAny:
    case SyntheticTexture::kMixed:  // the caller picks one orientation per surface
      break;
  }
  return texel(seed, pattern, u, v, period);
}

Palette random_palette(Rng& rng, bool color) {
  Rgb dark{}, bright{};
  for (int c = 0; c < 3; ++c) {
    dark[c] = static_cast<std::uint8_t>(rng.range(16, 90));
    bright[c] = static_cast<std::uint8_t>(rng.range(150, 245));
  }
  if (!color) {
    // The same luma the colour palette would have, on every channel.
    dark.fill(luma(dark[0], dark[1], dark[2]));
    bright.fill(luma(bright[0], bright[1], bright[2]));
  }
  Palette p;
  for (int t = 0; t < 256; ++t) {
    for (int c = 0; c < 3; ++c) {
      p.rgb[t][c] = static_cast<std::uint8_t>(dark[c] + ((bright[c] - dark[c]) * t + 127) / 255);
    }
  }
  return p;
}

TextureAtlas make_atlas(std::uint64_t seed, Pattern pattern, int size, SyntheticTexture texture) {
  TextureAtlas a;
  a.size = size;
  a.texels.resize(static_cast<std::size_t>(size) * static_cast<std::size_t>(size));
  for (int v = 0; v < size; ++v) {
    for (int u = 0; u < size; ++u) {
      a.texels[static_cast<std::size_t>(v) * size + u] =
          oriented_texel(texture, seed, pattern, u, v, size);
    }
  }
  return a;
}

}  // namespace stereod::synth
