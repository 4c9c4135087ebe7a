// Each stage of the CPU reference against a naive implementation written from the definition in
// docs/ALGORITHM.md, on random images: exact equality.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <random>

#include "plane_scenes.hpp"
#include "stereo/adaptive_window.hpp"
#include "stereo/census.hpp"
#include "stereo/cost.hpp"
#include "stereo/cross_check.hpp"
#include "stereo/mean_removal.hpp"
#include "stereo/pixel_ops.hpp"
#include "stereo/post_process.hpp"
#include "stereo/pyramid.hpp"
#include "stereo/search_range.hpp"
#include "stereo/speckle.hpp"
#include "thread_pool.hpp"

using namespace stereod;

namespace {

int clampi(int v, int lo, int hi) {
  return std::max(lo, std::min(hi, v));
}

Image<std::int16_t> random_disparities(int w, int h, int disparities, double invalid_share,
                                       std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> d(0, disparities - 1);
  std::uniform_real_distribution<double> u(0, 1);
  Image<std::int16_t> img(w, h);
  for (auto& v : img.pixels())
    v = u(rng) < invalid_share ? kNoDisparity : static_cast<std::int16_t>(d(rng));
  return img;
}

Gray8 random_mask(int w, int h, double fg_share, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(0, 1);
  Gray8 m(w, h);
  for (auto& v : m.pixels()) v = u(rng) < fg_share ? 1 : 0;
  return m;
}

struct Size {
  int w, h;
};
const Size kSizes[] = {{16, 16}, {17, 31}, {33, 19}, {64, 48}};

}  // namespace

TEST(Pyramid, DownsampleIsRoundedTwoByTwoMeanWithEdgeRepeat) {
  ThreadPool pool(2);
  for (auto s : kSizes) {
    const Gray8 fine = random_image(s.w, s.h, 3);
    Gray8 coarse;
    downsample(fine.view(), coarse, &pool);
    ASSERT_EQ(coarse.width(), (s.w + 1) / 2);
    ASSERT_EQ(coarse.height(), (s.h + 1) / 2);
    for (int y = 0; y < coarse.height(); ++y) {
      for (int x = 0; x < coarse.width(); ++x) {
        int sum = 0;
        for (int dy = 0; dy < 2; ++dy) {
          for (int dx = 0; dx < 2; ++dx)
            sum += fine(std::min(2 * x + dx, s.w - 1), std::min(2 * y + dy, s.h - 1));
        }
        const int expected = static_cast<int>(std::floor(sum / 4.0 + 0.5));
        ASSERT_EQ(coarse(x, y), expected) << s.w << "x" << s.h << " at " << x << "," << y;
      }
    }
  }
}

TEST(Census, MatchesBitByBitDefinition) {
  ThreadPool pool(2);
  const int windows[][2] = {{3, 3}, {5, 5}, {7, 7}, {9, 7}, {7, 9}, {1, 3}};
  for (auto s : kSizes) {
    const Gray8 img = random_image(s.w, s.h, 5);
    for (auto win : windows) {
      Image<std::uint64_t> codes;
      census_transform(img.view(), win[0], win[1], codes, &pool);
      for (int y = 0; y < s.h; ++y) {
        for (int x = 0; x < s.w; ++x) {
          // Naive: list the window's neighbours in row-major order, most significant first.
          std::vector<int> bits;
          for (int v = -(win[1] / 2); v <= win[1] / 2; ++v) {
            for (int u = -(win[0] / 2); u <= win[0] / 2; ++u) {
              if (u == 0 && v == 0) continue;
              bits.push_back(img(clampi(x + u, 0, s.w - 1), clampi(y + v, 0, s.h - 1)) < img(x, y));
            }
          }
          std::uint64_t expected = 0;
          for (int b : bits) expected = expected * 2 + static_cast<std::uint64_t>(b);
          ASSERT_EQ(codes(x, y), expected) << "window " << win[0] << "x" << win[1];
        }
      }
    }
  }
}

