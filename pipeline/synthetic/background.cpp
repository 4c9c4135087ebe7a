#include "synthetic/background.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
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

// A shift map from a partner view's disparity (rows along the baseline): where the disparity is
// unknown (occluded in the left view, or no ground truth) the surface is taken to be the farther
// of the two nearest known neighbours.
void fill_shift(const Image<float>& disparity, Image<std::int16_t>& shift_map, int& shift_min,
                int& shift_max, int fallback) {
  const int w = disparity.width(), h = disparity.height();
  shift_map.resize(w, h);
  std::vector<int> before(static_cast<std::size_t>(w));
  shift_min = std::numeric_limits<int>::max();
  shift_max = std::numeric_limits<int>::min();
  for (int y = 0; y < h; ++y) {
    const float* d = disparity.row(y);
    int last = -1;
    for (int x = 0; x < w; ++x) {
      if (known(d[x])) last = static_cast<int>(std::floor(d[x] + 0.5f));
      before[x] = last;
    }
    int next = -1;
    std::int16_t* s = shift_map.row(y);
    for (int x = w - 1; x >= 0; --x) {
      if (known(d[x])) next = static_cast<int>(std::floor(d[x] + 0.5f));
      int v = before[x] >= 0 && next >= 0 ? std::min(before[x], next) : std::max(before[x], next);
      if (v < 0) v = fallback;
      s[x] = static_cast<std::int16_t>(v);
      shift_min = std::min(shift_min, v);
      shift_max = std::max(shift_max, v);
    }
  }
}

void fill_right_shift(StaticBackground& bg, int fallback) {
  fill_shift(bg.right_disparity, bg.right_shift, bg.shift_min, bg.shift_max, fallback);
}

// What a left-view canvas shows at (x, y), which may lie outside the frame: its disparity (+inf:
// unknown) and colour.
using CanvasSample = std::function<void(int x, int y, float& d, Rgb& c)>;

// One line of a partner view along its baseline: the canvas line (`canvas` samples, the first
// one at the partner's position 0) forward-warped onto `n` partner pixels. Where nothing lands
// the pixel shows the surface its neighbour shows (its ground truth stays unknown).
void warp_line(const std::vector<float>& disp, const std::vector<Rgb>& color, int canvas, int n,
               float* out_disparity, std::vector<int>& source, Rgb* out_color) {
  warp_row(disp.data(), canvas, out_disparity, source.data(), n);
  int last = -1;
  for (int x = 0; x < n && last < 0; ++x) last = source[x];
  for (int x = 0; x < n; ++x) {
    if (source[x] >= 0) last = source[x];
    out_color[x] = color[static_cast<std::size_t>(last >= 0 ? last : x)];
  }
}

// The right view: each row of the canvas, `extra` pixels wider than the frame on the right.
void render_right(const SyntheticOptions& o, int extra, const CanvasSample& sample,
                  StaticBackground& bg) {
  const int w = o.width, h = o.height, canvas = w + extra + 1;
  bg.right.resize(w, h);
  bg.right_disparity.resize(w, h);
  std::vector<float> disp(static_cast<std::size_t>(canvas));
  std::vector<Rgb> color(static_cast<std::size_t>(canvas)), line(static_cast<std::size_t>(w));
  std::vector<int> source(static_cast<std::size_t>(w));
  for (int y = 0; y < h; ++y) {
    for (int x = 0; x < canvas; ++x) sample(x, y, disp[x], color[x]);
    warp_line(disp, color, canvas, w, bg.right_disparity.row(y), source, line.data());
    std::uint8_t* right = bg.right.row(y);
    for (int x = 0; x < w; ++x) std::copy(line[x].begin(), line[x].end(), right + 3 * x);
  }
}

