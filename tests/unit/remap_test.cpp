// The fixed-point bilinear remap: exactly its integer definition, close to a floating-point
// remap at the exact (unquantized) coordinates, and well-behaved at and beyond the border.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "rectify/remap.hpp"

using namespace stereod;

namespace {

Gray8 random_gray(int w, int h, std::uint32_t seed) {
  Gray8 img(w, h);
  std::mt19937 rng(seed);
  for (auto& p : img.pixels()) p = static_cast<std::uint8_t>(rng() & 255u);
  return img;
}

// A smooth image: gradients of a few gray levels per pixel, like real camera images.
Gray8 smooth_gray(int w, int h) {
  Gray8 img(w, h);
  for (int y = 0; y < h; ++y) {
    for (int x = 0; x < w; ++x) {
      img(x, y) = static_cast<std::uint8_t>(
          std::lround(127.5 + 120.0 * std::sin(x * 0.11) * std::cos(y * 0.07 + 0.3)));
    }
  }
  return img;
}

double tap(const Gray8& src, int x, int y) {
  return (x >= 0 && x < src.width() && y >= 0 && y < src.height()) ? src(x, y) : 0.0;
}

// Bilinear interpolation in double precision at a real-valued source position, with the same
// zero border as the definition.
double bilinear(const Gray8& src, double x, double y) {
  const double fx0 = std::floor(x), fy0 = std::floor(y);
  const int x0 = static_cast<int>(fx0), y0 = static_cast<int>(fy0);
  const double ax = x - fx0, ay = y - fy0;
  return (1 - ax) * (1 - ay) * tap(src, x0, y0) + ax * (1 - ay) * tap(src, x0 + 1, y0) +
         (1 - ax) * ay * tap(src, x0, y0 + 1) + ax * ay * tap(src, x0 + 1, y0 + 1);
}

// A map that rotates by 7 degrees about the centre, scales by 1.05 and shifts by a fraction of
// a pixel: every destination pixel lands at a different subpixel position, and the corners fall
// outside the source. The exact coordinates are kept for the floating-point comparison.
struct TestMap {
  RectificationMap fixed;
  std::vector<double> exact;  // x, y per pixel
};

TestMap rotation_map(int w, int h) {
  TestMap m;
  m.fixed.resize(w, h);
  m.exact.resize(2 * static_cast<std::size_t>(w) * h);
  const double a = 7.0 * M_PI / 180.0, s = 1.05;
  const double cx = (w - 1) / 2.0, cy = (h - 1) / 2.0;
  for (int y = 0; y < h; ++y) {
    for (int x = 0; x < w; ++x) {
      const double sx = cx + s * (std::cos(a) * (x - cx) - std::sin(a) * (y - cy)) + 0.37;
      const double sy = cy + s * (std::sin(a) * (x - cx) + std::cos(a) * (y - cy)) - 0.21;
      const std::size_t i = 2 * (static_cast<std::size_t>(y) * w + x);
      m.exact[i] = sx;
      m.exact[i + 1] = sy;
      m.fixed.at(x, y)[0] = quantize_map_coord(sx, w);
      m.fixed.at(x, y)[1] = quantize_map_coord(sy, h);
    }
  }
  return m;
}

}  // namespace

TEST(Remap, EqualsTheIntegerDefinitionExactly) {
  // Bilinear interpolation at the quantized coordinates, in double precision: the weights are
  // multiples of 1/65536 and the sum is below 2^24, so this is exact, and rounding it half up must
  // give the integer remap's value bit for bit.
  const int w = 97, h = 61;  // odd sizes
  const Gray8 src = random_gray(w, h, 3);
  RectificationMap map;
  map.resize(w, h);
  std::mt19937 rng(11);
  std::uniform_real_distribution<double> ux(-4.0, w + 3.0), uy(-4.0, h + 3.0);
  for (int y = 0; y < h; ++y) {
    for (int x = 0; x < w; ++x) {
      map.at(x, y)[0] = quantize_map_coord(ux(rng), w);
      map.at(x, y)[1] = quantize_map_coord(uy(rng), h);
    }
  }
  Gray8 dst;
  remap(src.view(), map, dst);
  ASSERT_EQ(dst.width(), w);
  for (int y = 0; y < h; ++y) {
    for (int x = 0; x < w; ++x) {
      const double sx = map.at(x, y)[0] / 256.0, sy = map.at(x, y)[1] / 256.0;
      ASSERT_EQ(dst(x, y), static_cast<int>(std::floor(bilinear(src, sx, sy) + 0.5)))
          << "at " << x << "," << y;
    }
  }
}