TEST(Cost, TablesFollowTheirDefinitions) {
  StereoParams p;
  p.cost = MatchingCost::kAbsDiff;
  p.ad_truncation = 17;
  CostTables t = make_cost_tables(p);
  EXPECT_FALSE(t.uses_census);
  EXPECT_EQ(pixel_cost(t, 10, 20, 0, 0), 10u);
  EXPECT_EQ(pixel_cost(t, 200, 20, 0, 0), 17u);
  EXPECT_EQ(t.outside, 17u);

  p.cost = MatchingCost::kCensus;
  t = make_cost_tables(p);
  EXPECT_EQ(pixel_cost(t, 0, 255, 0b1011, 0b0001), 2u);
  EXPECT_EQ(t.outside, static_cast<std::uint32_t>(p.census_width * p.census_height - 1));

  p.cost = MatchingCost::kAdCensus;
  t = make_cost_tables(p);
  for (int v = 0; v < 256; ++v) {
    EXPECT_EQ(t.ad[v], std::lround(64.0 * (1 - std::exp(-v / double(p.lambda_ad)))));
  }
  for (int h = 0; h <= 64; ++h) {
    EXPECT_EQ(t.census[h], std::lround(64.0 * (1 - std::exp(-h / double(p.lambda_census)))));
  }
  EXPECT_EQ(t.outside, static_cast<std::uint32_t>(t.ad[255] + t.census[62]));
}

TEST(PixelOps, SumOfSmallestKEqualsSortedPrefix) {
  std::mt19937 rng(1);
  std::uniform_int_distribution<std::uint32_t> d(0, 5000);
  for (int iter = 0; iter < 2000; ++iter) {
    std::uint32_t v[8];
    for (auto& x : v) x = d(rng) % (iter % 3 == 0 ? 4 : 5000);  // many ties too
    std::vector<std::uint32_t> sorted(v, v + 8);
    std::sort(sorted.begin(), sorted.end());
    for (int k = 0; k <= 8; ++k) {
      std::uint32_t copy[8];
      std::copy(v, v + 8, copy);
      std::uint32_t expected = 0;
      for (int i = 0; i < k; ++i) expected += sorted[i];
      ASSERT_EQ(sum_smallest_k_of_8(copy, k), expected);
    }
    std::uint32_t copy4[8];
    std::copy(v, v + 8, copy4);
    ASSERT_EQ(sum_smallest_4_of_8(copy4), sorted[0] + sorted[1] + sorted[2] + sorted[3]);
  }
}

// The CUDA engine's median: a sorting network with missing values sorted last, against the
// insertion sort over the valid values only.
TEST(PixelOps, MedianNetworkEqualsTheMedianOfTheValidValues) {
  std::mt19937 rng(3);
  for (int iter = 0; iter < 20000; ++iter) {
    std::uint16_t v[9];
    const int missing = iter % 10;  // 0 .. 9 of the nine missing (the centre among them at times)
    for (int k = 0; k < 9; ++k) {
      const bool gone = static_cast<int>(rng() % 9) < missing;
      v[k] = gone ? kInvalidDisparity : static_cast<std::uint16_t>(rng() % (iter % 2 ? 8 : 4096));
    }
    const auto at = [&](int dx, int dy) { return v[(dy + 1) * 3 + dx + 1]; };
    ASSERT_EQ(median3x3_network(v[4], at), median3x3_sampled(v[4], at)) << iter;
  }
}