// The vertical view, as the right view of the transposed canvas: line x is the left view's
// column x, read downwards for a camera below (which sees y at y - d) and upwards for one above.
void render_vertical(const SyntheticOptions& o, int extra, const CanvasSample& sample,
                     StaticBackground& bg) {
  const int w = o.width, h = o.height, canvas = h + extra + 1;
  const bool above = o.vertical == SyntheticVertical::kAbove;
  auto y_of = [&](int u) { return above ? h - 1 - u : u; };
  Image<float> transposed(h, w);  // the vertical view's disparity, line x = column x
  bg.vertical.resize(w, h);
  std::vector<float> disp(static_cast<std::size_t>(canvas));
  std::vector<Rgb> color(static_cast<std::size_t>(canvas)), line(static_cast<std::size_t>(h));
  std::vector<int> source(static_cast<std::size_t>(h));
  for (int x = 0; x < w; ++x) {
    for (int u = 0; u < canvas; ++u) sample(x, y_of(u), disp[u], color[u]);
    warp_line(disp, color, canvas, h, transposed.row(x), source, line.data());
    for (int u = 0; u < h; ++u) {
      std::copy(line[u].begin(), line[u].end(), bg.vertical.row(y_of(u)) + 3 * x);
    }
  }
  Image<std::int16_t> shift;
  fill_shift(transposed, shift, bg.vertical_shift_min, bg.vertical_shift_max, 0);
  bg.vertical_shift.resize(w, h);
  bg.vertical_disparity.resize(w, h);
  for (int x = 0; x < w; ++x) {
    for (int u = 0; u < h; ++u) {
      bg.vertical_shift(x, y_of(u)) = shift(u, x);
      bg.vertical_disparity(x, y_of(u)) = transposed(u, x);
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

  // The right view sees left-view columns up to w - 1 + hi: the wall's slope spans that much of
  // the left canvas.
  const int canvas = w + hi + 1;
  auto wall_disparity = [&](int x) {
    return wall_left + static_cast<int>(scale_round(wall_right - wall_left, x, canvas - 1));
  };
  auto floor_disparity = [&](int y) {
    return floor_top + static_cast<int>(scale_round(hi - floor_top, y - horizon, h - 1 - horizon));
  };

  // Mixed: stripes on the wall, bars on the floor.
  const bool mixed = o.texture == SyntheticTexture::kMixed;
  const SyntheticTexture wall_texture = mixed ? SyntheticTexture::kHorizontalStripes : o.texture;
  const SyntheticTexture floor_texture = mixed ? SyntheticTexture::kVerticalBars : o.texture;
  const CanvasSample sample = [&](int x, int y, float& d, Rgb& c) {
    const int dw = wall_disparity(x);
    // Beyond the bottom edge (which only a camera below sees) the floor stops at `hi`.
    const int df = std::min(hi, floor_disparity(y));
    const bool floor = y >= horizon && df >= dw;
    d = static_cast<float>(floor ? df : dw);
    c = floor
            ? floor_palette.rgb[oriented_texel(floor_texture, floor_seed, Pattern::kChecker, x, y)]
            : wall_palette.rgb[oriented_texel(wall_texture, wall_seed, wall_pattern, x, y)];
  };

  StaticBackground bg;
  bg.left.resize(w, h);
  bg.left_disparity.resize(w, h);
  for (int y = 0; y < h; ++y) {
    std::uint8_t* left = bg.left.row(y);
    for (int x = 0; x < w; ++x) {
      float d = 0;
      Rgb c{};
      sample(x, y, d, c);
      std::copy(c.begin(), c.end(), left + 3 * x);
      bg.left_disparity(x, y) = d;
    }
  }
  // The partner views see left-view points up to `hi` beyond the frame.
  render_right(o, hi, sample, bg);
  if (o.vertical != SyntheticVertical::kNone) render_vertical(o, hi, sample, bg);
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
  if (o.vertical != SyntheticVertical::kNone) {
    // Both partners rendered from the left photo on its true geometry (synthetic_scene.hpp).
    const CanvasSample sample = [&](int x, int y, float& d, Rgb& c) {
      const int rx = x + ox, ry = y + oy;
      if (rx < 0 || rx >= bw || ry < 0 || ry >= bh) {
        d = kUnknown;
        c = Rgb{};
        return;
      }
      const float t = real.left_disparity(rx, ry);
      d = known(t) ? t : kUnknown;
      const std::uint8_t* p = real.left.row(ry) + 3 * rx;
      c = {p[0], p[1], p[2]};
      if (!o.color) c.fill(luma(p[0], p[1], p[2]));
    };
    render_right(o, bg.nearest + 1, sample, bg);
    render_vertical(o, bg.nearest + 1, sample, bg);
  }
  fill_right_shift(bg, 0);
  return bg;
}

}  // namespace stereod::synth
