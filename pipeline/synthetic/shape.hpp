// Outlines of the synthetic scene's moving objects: ellipses, rectangles, rounded rectangles and
// convex polygons, rotated, with every inside test in exact integer arithmetic (no trigonometry,
// whose last bits differ between maths libraries, can flip a pixel).
#pragma once

#include <array>
#include <cstdint>

#include "synthetic/hash.hpp"

namespace stereod::synth {

enum class ShapeKind { kEllipse, kRectangle, kRoundedRectangle, kPolygon };

// The points with p * u + q * v <= c.
struct HalfPlane {
  std::int64_t p = 0, q = 0, c = 0;
};

struct Shape {
  ShapeKind kind = ShapeKind::kEllipse;
  int a = 1, b = 1;  // half extents along the rotated axes (polygon: a is the radius)
  int corner = 0;    // rounded rectangle: corner radius
  // Rotation by the unit vector (p, q) / n with integer length n: coordinates along the rotated
  // axes, times n, are U = p u + q v and V = -q u + p v.
  int p = 1, q = 0, n = 1;
  // Rectangles and polygons are the intersection of these (a rounded rectangle: minus corners).
  int planes = 0;
  std::array<HalfPlane, 8> plane{};
  int bound = 1;  // every inside point lies within this many pixels of the centre, per axis

  // Whether the point (u, v) relative to the centre is inside.
  bool contains(int u, int v) const;
  // The inside points of row v are u = first .. last (every outline is convex); false when the
  // row has none. Exactly the points contains() accepts.
  bool span(int v, int& first, int& last) const;
};

// A random outline whose larger half extent is `radius` (>= 2).
Shape random_shape(Rng& rng, int radius);

}  // namespace stereod::synth