// The census's byte-wise comparison, for every pair of bytes in every lane (the other lanes
// holding other pairs, so that a borrow crossing lanes would show).
TEST(PixelOps, BelowBytesComparesEveryPairOfBytes) {
  for (unsigned n = 0; n < 256; ++n) {
    for (unsigned c = 0; c < 256; ++c) {
      const unsigned n2 = 255 - n, c2 = (c * 7 + 3) & 255u;
      for (int lane = 0; lane < 4; ++lane) {
        const int other = (lane + 1) % 4;
        const std::uint32_t nw = (n << (8 * lane)) | (n2 << (8 * other));
        const std::uint32_t cw = (c << (8 * lane)) | (c2 << (8 * other));
        const std::uint32_t r = below_bytes(nw, cw, cw & 0x7F7F7F7Fu);
        ASSERT_EQ((r >> (8 * lane + 7)) & 1u, n < c ? 1u : 0u) << n << " " << c << " " << lane;
        ASSERT_EQ((r >> (8 * other + 7)) & 1u, n2 < c2 ? 1u : 0u) << n2 << " " << c2;
        ASSERT_EQ(r & ~0x80808080u, 0u);
      }
    }
  }
}

// The CUDA engine's preprocessing uses the compile-time versions for the default windows; they
// must give exactly the bits and bytes of the general ones wherever the window is inside.
TEST(PixelOps, FixedWindowVersionsEqualTheGeneralOnes) {
  std::mt19937 rng(17);
  constexpr int kW = 40, kH = 30;
  std::vector<std::uint8_t> img(kW * kH);
  for (int round = 0; round < 4; ++round) {
    // Noise, then flat areas and ties with the centre (where "<" matters).
    for (auto& v : img) v = static_cast<std::uint8_t>(round < 2 ? rng() % 256 : 100 + rng() % 3);
    for (int y = 4; y < kH - 4; ++y) {
      for (int x = 4; x < kW - 4; ++x) {
        ASSERT_EQ((census_fixed<9, 7>(img.data(), kW, x, y)),
                  census_at(img.data(), kW, kH, kW, x, y, 9, 7))
            << x << "," << y;
        if (x % 4 == 0 && x + 3 < kW - 4) {  // four pixels of a row at once, as the CUDA census
          std::uint64_t row[4];
          census_9x7_row4(img.data(), kW, x, y, row);
          for (int k = 0; k < 4; ++k) {
            ASSERT_EQ(row[k], (census_fixed<9, 7>(img.data(), kW, x + k, y)))
                << x << " + " << k << "," << y;
          }
        }
        if (x + 3 < kW - 4) {  // four mean-removed values of a row at once, as the CUDA engine
          const std::uint32_t packed = mean_removed_3x3_row4(img.data(), kW, x, y);
          for (int k = 0; k < 4; ++k) {
            ASSERT_EQ(static_cast<std::uint8_t>(packed >> (8 * k)),
                      (mean_removed_fixed<1>(img.data(), kW, x + k, y)))
                << x << " + " << k << "," << y;
          }
        }
        ASSERT_EQ((census_fixed<5, 5>(img.data(), kW, x, y)),
                  census_at(img.data(), kW, kH, kW, x, y, 5, 5));
        ASSERT_EQ((mean_removed_fixed<1>(img.data(), kW, x, y)),
                  mean_removed_at(img.data(), kW, kH, kW, x, y, 1));
        ASSERT_EQ((mean_removed_fixed<2>(img.data(), kW, x, y)),
                  mean_removed_at(img.data(), kW, kH, kW, x, y, 2));
      }
    }
  }
}

TEST(PixelOps, SubpixelOffsetIsRoundedParabolaVertex) {
  for (std::uint32_t c = 0; c < 40; c += 3) {
    for (std::uint32_t cm = 0; cm < 60; ++cm) {
      for (std::uint32_t cp = 0; cp < 60; ++cp) {
        const double den = double(cm) + cp - 2.0 * c;
        int expected = 0;
        if (den > 0) {
          const double off = 16.0 * (double(cm) - cp) / (2 * den);
          expected = static_cast<int>(std::copysign(std::floor(std::fabs(off) + 0.5), off));
          expected = std::max(-8, std::min(8, expected));
        }
        ASSERT_EQ(subpixel_offset(cm, c, cp), expected) << cm << " " << c << " " << cp;
      }
    }
  }
}

