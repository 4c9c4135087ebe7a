#include "synthetic/shape.hpp"

#include <algorithm>
#include <cmath>

namespace stereod::synth {
namespace {

// Directions whose length is an integer (Pythagorean triples), in the first quadrant by
// increasing angle; the other three quadrants are these turned by 90 degrees. Rotating by one of
// them keeps every coordinate an integer, scaled by the length.
struct Direction {
  int p, q, n;  // (p, q) / n is a unit vector
};
constexpr std::array<Direction, 11> kQuadrant{{{1, 0, 1},
                                               {24, 7, 25},
                                               {12, 5, 13},
                                               {15, 8, 17},
                                               {4, 3, 5},
                                               {21, 20, 29},
                                               {20, 21, 29},
                                               {3, 4, 5},
                                               {8, 15, 17},
                                               {5, 12, 13},
                                               {7, 24, 25}}};
constexpr int kQuadrantSteps = static_cast<int>(kQuadrant.size());
constexpr int kDirections = 4 * kQuadrantSteps;  // 11 steps span 90 degrees

Direction direction(int index) {
  const int i = ((index % kDirections) + kDirections) % kDirections;
  Direction d = kQuadrant[i % kQuadrantSteps];
  for (int turn = 0; turn < i / kQuadrantSteps; ++turn) d = {-d.q, d.p, d.n};
  return d;
}

// floor(sqrt(v)) for v >= 0; sqrt is correctly rounded in IEEE arithmetic, the loops only guard
// the conversion.
std::int64_t isqrt(std::int64_t v) {
  auto r = static_cast<std::int64_t>(std::sqrt(static_cast<double>(v)));
  while (r * r > v) --r;
  while ((r + 1) * (r + 1) <= v) ++r;
  return r;
}

// Narrows [first, last] to the points of row v inside one half-plane.
void clip(const HalfPlane& h, int v, std::int64_t& first, std::int64_t& last) {
  const std::int64_t rest = h.c - h.q * v;  // p u <= rest
  if (h.p > 0) {
    last = std::min(last, floor_div(rest, h.p));
  } else if (h.p < 0) {
    first = std::max(first, -floor_div(rest, -h.p));  // u >= ceil(rest / p)
  } else if (rest < 0) {
    last = first - 1;
  }
}

}  // namespace

bool Shape::contains(int u, int v) const {
  for (int j = 0; j < planes; ++j) {
    if (plane[j].p * u + plane[j].q * v > plane[j].c) return false;
  }
  if (kind == ShapeKind::kRectangle || kind == ShapeKind::kPolygon) return true;
  const std::int64_t ru = static_cast<std::int64_t>(p) * u + static_cast<std::int64_t>(q) * v;
  const std::int64_t rv = -static_cast<std::int64_t>(q) * u + static_cast<std::int64_t>(p) * v;
  const std::int64_t an = static_cast<std::int64_t>(a) * n, bn = static_cast<std::int64_t>(b) * n;
  if (kind == ShapeKind::kEllipse) {
    return ru * ru * b * b + rv * rv * a * a <= an * an * b * b;
  }
  // Rounded rectangle, already inside the rectangle: only the corners are cut.
  const std::int64_t cn = static_cast<std::int64_t>(corner) * n;
  const std::int64_t eu = std::max<std::int64_t>(std::abs(ru) - (an - cn), 0);
  const std::int64_t ev = std::max<std::int64_t>(std::abs(rv) - (bn - cn), 0);
  return eu * eu + ev * ev <= cn * cn;
}

bool Shape::span(int v, int& first, int& last) const {
  std::int64_t lo = -bound, hi = bound;
  for (int j = 0; j < planes; ++j) clip(plane[j], v, lo, hi);
  if (kind == ShapeKind::kEllipse) {
    // Row v of the ellipse is A u^2 + B u + C <= 0. Its roots, in floating point, only say where
    // to look: the ends are then settled by contains() alone, so they are exact everywhere.
    const double pp = static_cast<double>(p) * p, qq = static_cast<double>(q) * q;
    const double aa = static_cast<double>(a) * a, bb = static_cast<double>(b) * b;
    const double ka = pp * bb + qq * aa;
    const double kb = 2.0 * v * p * q * (bb - aa);
    const double kc = v * static_cast<double>(v) * (qq * bb + pp * aa) - aa * bb * n * n;
    const double middle = -kb / (2 * ka);
    const double half = std::sqrt(std::max(0.0, kb * kb - 4 * ka * kc)) / (2 * ka);
    // The quadratic is convex in u: if any integer u is inside, one next to the vertex is.
    auto seed = static_cast<std::int64_t>(std::floor(middle));
    if (!contains(static_cast<int>(seed), v)) ++seed;
    if (!contains(static_cast<int>(seed), v)) return false;
    lo = std::min(seed, std::max(lo, static_cast<std::int64_t>(std::floor(middle - half))));
    hi = std::max(seed, std::min(hi, static_cast<std::int64_t>(std::ceil(middle + half))));
    if (contains(static_cast<int>(lo), v)) {
      while (contains(static_cast<int>(lo) - 1, v)) --lo;
    } else {
      while (!contains(static_cast<int>(lo), v)) ++lo;
    }
    if (contains(static_cast<int>(hi), v)) {
      while (contains(static_cast<int>(hi) + 1, v)) ++hi;
    } else {
      while (!contains(static_cast<int>(hi), v)) --hi;
    }
  } else if (kind == ShapeKind::kRoundedRectangle) {
    // Inside the rectangle's span; the corners only shorten it.
    while (lo <= hi && !contains(static_cast<int>(lo), v)) ++lo;
    while (hi >= lo && !contains(static_cast<int>(hi), v)) --hi;
  }
  if (lo > hi) return false;
  first = static_cast<int>(lo);
  last = static_cast<int>(hi);
  return true;
}

Shape random_shape(Rng& rng, int radius) {
  Shape s;
  s.kind = static_cast<ShapeKind>(rng.range(0, 3));
  s.a = radius;
  s.b = std::max(2, radius * rng.range(45, 100) / 100);
  const Direction d = direction(rng.range(0, kDirections - 1));
  s.p = d.p, s.q = d.q, s.n = d.n;
  s.corner = std::max(1, s.b * rng.range(20, 60) / 100);
  // Rotated, the outline stays within the circle through the rectangle's corners.
  s.bound = static_cast<int>(isqrt(static_cast<std::int64_t>(s.a) * s.a +
                                   static_cast<std::int64_t>(s.b) * s.b)) +
            1;
  if (s.kind == ShapeKind::kRectangle || s.kind == ShapeKind::kRoundedRectangle) {
    // |U| <= a n and |V| <= b n.
    const std::int64_t an = static_cast<std::int64_t>(s.a) * s.n;
    const std::int64_t bn = static_cast<std::int64_t>(s.b) * s.n;
    s.planes = 4;
    s.plane[0] = {s.p, s.q, an};
    s.plane[1] = {-s.p, -s.q, an};
    s.plane[2] = {-s.q, s.p, bn};
    s.plane[3] = {s.q, -s.p, bn};
  } else if (s.kind == ShapeKind::kPolygon) {
    // Sides spread around the circle with a little jitter; no two neighbouring normals are more
    // than 11 steps (90 degrees) apart, so every vertex lies within radius * sqrt(2).
    s.planes = rng.range(5, 8);
    const int start = rng.range(0, kDirections - 1);
    for (int j = 0; j < s.planes; ++j) {
      const Direction normal = direction(start + j * kDirections / s.planes + rng.range(-1, 1));
      const std::int64_t reach =
          std::max<std::int64_t>(1, static_cast<std::int64_t>(radius) * rng.range(80, 100) / 100);
      s.plane[j] = {normal.p, normal.q, reach * normal.n};
    }
    s.b = s.a;
    s.bound = radius * 3 / 2 + 1;
  }
  return s;
}

}  // namespace stereod::synth
