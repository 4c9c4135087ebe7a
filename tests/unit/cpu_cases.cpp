#include "cpu_cases.hpp"

#include <algorithm>

#include "plane_scenes.hpp"

namespace stereod::testing {
namespace {

int odd_in(CaseRng& rng, int lo, int hi) {
  return rng.range(lo / 2, hi / 2) * 2 + 1;
}

StereoParams random_params(CaseRng& rng, int width) {
  StereoParams p;
  // Mostly a range that leaves most of the image matchable; now and then up to the image width.
  const int d_max = std::min(width - 1, 160);
  const int d_usual = std::max(std::min(8, d_max), std::min(d_max, width / 2));
  p.max_disparity = rng.chance(80) ? rng.range(std::min(8, d_max), d_usual) : rng.range(1, d_max);
  p.levels = rng.range(1, 5);
  p.min_coarse_disparities = rng.chance(70) ? 8 : rng.range(1, 16);
  p.cost = static_cast<MatchingCost>(rng.range(0, 2));
  do {
    p.census_width = odd_in(rng, 1, 9);
    p.census_height = odd_in(rng, 1, 9);
  } while (p.census_width * p.census_height - 1 > 64);
  p.ad_truncation = rng.chance(50) ? rng.range(1, 40) : rng.range(1, 255);
  p.lambda_ad = rng.chance(50) ? rng.range(1, 12) : rng.range(1, 255);
  p.lambda_census = rng.chance(50) ? rng.range(10, 40) : rng.range(1, 255);
  p.ad_mean_radius = rng.range(0, 3);
  p.subwindow = rng.chance(50) ? 3 : odd_in(rng, 1, 9);
  p.best_k = rng.range(0, 8);
  p.parent_radius = rng.range(0, 4);
  p.cross_check = rng.chance(80);
  p.cross_check_tolerance = rng.chance(70) ? 1 : rng.range(0, 4);
  p.uniqueness = rng.chance(70) ? 0 : rng.range(1, 40);
  p.subpixel = rng.chance(75);
  p.speckle_size = rng.chance(20) ? 0 : (rng.chance(70) ? rng.range(1, 40) : rng.range(41, 200));
  p.speckle_range = rng.range(0, 3);
  p.median = rng.chance(75);
  p.fill = rng.chance(50);
  p.fill_mode = rng.chance(50) ? FillMode::kBackground : FillMode::kIntensity;
  p.fill_interpolate_max = rng.range(0, 6);
  return p;
}

}  // namespace

void random_cross_arms(CaseRng& rng, StereoParams& p, int max_arm) {
  p.cross_tau1 = rng.range(1, 60);
  p.cross_tau2 = rng.range(0, p.cross_tau1);
  p.cross_l1 = rng.range(1, max_arm);
  p.cross_l2 = rng.range(0, p.cross_l1);
}

void random_refinement(CaseRng& rng, StereoParams& p) {
  p.refine = true;
  p.refine_iterations = rng.range(0, 6);
  p.refine_votes = rng.chance(50) ? rng.range(1, 8) : rng.range(1, 40);
  p.refine_share = rng.range(0, 99);
  p.refine_edges = rng.chance(40) ? 0 : rng.range(1, 4);
  p.refine_interpolate = rng.chance(75);
  p.refine_edges_near = rng.chance(50);
}

std::vector<Gray8> random_masks(CaseRng& rng, int width, int height, int levels, int shift) {
  CaseRng boxes_rng = rng;  // both views draw the same boxes
  std::vector<Gray8> masks(static_cast<std::size_t>(levels));
  Gray8& full = masks[0];
  full.resize(width, height, 0);
  const int boxes = boxes_rng.range(1, 6);
  for (int b = 0; b < boxes; ++b) {
    const int x0 = boxes_rng.range(0, width - 1) - shift, y0 = boxes_rng.range(0, height - 1);
    const int x1 = std::min(width, x0 + boxes_rng.range(1, std::max(1, width / 2)));
    const int y1 = std::min(height, y0 + boxes_rng.range(1, std::max(1, height / 2)));
    for (int y = y0; y < y1; ++y) {
      for (int x = std::max(0, x0); x < x1; ++x) full(x, y) = 1;
    }
  }
  // A sprinkle of isolated pixels of each view's own, so the masks are not only rectangles.
  for (int i = 0; i < width * height / 50; ++i) {
    full(rng.range(0, width - 1), rng.range(0, height - 1)) ^= 1;
  }
  for (int s = 1; s < levels; ++s) {
    const Gray8& fine = masks[s - 1];
    const int w = level_side(width, s), h = level_side(height, s);
    masks[s].resize(w, h, 0);
    for (int y = 0; y < h; ++y) {
      for (int x = 0; x < w; ++x) {
        const int x1 = std::min(2 * x + 1, fine.width() - 1);
        const int y1 = std::min(2 * y + 1, fine.height() - 1);
        masks[s](x, y) = fine(2 * x, 2 * y) | fine(x1, 2 * y) | fine(2 * x, y1) | fine(x1, y1);
      }
    }
  }
  return masks;
}

StereoInput stereo_input(const MatcherCase& c) {
  StereoInput in;
  in.left = c.left.view();
  in.right = c.right.view();
  for (const auto& m : c.left_foreground) in.left_foreground.push_back(m.view());
  for (const auto& m : c.right_foreground) in.right_foreground.push_back(m.view());
  return in;
}

MatcherCase random_matcher_case(std::uint64_t seed, int max_width, int max_height) {
  CaseRng rng(seed);
  MatcherCase c;
  c.name = "random" + std::to_string(seed);
  for (;;) {
    c.width = rng.range(kMinImageSide, max_width);
    c.height = rng.range(kMinImageSide, max_height);
    c.params = random_params(rng, c.width);
    try {
      validate_for_images(c.params, c.width, c.height, c.width, c.height);
      break;
    } catch (const ParameterError&) {
      continue;  // draw again: the case must be one the matcher accepts
    }
  }
  const bool noise = rng.chance(25);
  const std::uint32_t image_seed = static_cast<std::uint32_t>(rng.next());
  if (noise) {
    c.left = random_image(c.width, c.height, image_seed);
    c.right = random_image(c.width, c.height, image_seed + 1);
  } else {
    std::vector<PlaneLayer> layers(1);
    const int d = c.params.max_disparity;
    layers[0].disparity = rng.range(0, std::max(0, d / 3 - 1));
    layers[0].seed = image_seed;
    const int objects = rng.range(0, 4);
    for (int i = 0; i < objects; ++i) {
      PlaneLayer l;
      l.x0 = rng.range(0, c.width - 1);
      l.y0 = rng.range(0, c.height - 1);
      l.x1 = l.x0 + rng.range(1, std::max(1, c.width / 2));
      l.y1 = l.y0 + rng.range(1, std::max(1, c.height / 2));
      l.disparity = rng.range(0, std::max(0, d - 1));
      l.rows_per_step = rng.chance(30) ? rng.range(4, 24) : 0;
      l.seed = static_cast<std::uint32_t>(rng.next());
      layers.push_back(l);
    }
    const SyntheticPair pair = render_planes(c.width, c.height, layers);
    c.left = pair.left;
    c.right = pair.right;
  }
  if (rng.chance(35)) {
    const int levels = effective_levels(c.params);
    const int shift = rng.range(0, c.params.max_disparity / 3);
    c.left_foreground = random_masks(rng, c.width, c.height, levels, 0);
    c.right_foreground = random_masks(rng, c.width, c.height, levels, shift);
  }
  return c;
}

}  // namespace stereod::testing