// subpixel_offset takes costs below 2^24 in 32-bit arithmetic: the same as the definition in 64
// bits, also at the edge of that range, with large spreads, and above it (the 64-bit path).
TEST(PixelOps, SubpixelOffsetIn32BitsEqualsTheDefinition) {
  const auto definition = [](std::uint32_t cm, std::uint32_t c, std::uint32_t cp) {
    const long long den = static_cast<long long>(cm) + cp - 2ll * c;
    if (den <= 0) return 0;
    const long long num = 8ll * (static_cast<long long>(cm) - cp);
    long long q = (2 * (num < 0 ? -num : num) + den) / (2 * den);
    if (num < 0) q = -q;
    return q > 8 ? 8 : (q < -8 ? -8 : static_cast<int>(q));
  };
  std::mt19937 rng(7);
  const std::uint32_t edge = (1u << 24) - 1;
  const std::uint32_t specials[] = {0,        1,
                                    2,        255,
                                    1u << 17, (1u << 18) - 1,
                                    edge - 1, edge,
                                    1u << 24, (1u << 24) + 1,
                                    1u << 30, 0xFFFFFFFFu / 4};
  for (std::uint32_t cm : specials) {
    for (std::uint32_t c : specials) {
      for (std::uint32_t cp : specials)
        ASSERT_EQ(subpixel_offset(cm, c, cp), definition(cm, c, cp)) << cm << " " << c << " " << cp;
    }
  }
  for (int bits : {8, 18, 24, 25}) {
    std::uniform_int_distribution<std::uint32_t> cost(0, (1u << bits) - 1);
    for (int i = 0; i < 200000; ++i) {
      const std::uint32_t c = cost(rng) / 2, cm = c + cost(rng) / 64, cp = c + cost(rng) / 64;
      ASSERT_EQ(subpixel_offset(cm, c, cp), definition(cm, c, cp)) << cm << " " << c << " " << cp;
      const std::uint32_t a = cost(rng), b = cost(rng), d = cost(rng);
      ASSERT_EQ(subpixel_offset(a, b, d), definition(a, b, d)) << a << " " << b << " " << d;
    }
  }
}

TEST(SearchRange, ParentNeighbourhoodRule) {
  ThreadPool pool(2);
  for (auto s : kSizes) {
    for (int r = 0; r <= 2; ++r) {
      const int pw = (s.w + 1) / 2, ph = (s.h + 1) / 2;
      const int disparities = 23;
      const auto parent = random_disparities(pw, ph, (disparities + 1) / 2, 0.3, 7 + r);
      const Gray8 fg = random_mask(s.w, s.h, 0.8, 9);
      SearchRanges ranges;
      parent_search_ranges(parent, s.w, s.h, fg.view(), r, disparities, ranges, &pool);
      for (int y = 0; y < s.h; ++y) {
        for (int x = 0; x < s.w; ++x) {
          if (!fg(x, y)) {
            ASSERT_FALSE(ranges.matched(x, y));
            continue;
          }
          std::vector<int> valid;
          for (int v = -r; v <= r; ++v) {
            for (int u = -r; u <= r; ++u) {
              const int px = x / 2 + u, py = y / 2 + v;
              if (px < 0 || py < 0 || px >= pw || py >= ph) continue;
              if (parent(px, py) != kNoDisparity) valid.push_back(parent(px, py));
            }
          }
          int lo = 0, hi = disparities - 1;
          if (!valid.empty()) {
            lo = clampi(2 * *std::min_element(valid.begin(), valid.end()) - 2, 0, disparities - 1);
            hi = clampi(2 * *std::max_element(valid.begin(), valid.end()) + 2, 0, disparities - 1);
          }
          ASSERT_EQ(ranges.lo(x, y), lo);
          ASSERT_EQ(ranges.hi(x, y), hi);
        }
      }
    }
  }
}

