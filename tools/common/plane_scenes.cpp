#include "plane_scenes.hpp"

#include <algorithm>

namespace stereod {
namespace {

std::uint32_t hash3(std::uint32_t a, std::uint32_t b, std::uint32_t c) {
  std::uint32_t h =
      a * 0x9E3779B1u ^ (b + 0x7F4A7C15u) * 0x85EBCA77u ^ (c + 0x165667B1u) * 0xC2B2AE3Du;
  h ^= h >> 15;
  h *= 0x2C1B3C6Du;
  h ^= h >> 12;
  h *= 0x297A2D39u;
  h ^= h >> 15;
  return h;
}

// Bilinear value noise with cells of `cell` pixels, 0..255.
int value_noise(std::uint32_t seed, int x, int y, int cell) {
  const int cx = x >= 0 ? x / cell : -((-x + cell - 1) / cell);
  const int cy = y >= 0 ? y / cell : -((-y + cell - 1) / cell);
  const int fx = x - cx * cell, fy = y - cy * cell;
  auto v = [&](int i, int j) {
    return static_cast<int>(
        hash3(seed, static_cast<std::uint32_t>(cx + i), static_cast<std::uint32_t>(cy + j)) & 255u);
  };
  const int top = v(0, 0) * (cell - fx) + v(1, 0) * fx;
  const int bottom = v(0, 1) * (cell - fx) + v(1, 1) * fx;
  return (top * (cell - fy) + bottom * fy) / (cell * cell);
}

}  // namespace

std::uint8_t texture_value(std::uint32_t seed, int x, int y) {
  const int fine = static_cast<int>(
      hash3(seed ^ 0xA5A5u, static_cast<std::uint32_t>(x), static_cast<std::uint32_t>(y)) & 255u);
  const int v =
      (2 * value_noise(seed, x, y, 16) + 3 * value_noise(seed + 1, x, y, 4) + 3 * fine) / 8;
  return static_cast<std::uint8_t>(std::clamp(v, 0, 255));
}

SyntheticPair render_planes(int width, int height, const std::vector<PlaneLayer>& layers) {
  SyntheticPair p;
  p.left.resize(width, height);
  p.right.resize(width, height);
  p.truth.resize(width, height);
  p.visible.resize(width, height);
  // The front layer at a left-image point: the covering layer with the largest disparity.
  auto front_left = [&](int x, int y) -> const PlaneLayer* {
    const PlaneLayer* best = nullptr;
    for (const auto& l : layers) {
      if (l.covers(x, y) && (!best || l.disparity_at(y) > best->disparity_at(y))) best = &l;
    }
    return best;
  };
  // The front layer seen by right pixel xr: layer l shows its left point xr + d_l there.
  auto front_right = [&](int xr, int y) -> const PlaneLayer* {
    const PlaneLayer* best = nullptr;
    for (const auto& l : layers) {
      const int x = xr + l.disparity_at(y);
      if (l.covers(x, y) && (!best || l.disparity_at(y) > best->disparity_at(y))) best = &l;
    }
    return best;
  };
  for (int y = 0; y < height; ++y) {
    for (int x = 0; x < width; ++x) {
      const PlaneLayer* l = front_left(x, y);
      const int d = l ? l->disparity_at(y) : 0;
      p.left(x, y) = l ? texture_value(l->seed, x, y) : 0;
      p.truth(x, y) = static_cast<float>(d);
      const PlaneLayer* r = front_right(x, y);
      p.right(x, y) = r ? texture_value(r->seed, x + r->disparity_at(y), y) : 0;
    }
    for (int x = 0; x < width; ++x) {
      const PlaneLayer* l = front_left(x, y);
      const int xr = x - (l ? l->disparity_at(y) : 0);
      p.visible(x, y) = (l && xr >= 0 && front_right(xr, y) == l) ? 255 : 0;
    }
  }
  return p;
}

SyntheticPair make_benchmark_pair(int width, int height, int max_disparity, std::uint32_t seed) {
  std::vector<PlaneLayer> layers(2);
  layers[0].disparity = max_disparity / 4;
  layers[0].seed = seed;
  layers[1] = {width / 4,         height / 4, (3 * width) / 4, (3 * height) / 4,
               max_disparity / 2, 0,          seed + 101};
  return render_planes(width, height, layers);
}

Gray8 random_image(int width, int height, std::uint32_t seed) {
  Gray8 img(width, height);
  for (int y = 0; y < height; ++y) {
    for (int x = 0; x < width; ++x) {
      img(x, y) = static_cast<std::uint8_t>(
          hash3(seed, static_cast<std::uint32_t>(x), static_cast<std::uint32_t>(y)) >> 24);
    }
  }
  return img;
}

}  // namespace stereod
