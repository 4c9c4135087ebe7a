#include "synthetic/background.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "synthetic/hash.hpp"
#include "synthetic/texture.hpp"

namespace stereod::synth {
namespace {

constexpr float kUnknown = std::numeric_limits<float>::infinity();
constexpr std::uint64_t kTagBackground = 0xB6;

bool known(float d) {
  return std::isfinite(d) && d >= 0;
}

// Left x lands on right x - round(d).
int landing(int x, float d) {
  return x - static_cast<int>(std::floor(d + 0.5f));
}

// Forward-warps one row of left disparities into the right view: each right pixel gets the
// largest disparity landing on it (the nearer surface hides the farther one) and the left column
// it came from; -1 and +inf where nothing lands.
void warp_row(const float* left, int left_width, float* right, int* source, int right_width) {
  std::fill(right, right + right_width, kUnknown);
  std::fill(source, source + right_width, -1);
  for (int x = 0; x < left_width; ++x) {
    const float d = left[x];
    if (!known(d)) continue;
    const int xr = landing(x, d);
    if (xr < 0 || xr >= right_width) continue;
    if (source[xr] < 0 || d > right[xr]) {
      right[xr] = d;
      source[xr] = x;
    }
  }
}

// right_shift from right_disparity: where the disparity is unknown (occluded in the left view, or
// no ground truth) the surface is taken to be the farther of the two nearest known neighbours.
void fill_right_shift(StaticBackground& bg, int fallback) {
  const int w = bg.right_disparity.width(), h = bg.right_disparity.height();
  bg.right_shift.resize(w, h);
  std::vector<int> before(static_cast<std::size_t>(w));
  bg.shift_min = std::numeric_limits<int>::max();
  bg.shift_max = std::numeric_limits<int>::min();
  for (int y = 0; y < h; ++y) {
    const float* d = bg.right_disparity.row(y);
    int last = -1;
    for (int x = 0; x < w; ++x) {
      if (known(d[x])) last = static_cast<int>(std::floor(d[x] + 0.5f));
      before[x] = last;
    }
    int next = -1;
    std::int16_t* s = bg.right_shift.row(y);
    for (int x = w - 1; x >= 0; --x) {
      if (known(d[x])) next = static_cast<int>(std::floor(d[x] + 0.5f));
      int v = before[x] >= 0 && next >= 0 ? std::min(before[x], next) : std::max(before[x], next);
      if (v < 0) v = fallback;
      s[x] = static_cast<std::int16_t>(v);
      bg.shift_min = std::min(bg.shift_min, v);
      bg.shift_max = std::max(bg.shift_max, v);
    }
  }
}

std::string size_text(int w, int h) {
  return std::to_string(w) + "x" + std::to_string(h);
}

}  // namespace

void to_grey(RgbImage& img) {
  for (std::size_t i = 0; i + 2 < img.pixels.size(); i += 3) {
    const std::uint8_t g = luma(img.pixels[i], img.pixels[i + 1], img.pixels[i + 2]);
    img.pixels[i] = img.pixels[i + 1] = img.pixels[i + 2] = g;
  }
}

StaticBackground generate_background(const SyntheticOptions& o) {
  const int w = o.width, h = o.height;
  const int lo = o.min_disparity, hi = o.min_disparity + (o.max_disparity - o.min_disparity) / 3;
  Rng rng(hash_key(kTagBackground, o.seed));

  // The wall: its disparity changes linearly from the left edge to the right one (two times in
  // three), staying in the farther half of the range.
  const int wall_left = rng.range(lo, lo + (hi - lo) / 2);
  const int wall_right = rng.chance(2, 3) ? rng.range(lo, lo + (hi - lo) / 2) : wall_left;
  // The floor starts at the horizon at the wall's mean disparity and reaches `hi` at the bottom.
  const int horizon = rng.range(2 * h / 5, 13 * h / 20);
  const int floor_top = (wall_left + wall_right) / 2;
  const Pattern wall_pattern = rng.chance(1, 2) ? Pattern::kNoise : Pattern::kSpots;
  const std::uint64_t wall_seed = rng.next(), floor_seed = rng.next();
  const Palette wall_palette = random_palette(rng, o.color);
  const Palette floor_palette = random_palette(rng, o.color);

  // The right view sees left-view columns up to w - 1 + hi: render that much of the left canvas.
  const int canvas = w + hi + 1;
  auto wall_disparity = [&](int x) {
    return wall_left + static_cast<int>(scale_round(wall_right - wall_left, x, canvas - 1));
  };
  auto floor_disparity = [&](int y) {
    return floor_top + static_cast<int>(scale_round(hi - floor_top, y - horizon, h - 1 - horizon));
  };

  StaticBackground bg;
  bg.left.resize(w, h);
  bg.right.resize(w, h);
  bg.left_disparity.resize(w, h);
  bg.right_disparity.resize(w, h);
  std::vector<float> disp(static_cast<std::size_t>(canvas));
  std::vector<Rgb> color(static_cast<std::size_t>(canvas));
  std::vector<int> source(static_cast<std::size_t>(w));
  for (int y = 0; y < h; ++y) {
    for (int x = 0; x < canvas; ++x) {
      const int dw = wall_disparity(x);
      const bool floor = y >= horizon && floor_disparity(y) >= dw;
      disp[x] = static_cast<float>(floor ? floor_disparity(y) : dw);
      color[x] = floor ? floor_palette.rgb[texel(floor_seed, Pattern::kChecker, x, y)]
                       : wall_palette.rgb[texel(wall_seed, wall_pattern, x, y)];
    }
    std::uint8_t* left = bg.left.row(y);
    for (int x = 0; x < w; ++x) {
      std::copy(color[x].begin(), color[x].end(), left + 3 * x);
      bg.left_disparity(x, y) = disp[x];
    }
    warp_row(disp.data(), canvas, bg.right_disparity.row(y), source.data(), w);
    // Where the wall's disparity drops by one a right pixel receives nothing: it shows the same
    // surface as its neighbour (its ground truth stays unknown).
    int last = -1;
    for (int x = 0; x < w && last < 0; ++x) last = source[x];
    std::uint8_t* right = bg.right.row(y);
    for (int x = 0; x < w; ++x) {
      if (source[x] >= 0) last = source[x];
      std::copy(color[last].begin(), color[last].end(), right + 3 * x);
    }
  }
  bg.nearest = hi;
  fill_right_shift(bg, lo);
  return bg;
}

StaticBackground crop_background(const SyntheticOptions& o, const SyntheticBackground& real) {
  const int bw = real.left.width, bh = real.left.height;
  if (real.right.width != bw || real.right.height != bh || real.left_disparity.width() != bw ||
      real.left_disparity.height() != bh) {
    throw std::invalid_argument(
        "synthetic background: the left image is " + size_text(bw, bh) + ", the right image " +
        size_text(real.right.width, real.right.height) + " and the disparity " +
        size_text(real.left_disparity.width(), real.left_disparity.height()) +
        ": they must be the same size");
  }
  if (o.width > bw) {
    throw std::invalid_argument("synthetic.width = " + std::to_string(o.width) +
                                ": wider than the background (" + size_text(bw, bh) + ")");
  }
  if (o.height > bh) {
    throw std::invalid_argument("synthetic.height = " + std::to_string(o.height) +
                                ": taller than the background (" + size_text(bw, bh) + ")");
  }
  const int ox = (bw - o.width) / 2, oy = (bh - o.height) / 2;

  StaticBackground bg;
  bg.left.resize(o.width, o.height);
  bg.right.resize(o.width, o.height);
  bg.left_disparity.resize(o.width, o.height);
  bg.right_disparity.resize(o.width, o.height);
  // Warp whole rows: a right pixel near the crop's right edge may come from beyond it.
  std::vector<float> right_row(static_cast<std::size_t>(bw));
  std::vector<int> source(static_cast<std::size_t>(bw));
  float nearest = 0;
  for (int y = 0; y < o.height; ++y) {
    const int sy = y + oy;
    std::copy_n(real.left.row(sy) + 3 * ox, 3 * o.width, bg.left.row(y));
    std::copy_n(real.right.row(sy) + 3 * ox, 3 * o.width, bg.right.row(y));
    warp_row(real.left_disparity.row(sy), bw, right_row.data(), source.data(), bw);
    for (int x = 0; x < o.width; ++x) {
      const float dl = real.left_disparity(x + ox, sy);
      const float dr = right_row[x + ox];
      bg.left_disparity(x, y) = known(dl) ? dl : kUnknown;
      bg.right_disparity(x, y) = dr;
      if (known(dl)) nearest = std::max(nearest, dl);
      if (known(dr)) nearest = std::max(nearest, dr);
    }
  }
  if (!o.color) {
    to_grey(bg.left);
    to_grey(bg.right);
  }
  bg.nearest = static_cast<int>(std::ceil(nearest));
  if (o.max_disparity < bg.nearest + 2) {
    throw std::invalid_argument(
        "synthetic.max_disparity = " + std::to_string(o.max_disparity) +
        ": objects must be in front of the background, whose largest disparity is " +
        std::to_string(bg.nearest) + ", so it must be at least " + std::to_string(bg.nearest + 2));
  }
  fill_right_shift(bg, 0);
  return bg;
}

}  // namespace stereod::synth