// The matcher's shared pixel costs, sub-window sums and best-k selection against brute force from
// the definition, both views of each case at once.
class AdaptiveWindowTest : public ::testing::TestWithParam<MatchingCost> {};

TEST_P(AdaptiveWindowTest, WinnerEqualsBruteForce) {
  ThreadPool pool(2);
  StereoParams p;
  p.cost = GetParam();
  p.census_width = 5;
  p.census_height = 5;
  const CostTables costs = make_cost_tables(p);
  int case_index = 0;
  for (auto s : kSizes) {
    for (int subwindow : {1, 3, 5}) {
      for (int round = 0; round < 2; ++round) {
        ++case_index;
        const int disparities = std::min(12, s.w - 1);
        const int k = case_index % 9;
        const int uniqueness = case_index % 2 ? 0 : 15;
        const Gray8 image[2] = {random_image(s.w, s.h, 100 + case_index),
                                random_image(s.w, s.h, 200 + case_index)};
        Image<std::uint64_t> codes[2];
        for (int i = 0; i < 2; ++i) census_transform(image[i].view(), 5, 5, codes[i]);
        const Gray8 fg[2] = {random_mask(s.w, s.h, 0.85, 300 + case_index),
                             random_mask(s.w, s.h, 0.9, 400 + case_index)};
        SearchRanges ranges[2];
        Image<std::int16_t> disp[2];
        Disparity16 q4[2];
        ViewMatch views[2];
        for (int v = 0; v < 2; ++v) {
          // Ranges from a random parent, so pixels try different candidates.
          const auto parent = random_disparities((s.w + 1) / 2, (s.h + 1) / 2,
                                                 (disparities + 1) / 2, 0.2, 500 + case_index + v);
          parent_search_ranges(parent, s.w, s.h, fg[v].view(), 1, disparities, ranges[v]);
          const int o = 1 - v;
          views[v].side = {image[v].view(), image[o].view(), codes[v].view(),
                           codes[o].view(), fg[o].view(),    v == 0 ? -1 : +1};
          if (!costs.uses_census) views[v].side.ref_census = views[v].side.tgt_census = {};
          views[v].ranges = &ranges[v];
          views[v].disparity = &disp[v];
          views[v].q4 = &q4[v];
        }
        LevelMatchOptions opt;
        opt.disparities = disparities;
        opt.subwindow = subwindow;
        opt.best_k = k;
        opt.uniqueness = uniqueness;
        opt.subpixel = true;
        AdaptiveWindowMatcher matcher;
        matcher.match(views, costs, opt, &pool);

        for (int v = 0; v < 2; ++v) {
          const MatchSide& side = views[v].side;
          const Gray8& tgt_fg = fg[1 - v];
          for (int y = 0; y < s.h; ++y) {
            for (int x = 0; x < s.w; ++x) {
              int best_d = -1;
              std::uint32_t best = 0;
              std::vector<std::pair<int, std::uint32_t>> tried;
              if (ranges[v].matched(x, y)) {
                for (int d = ranges[v].lo(x, y); d <= ranges[v].hi(x, y); ++d) {
                  const int tx = x + side.direction * d;
                  if (tx < 0 || tx >= s.w || !tgt_fg(tx, y)) continue;
                  const std::uint32_t a = naive_aggregated_cost(side, costs, subwindow, k, x, y, d);
                  tried.emplace_back(d, a);
                  if (best_d < 0 || a < best) best = a, best_d = d;
                }
              }
              if (best_d >= 0 && uniqueness > 0) {
                for (auto [d, a] : tried) {
                  if (std::abs(d - best_d) > 1 && a * (100.0 - uniqueness) < best * 100.0) {
                    best_d = -1;
                    break;
                  }
                }
              }
              ASSERT_EQ(disp[v](x, y), best_d)
                  << "case " << case_index << " view " << v << " at " << x << "," << y;
              if (best_d < 0) {
                ASSERT_EQ(q4[v](x, y), kInvalidDisparity);
                continue;
              }
              auto allowed = [&](int d) {
                const int tx = x + side.direction * d;
                return d >= 0 && d < disparities && tx >= 0 && tx < s.w && tgt_fg(tx, y);
              };
              int offset = 0;
              if (allowed(best_d - 1) && allowed(best_d + 1)) {
                offset = subpixel_offset(
                    naive_aggregated_cost(side, costs, subwindow, k, x, y, best_d - 1), best,
                    naive_aggregated_cost(side, costs, subwindow, k, x, y, best_d + 1));
              }
              ASSERT_EQ(q4[v](x, y), clampi(16 * best_d + offset, 0, 16 * (disparities - 1)));
            }
          }
        }
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(AllCosts, AdaptiveWindowTest,
                         ::testing::Values(MatchingCost::kAbsDiff, MatchingCost::kCensus,
                                           MatchingCost::kAdCensus),
                         [](const auto& tp) { return std::string(to_string(tp.param)); });

// The property a matcher computing one cost volume for both views would rest on (issue 11,
// docs/PERFORMANCE.md "What the 8 x 720p row would take"): the right view's aggregated cost at
// (x, d) is the left view's at (x + d, d), the same windows over the same pairs of pixels, wherever
// neither view's windows reach past the image's sides (reach: the sub-window's centres at
// +-subwindow, each +-subwindow / 2); near the sides the clamped reads differ, and there only.
TEST(AdaptiveWindow, RightViewAggregatesAreTheLeftViewsShifted) {
  StereoParams p;
  p.census_width = 9;
  p.census_height = 7;
  const CostTables costs = make_cost_tables(p);
  constexpr int w = 48, h = 20, disparities = 16;
  const Gray8 image[2] = {random_image(w, h, 71), random_image(w, h, 72)};
  Image<std::uint64_t> codes[2];
  for (int i = 0; i < 2; ++i) census_transform(image[i].view(), 9, 7, codes[i]);
  const MatchSide left{image[0].view(), image[1].view(), codes[0].view(), codes[1].view(), {}, -1};
  const MatchSide right{image[1].view(), image[0].view(), codes[1].view(), codes[0].view(), {}, +1};
  for (int subwindow : {1, 3, 5}) {
    const int reach = subwindow + subwindow / 2;
    long long equal_inside = 0, differ_near_sides = 0;
    for (int y = 0; y < h; ++y) {
      for (int x = 0; x < w; ++x) {
        for (int d = 0; d < disparities && x + d < w; ++d) {
          const std::uint32_t r = naive_aggregated_cost(right, costs, subwindow, 4, x, y, d);
          const std::uint32_t l = naive_aggregated_cost(left, costs, subwindow, 4, x + d, y, d);
          if (x >= reach && x + d + reach <= w - 1) {
            ASSERT_EQ(r, l) << "subwindow " << subwindow << " at (" << x << ", " << y << "), d "
                            << d;
            ++equal_inside;
          } else if (r != l) {
            ++differ_near_sides;
          }
        }
      }
    }
    EXPECT_GT(equal_inside, 1000) << "subwindow " << subwindow;
    // The exception is real (a shared volume must compute those columns per view).
    EXPECT_GT(differ_near_sides, 0) << "subwindow " << subwindow;
  }
}

TEST(CrossCheck, KeepsOnlyConsistentPairs) {
  for (auto s : kSizes) {
    for (int tol = 0; tol <= 2; ++tol) {
      const auto left = random_disparities(s.w, s.h, 6, 0.1, 11 + tol);
      const auto right = random_disparities(s.w, s.h, 6, 0.1, 12 + tol);
      Image<std::int16_t> lc, rc;
      cross_check(left, right, tol, lc, rc);
      for (int y = 0; y < s.h; ++y) {
        for (int x = 0; x < s.w; ++x) {
          const int dl = left(x, y);
          bool ok = dl >= 0 && x - dl >= 0 && right(x - dl, y) >= 0 &&
                    std::abs(right(x - dl, y) - dl) <= tol;
          ASSERT_EQ(lc(x, y), ok ? dl : kNoDisparity);
          const int dr = right(x, y);
          ok = dr >= 0 && x + dr < s.w && left(x + dr, y) >= 0 &&
               std::abs(left(x + dr, y) - dr) <= tol;
          ASSERT_EQ(rc(x, y), ok ? dr : kNoDisparity);
        }
      }
    }
  }
}

TEST(PostProcess, MedianOverValidNeighbours) {
  std::mt19937 rng(3);
  for (auto s : kSizes) {
    Disparity16 in(s.w, s.h);
    for (auto& v : in.pixels())
      v = rng() % 4 == 0 ? kInvalidDisparity : static_cast<std::uint16_t>(rng() % 300);
    Disparity16 out;
    median3x3(in, out);
    for (int y = 0; y < s.h; ++y) {
      for (int x = 0; x < s.w; ++x) {
        if (in(x, y) == kInvalidDisparity) {
          ASSERT_EQ(out(x, y), kInvalidDisparity);
          continue;
        }
        std::vector<int> v;
        for (int dy = -1; dy <= 1; ++dy) {
          for (int dx = -1; dx <= 1; ++dx) {
            const int xx = x + dx, yy = y + dy;
            if (xx >= 0 && yy >= 0 && xx < s.w && yy < s.h && in(xx, yy) != kInvalidDisparity)
              v.push_back(in(xx, yy));
          }
        }
        std::sort(v.begin(), v.end());
        ASSERT_EQ(out(x, y), v[(v.size() - 1) / 2]);
      }
    }
  }
}

TEST(PostProcess, FillHolesAlongScanlines) {
  std::mt19937 rng(4);
  for (FillMode mode : {FillMode::kIntensity, FillMode::kBackground}) {
    for (auto s : kSizes) {
      Disparity16 d(s.w, s.h);
      for (auto& v : d.pixels())
        v = rng() % 3 == 0 ? kInvalidDisparity : static_cast<std::uint16_t>(rng() % 200);
      const Gray8 intensity = random_image(s.w, s.h, 77);
      const Gray8 fg = random_mask(s.w, s.h, 0.9, 78);
      Disparity16 filled = d;
      fill_holes(filled, intensity.view(), fg.view(), mode, 3);
      for (int y = 0; y < s.h; ++y) {
        for (int x = 0; x < s.w; ++x) {
          if (d(x, y) != kInvalidDisparity || !fg(x, y)) {
            ASSERT_EQ(filled(x, y), d(x, y));
            continue;
          }
          // Walk out over foreground holes to the sides.
          int xl = x - 1, xr = x + 1;
          while (xl >= 0 && d(xl, y) == kInvalidDisparity && fg(xl, y)) --xl;
          while (xr < s.w && d(xr, y) == kInvalidDisparity && fg(xr, y)) ++xr;
          const bool l = xl >= 0 && d(xl, y) != kInvalidDisparity;
          const bool r = xr < s.w && d(xr, y) != kInvalidDisparity;
          int expected = kInvalidDisparity;
          if (l && r) {
            const int dl = d(xl, y), dr = d(xr, y);
            if (std::abs(dl - dr) <= 48) {
              expected = static_cast<int>(
                  std::floor((dl * double(xr - x) + dr * double(x - xl)) / (xr - xl) + 0.5));
            } else if (mode == FillMode::kBackground) {
              expected = std::min(dl, dr);
            } else {
              const int el = std::abs(intensity(x, y) - intensity(xl, y));
              const int er = std::abs(intensity(x, y) - intensity(xr, y));
              expected = el < er ? dl : er < el ? dr : std::min(dl, dr);
            }
          } else if (l) {
            expected = d(xl, y);
          } else if (r) {
            expected = d(xr, y);
          }
          ASSERT_EQ(filled(x, y), expected) << x << "," << y;
        }
      }
    }
  }
}

TEST(MeanRemoval, IntensityMinusFlooredLocalMean) {
  ThreadPool pool(2);
  for (auto s : kSizes) {
    const Gray8 img = random_image(s.w, s.h, 21);
    for (int r = 1; r <= 3; ++r) {
      Gray8 out;
      remove_local_mean(img.view(), r, out, &pool);
      for (int y = 0; y < s.h; ++y) {
        for (int x = 0; x < s.w; ++x) {
          double sum = 0;
          for (int v = -r; v <= r; ++v) {
            for (int u = -r; u <= r; ++u)
              sum += img(clampi(x + u, 0, s.w - 1), clampi(y + v, 0, s.h - 1));
          }
          const int mean = static_cast<int>(std::floor(sum / ((2 * r + 1) * (2 * r + 1))));
          ASSERT_EQ(out(x, y), clampi(img(x, y) - mean + 128, 0, 255));
        }
      }
    }
  }
  // A brightness offset between the views disappears (away from clipping).
  Gray8 a(40, 30), b(40, 30);
  for (int y = 0; y < 30; ++y) {
    for (int x = 0; x < 40; ++x) {
      a(x, y) = static_cast<std::uint8_t>(60 + (x * 7 + y * 13) % 50);
      b(x, y) = static_cast<std::uint8_t>(a(x, y) + 17);
    }
  }
  Gray8 ma, mb;
  remove_local_mean(a.view(), 1, ma);
  remove_local_mean(b.view(), 1, mb);
  EXPECT_EQ(ma, mb);
}

TEST(Speckle, RemovesExactlyTheSmallRegions) {
  std::mt19937 rng(8);
  for (auto s : kSizes) {
    for (int step : {0, 16, 32}) {
      // Blocky random maps with holes, so regions of many sizes occur.
      Disparity16 d(s.w, s.h);
      for (int y = 0; y < s.h; ++y) {
        for (int x = 0; x < s.w; ++x) {
          const std::uint32_t cell =
              static_cast<std::uint32_t>((x / 3) * 131 + (y / 2) * 71) * 2654435761u;
          d(x, y) = (cell >> 28) % 5 == 0
                        ? kInvalidDisparity
                        : static_cast<std::uint16_t>(((cell >> 20) % 4) * 12 + rng() % 3);
        }
      }
      for (int min_size : {2, 7, 30}) {
        Disparity16 got = d;
        SpeckleFilter f;
        f.apply(got, min_size, step);
        // Naive: union-find over 4-neighbour links, then region sizes.
        std::vector<int> parent(d.size());
        for (std::size_t i = 0; i < parent.size(); ++i) parent[i] = static_cast<int>(i);
        std::function<int(int)> find = [&](int i) {
          return parent[i] == i ? i : parent[i] = find(parent[i]);
        };
        auto linked = [&](int x0, int y0, int x1, int y1) {
          const int a = d(x0, y0), b = d(x1, y1);
          return a != kInvalidDisparity && b != kInvalidDisparity && std::abs(a - b) <= step;
        };
        for (int y = 0; y < s.h; ++y) {
          for (int x = 0; x < s.w; ++x) {
            if (x + 1 < s.w && linked(x, y, x + 1, y))
              parent[find(y * s.w + x)] = find(y * s.w + x + 1);
            if (y + 1 < s.h && linked(x, y, x, y + 1))
              parent[find(y * s.w + x)] = find((y + 1) * s.w + x);
          }
        }
        std::vector<int> size(d.size(), 0);
        for (std::size_t i = 0; i < d.size(); ++i) ++size[find(static_cast<int>(i))];
        for (std::size_t i = 0; i < d.size(); ++i) {
          const bool removed =
              d.data()[i] != kInvalidDisparity && size[find(static_cast<int>(i))] < min_size;
          ASSERT_EQ(got.data()[i], removed ? kInvalidDisparity : d.data()[i]);
        }
      }
    }
  }
}