TEST(Remap, IsCloseToFloatingPointAtTheExactCoordinates) {
  // Against bilinear interpolation at the unquantized coordinates. Quantizing a coordinate to
  // 1/256 pixel moves it by at most 1/512 pixel per axis, which changes a bilinear value by at
  // most (largest step between neighbours) * (1/512 + 1/512); rounding adds at most 1/2, and
  // comparing with the rounded reference another 1/2. Smooth images (steps of a few levels)
  // must therefore agree within 1 level; random images (steps up to 255) within 2.
  const int w = 160, h = 120;
  const TestMap m = rotation_map(w, h);
  const struct {
    Gray8 src;
    int tolerance;
    double mean_limit;
  } cases[] = {{smooth_gray(w, h), 1, 0.05}, {random_gray(w, h, 5), 2, 0.3}};
  for (const auto& c : cases) {
    Gray8 dst;
    remap(c.src.view(), m.fixed, dst);
    int worst = 0;
    double total = 0;
    for (int y = 0; y < h; ++y) {
      for (int x = 0; x < w; ++x) {
        const std::size_t i = 2 * (static_cast<std::size_t>(y) * w + x);
        const double ref = bilinear(c.src, m.exact[i], m.exact[i + 1]);
        const int diff = std::abs(dst(x, y) - static_cast<int>(std::lround(ref)));
        worst = std::max(worst, diff);
        total += diff;
      }
    }
    EXPECT_LE(worst, c.tolerance);
    EXPECT_LE(total / (w * h), c.mean_limit);
  }
}

TEST(Remap, IdentityAndBorders) {
  const Gray8 src = random_gray(13, 9, 1);
  Gray8 dst;
  remap(src.view(), identity_map(13, 9), dst);
  EXPECT_EQ(dst, src);

  // One source pixel of value 200 in an otherwise black image, sampled around the border.
  Gray8 one(4, 3, 0);
  one(3, 2) = 200;
  const auto at = [&](double x, double y) {
    return remap_bilinear_at(one.data(), 4, 3, 4, quantize_map_coord(x, 4),
                             quantize_map_coord(y, 3));
  };
  EXPECT_EQ(at(3, 2), 200);
  EXPECT_EQ(at(3.5, 2), 100);   // half beyond the right edge: blends with 0
  EXPECT_EQ(at(3.5, 2.5), 50);  // a quarter inside
  EXPECT_EQ(at(4.0, 2), 0);     // wholly outside
  EXPECT_EQ(at(1e9, 2), 0);     // far outside: clamped, still 0
  EXPECT_EQ(at(-1e9, -1e9), 0);
  EXPECT_EQ(at(std::nan(""), 2), 0);
  EXPECT_EQ(quantize_map_coord(1e9, 4), (4 + 1) * 256);
  EXPECT_EQ(quantize_map_coord(-1e9, 4), -2 * 256);

  // A strided source is read through its stride.
  Gray8 wide(8, 3, 7);
  ImageView<const std::uint8_t> left_half(wide.data(), 4, 3, 8);
  remap(left_half, identity_map(4, 3), dst);
  EXPECT_EQ(dst, Gray8(4, 3, 7));
}

TEST(Remap, RejectsAMapOfAnotherSize) {
  Gray8 src(10, 10), dst;
  EXPECT_THROW(remap(src.view(), identity_map(12, 10), dst), std::invalid_argument);
}
