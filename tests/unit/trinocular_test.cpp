// Trinocular rigs (issue 17): the matcher's optional winner cost ratio against the definition, the
// transposition that turns the vertical pair into an ordinary one, and the fusion rule against a
// plain per-pixel reference.
#include <gtest/gtest.h>

#include <cmath>
#include <deque>

#include "cpu_cases.hpp"
#include "cpu_pair_processor.hpp"
#include "stereo/adaptive_window.hpp"
#include "stereo/census.hpp"
#include "stereo/cost.hpp"
#include "stereo/matcher.hpp"
#include "stereo/mean_removal.hpp"
#include "stereo/pixel_ops.hpp"
#include "synthetic/synthetic_scene.hpp"
#include "thread_pool.hpp"
#include "trinocular/fusion.hpp"
#include "trinocular/trinocular_engine.hpp"

using namespace stereod;
using namespace stereod::testing;

namespace {

bool uses_mean_removal(const StereoParams& p) {
  return p.ad_mean_radius > 0 && p.cost != MatchingCost::kCensus;
}

}  // namespace

// Every finest-level winner's cost ratio is 2^12 (2 A(d) + 1) / (A(d - 1) + A(d + 1) + 1) with A
// as naive_aggregated_cost defines it (2^12 where a neighbour is not an allowed candidate or lies
// outside the range); no winner, kNoCost. Asking for it changes nothing else.
TEST(WinnerCostRatio, MatchesTheDefinitionOnRandomCases) {
  int checked = 0, with_neighbours = 0;
  for (int i = 0; i < 40; ++i) {
    const MatcherCase c = random_matcher_case(9100 + static_cast<std::uint64_t>(i), 64, 48);
    CpuStereoMatcher m(c.params, 2);
    StereoInput in = stereo_input(c);
    StereoOutput plain;
    m.compute(in, plain);
    EXPECT_TRUE(plain.cost_ratio.empty()) << c.name;
    in.cost_ratio_output = true;
    StereoOutput out;
    m.compute(in, out);
    ASSERT_EQ(out.left, plain.left) << c.name;
    ASSERT_EQ(out.right, plain.right) << c.name;
    ASSERT_EQ(out.cost_ratio.width(), c.width);
    ASSERT_EQ(out.cost_ratio.height(), c.height);

    const CostTables tables = make_cost_tables(c.params);
    Gray8 ad[2];
    Image<std::uint64_t> census[2];
    const Gray8* images[2] = {&c.left, &c.right};
    for (int v = 0; v < 2; ++v) {
      if (uses_mean_removal(c.params)) {
        remove_local_mean(images[v]->view(), c.params.ad_mean_radius, ad[v]);
      } else {
        ad[v] = *images[v];
      }
      census_transform(images[v]->view(), c.params.census_width, c.params.census_height, census[v]);
    }
    MatchSide side{
        ad[0].view(),
        ad[1].view(),
        tables.uses_census ? census[0].view() : ImageView<const std::uint64_t>{},
        tables.uses_census ? census[1].view() : ImageView<const std::uint64_t>{},
        c.right_foreground.empty() ? ImageView<const std::uint8_t>{} : c.right_foreground[0].view(),
        -1};
    const int disparities = c.params.max_disparity;
    const Image<std::int16_t>& winners = m.level_disparity(0, 0);
    for (int y = 0; y < c.height; ++y) {
      for (int x = 0; x < c.width; ++x) {
        const int d = winners(x, y);
        if (d == kNoDisparity) {
          ASSERT_EQ(out.cost_ratio(x, y), kNoCost) << c.name << " at " << x << "," << y;
          continue;
        }
        auto a = [&](int dd) {
          return static_cast<unsigned long long>(
              naive_aggregated_cost(side, tables, c.params.subwindow, c.params.best_k, x, y, dd));
        };
        unsigned long long want = 4096;
        if (d >= 1 && d + 1 < disparities && candidate_allowed(side, x, y, d - 1) &&
            candidate_allowed(side, x, y, d + 1)) {
          want = ((2 * a(d) + 1) << 12) / (a(d - 1) + a(d + 1) + 1);
          ++with_neighbours;
        }
        ASSERT_EQ(out.cost_ratio(x, y), want) << c.name << " at " << x << "," << y << ", d " << d;
        ++checked;
      }
    }
  }
  EXPECT_GT(checked, 20000);
  EXPECT_GT(with_neighbours, checked / 2);
}

// The confidence (issue 14) and the cost ratio come from one matching pass: asked for together,
// each is what it is when asked for alone, and the disparities are those of neither.
TEST(WinnerCostRatio, ComesWithTheConfidenceUnchanged) {
  for (int i = 0; i < 12; ++i) {
    const MatcherCase c = random_matcher_case(9300 + static_cast<std::uint64_t>(i), 64, 48);
    CpuStereoMatcher m(c.params, 2);
    StereoInput in = stereo_input(c);
    StereoOutput plain, ratio_only, confidence_only, both;
    m.compute(in, plain);
    in.cost_ratio_output = true;
    m.compute(in, ratio_only);
    in.cost_ratio_output = false;
    in.confidence = true;
    m.compute(in, confidence_only);
    in.cost_ratio_output = true;
    m.compute(in, both);
    ASSERT_FALSE(both.cost_ratio.empty()) << c.name;
    ASSERT_FALSE(both.confidence.empty()) << c.name;
    EXPECT_EQ(both.left, plain.left) << c.name;
    EXPECT_EQ(both.right, plain.right) << c.name;
    EXPECT_EQ(both.cost_ratio, ratio_only.cost_ratio) << c.name;
    EXPECT_EQ(both.confidence, confidence_only.confidence) << c.name;
  }
}

TEST(VerticalFrame, TransposesAndFlipsForAPartnerAbove) {
  Gray8 img(5, 3);
  for (int y = 0; y < 3; ++y) {
    for (int x = 0; x < 5; ++x) img(x, y) = static_cast<std::uint8_t>(10 * y + x);
  }
  Gray8 below, above;
  to_vertical_frame(img.view(), vertical_layout(5, 3, VerticalPosition::kBelow), below);
  to_vertical_frame(img.view(), vertical_layout(5, 3, VerticalPosition::kAbove), above);
  ASSERT_EQ(below.width(), 3);
  ASSERT_EQ(below.height(), 5);
  for (int y = 0; y < 3; ++y) {
    for (int x = 0; x < 5; ++x) {
      EXPECT_EQ(below(y, x), img(x, y));
      EXPECT_EQ(above(2 - y, x), img(x, y));
    }
  }
  RgbImage rgb;
  rgb.resize(5, 3);
  for (std::size_t i = 0; i < rgb.pixels.size(); ++i) rgb.pixels[i] = static_cast<std::uint8_t>(i);
  RgbImage t;
  to_vertical_frame(view_of(rgb), vertical_layout(5, 3, VerticalPosition::kAbove), t);
  ASSERT_EQ(t.width, 3);
  ASSERT_EQ(t.height, 5);
  for (int y = 0; y < 3; ++y) {
    for (int x = 0; x < 5; ++x) {
      for (int c = 0; c < 3; ++c) EXPECT_EQ(t.row(x)[3 * (2 - y) + c], rgb.row(y)[3 * x + c]);
    }
  }
}

// Sizes across several tiles and not multiples of them, strided sources, on one thread and on a
// pool, into owned images and into views: always the definition, pixel for pixel.
TEST(VerticalFrame, TilesAndThreadsChangeNothing) {
  CaseRng rng(23);
  ThreadPool pool(3);
  for (int round = 0; round < 24; ++round) {
    // The first rounds: sizes across the gray path's 8x8 blocks and 64-column strips, both ways.
    const bool fixed = round < 2;
    const int w = fixed ? 137 : rng.range(1, 100), h = fixed ? 75 : rng.range(1, 90);
    const int pad = rng.range(0, 5);
    const auto pos = fixed ? (round == 0 ? VerticalPosition::kAbove : VerticalPosition::kBelow)
                     : rng.chance(50) ? VerticalPosition::kAbove
                                      : VerticalPosition::kBelow;
    const VerticalLayout l = vertical_layout(w, h, pos);
    Gray8 big(w + pad, h);
    for (auto& v : big.pixels()) v = static_cast<std::uint8_t>(rng.range(0, 255));
    const ImageView<const std::uint8_t> src{big.data(), w, h, w + pad};
    RgbImage rgb_big;
    rgb_big.resize(w + pad, h);
    for (auto& v : rgb_big.pixels) v = static_cast<std::uint8_t>(rng.range(0, 255));
    const RgbView rgb{rgb_big.pixels.data(), w, h, 3 * (w + pad)};
    for (ThreadPool* p : {static_cast<ThreadPool*>(nullptr), &pool}) {
      Gray8 gray, into(h, w);
      to_vertical_frame(src, l, gray, p);
      to_vertical_frame(src, l, into.view(), p);
      RgbImage color;
      to_vertical_frame(rgb, l, color, p);
      std::vector<std::uint8_t> color_into(static_cast<std::size_t>(3) * w * h);
      to_vertical_frame(rgb, l, ImageView<std::uint8_t>{color_into.data(), 3 * h, w}, p);
      ASSERT_EQ(gray.width(), h);
      ASSERT_EQ(gray.height(), w);
      ASSERT_EQ(gray, into);
      ASSERT_EQ(color.pixels, color_into);
      for (int y = 0; y < h; ++y) {
        for (int x = 0; x < w; ++x) {
          ASSERT_EQ(gray(l.u(y), x), src(x, y)) << w << "x" << h << " at " << x << "," << y;
          for (int c = 0; c < 3; ++c)
            ASSERT_EQ(color.row(x)[3 * l.u(y) + c], rgb.row(y)[3 * x + c]);
        }
      }
    }
  }
  Gray8 img(6, 4), wrong(6, 4);
  EXPECT_THROW(
      to_vertical_frame(img.view(), vertical_layout(6, 4, VerticalPosition::kBelow), wrong.view()),
      ParameterError);
}

// A partner below sees the reference's point (x, y) at (x, y - d): after the transposition that
// is the reference's (u, v) = (y, x) against the partner's (u - d, v), an ordinary right camera.
TEST(VerticalFrame, APartnerBecomesARightCamera) {
  const int w = 12, h = 9, d = 3;
  Gray8 ref(w, h), below(w, h), above(w, h);
  for (int y = 0; y < h; ++y) {
    for (int x = 0; x < w; ++x) ref(x, y) = static_cast<std::uint8_t>(7 * x + 31 * y);
  }
  for (int y = 0; y < h; ++y) {
    for (int x = 0; x < w; ++x) {
      if (y + d < h) below(x, y) = ref(x, y + d);   // below(x, y - d) = ref(x, y)
      if (y - d >= 0) above(x, y) = ref(x, y - d);  // above(x, y + d) = ref(x, y)
    }
  }
  for (auto pos : {VerticalPosition::kBelow, VerticalPosition::kAbove}) {
    const VerticalLayout l = vertical_layout(w, h, pos);
    Gray8 tr, tp;
    to_vertical_frame(ref.view(), l, tr);
    to_vertical_frame((pos == VerticalPosition::kBelow ? below : above).view(), l, tp);
    for (int v = 0; v < tr.height(); ++v) {
      for (int u = d; u < tr.width(); ++u) {
        EXPECT_EQ(tr(u, v), tp(u - d, v)) << (pos == VerticalPosition::kBelow ? "below" : "above");
      }
    }
  }
}

TEST(Fusion, ScalesVerticalDisparities) {
  EXPECT_EQ(scale_vertical_disparity(kInvalidDisparity, 1.0, 1000), kInvalidDisparity);
  EXPECT_EQ(scale_vertical_disparity(160, 1.0, 1000), 160);
  EXPECT_EQ(scale_vertical_disparity(160, 1.5, 1000), 240);
  EXPECT_EQ(scale_vertical_disparity(3, 0.5, 1000), 2);                    // 1.5 rounds up
  EXPECT_EQ(scale_vertical_disparity(700, 1.5, 1000), kInvalidDisparity);  // beyond the range
  EXPECT_EQ(vertical_max_disparity(128, 1.0), 128);
  EXPECT_EQ(vertical_max_disparity(128, 2.0), 64);
  EXPECT_EQ(vertical_max_disparity(128, 0.75), 171);
  EXPECT_EQ(cost_ratio_q8(1.0), 256u);
  EXPECT_EQ(cost_ratio_q8(0.5), 128u);
}

// The rule written out pixel by pixel, against fuse_trinocular on random maps (sizes across
// several tiles, with and without a foreground mask, on one thread and on a pool).
TEST(Fusion, FollowsTheCostRatioRule) {
  CaseRng rng(17);
  ThreadPool pool(3);
  for (int round = 0; round < 30; ++round) {
    const int w = rng.range(1, 100), h = rng.range(1, 80);
    const auto pos = rng.chance(50) ? VerticalPosition::kAbove : VerticalPosition::kBelow;
    const double ratio = rng.chance(30) ? 1.0 : rng.range(10, 400) / 100.0;
    const double scale = rng.chance(30) ? 1.0 : rng.range(50, 200) / 100.0;
    const int max_q4 = rng.range(100, 2000);
    Disparity16 hd(w, h), vd(h, w);
    Image<std::uint32_t> hc(w, h), vc(h, w);
    auto disparity = [&] {
      return rng.chance(25) ? kInvalidDisparity : static_cast<std::uint16_t>(rng.range(0, 1500));
    };
    auto cost = [&] {
      return rng.chance(5) ? kNoCost : static_cast<std::uint32_t>(rng.range(0, 140000));
    };
    for (int y = 0; y < h; ++y) {
      for (int x = 0; x < w; ++x) {
        hd(x, y) = disparity();
        hc(x, y) = cost();
        vd(y, x) = disparity();
        vc(y, x) = cost();
      }
    }
    FusionParams p;
    p.cost_ratio = ratio;
    p.scale = scale;
    p.max_disparity_q4 = max_q4;
    Gray8 mask(w, h, 255);
    const bool masked = rng.chance(50);
    if (masked) {
      for (auto& m : mask.pixels()) m = rng.chance(30) ? 0 : 255;
    }
    FusionInput in{hd.view(), hc.view(), vd.view(), vc.view(), vertical_layout(w, h, pos), {}};
    if (masked) in.foreground = mask.view();
    FusionOutput out, pooled;
    fuse_trinocular(in, p, out);
    fuse_trinocular(in, p, pooled, &pool);
    ASSERT_EQ(out.fused, pooled.fused);
    ASSERT_EQ(out.direction, pooled.direction);
    ASSERT_EQ(out.vertical, pooled.vertical);
    for (int y = 0; y < h; ++y) {
      for (int x = 0; x < w; ++x) {
        const int u = pos == VerticalPosition::kAbove ? h - 1 - y : y;
        std::uint16_t v = vd(u, x);
        if (v != kInvalidDisparity) {
          const double s = std::floor(v * scale + 0.5);
          v = s > max_q4 ? kInvalidDisparity : static_cast<std::uint16_t>(s);
        }
        const std::uint16_t hh = hd(x, y);
        std::uint8_t want = kFusedNone;
        if (hh != kInvalidDisparity && v != kInvalidDisparity) {
          // 256 * rv < round(256 * ratio) * rh, in exact integers.
          const auto r = static_cast<unsigned long long>(std::llround(ratio * 256));
          want = 256ull * vc(u, x) < r * hc(x, y) ? kFusedVertical : kFusedHorizontal;
        } else if (hh != kInvalidDisparity) {
          want = kFusedHorizontal;
        } else if (v != kInvalidDisparity) {
          want = kFusedVertical;
        }
        if (mask(x, y) == 0) want = kFusedNone;  // background: no fused disparity
        ASSERT_EQ(out.direction(x, y), want) << x << "," << y;
        ASSERT_EQ(out.vertical(x, y), v);
        ASSERT_EQ(out.fused(x, y), want == kFusedHorizontal ? hh
                                   : want == kFusedVertical ? v
                                                            : kInvalidDisparity);
      }
    }
  }
}

TEST(Fusion, RefusesMapsOfTheWrongSize) {
  Disparity16 hd(8, 6), vd(8, 6);
  Image<std::uint32_t> hc(8, 6), vc(8, 6);
  FusionOutput out;
  EXPECT_THROW(fuse_trinocular({hd.view(),
                                hc.view(),
                                vd.view(),
                                vc.view(),
                                vertical_layout(8, 6, VerticalPosition::kBelow),
                                {}},
                               {}, out),
               ParameterError);
  Disparity16 vt(6, 8);
  Image<std::uint32_t> vct(6, 8);
  Gray8 mask(6, 8);  // the vertical pair's size, not the reference's
  const FusionInput ok{
      hd.view(), hc.view(), vt.view(), vct.view(), vertical_layout(8, 6, VerticalPosition::kBelow),
      {}};
  EXPECT_NO_THROW(fuse_trinocular(ok, {}, out));
  FusionInput masked = ok;
  masked.foreground = mask.view();
  EXPECT_THROW(fuse_trinocular(masked, {}, out), ParameterError);
}

namespace {

using namespace std::chrono_literals;

SyntheticOptions rig_options(SyntheticVertical position, SyntheticTexture texture) {
  SyntheticOptions o;
  o.width = 160;
  o.height = 120;
  o.min_disparity = 4;
  o.max_disparity = 32;
  o.objects = 2;
  o.vertical = position;
  o.texture = texture;
  return o;
}

FrameInput rig_input(const SyntheticFrame& f, std::uint64_t sequence) {
  FrameInput in;
  in.sequence = sequence;
  in.left = f.left_gray.view();
  in.right = f.right_gray.view();
  in.vertical = f.vertical_gray.view();
  return in;
}

EngineOptions rig_engine_options(int w, int h, int max_disparity) {
  EngineOptions o;
  o.width = w;
  o.height = h;
  o.stereo.max_disparity = max_disparity;
  o.background.enabled = false;
  o.cpu_threads = 2;
  return o;
}

double bad1(ImageView<const std::uint16_t> d, const Image<float>& truth) {
  long long known = 0, bad = 0;
  for (int y = 0; y < truth.height(); ++y) {
    for (int x = 0; x < truth.width(); ++x) {
      if (!std::isfinite(truth(x, y))) continue;
      ++known;
      bad += d(x, y) == kInvalidDisparity ||
             std::fabs(d(x, y) / double(kSubpixelScale) - double(truth(x, y))) > 1.0;
    }
  }
  return known ? double(bad) / double(known) : 1.0;
}

}  // namespace

// The engine is the two pairs and the fusion put together: the horizontal pair as is, the
// vertical one on the transposed (and, from above, flipped) frames, fused by fuse_trinocular.
TEST(TrinocularEngine, IsBothPairsAndTheFusion) {
  for (auto position : {SyntheticVertical::kBelow, SyntheticVertical::kAbove}) {
    const SyntheticOptions so = rig_options(position, SyntheticTexture::kAny);
    SyntheticFrame f;
    SyntheticScene(so).render(12, f);
    const EngineOptions eo = rig_engine_options(so.width, so.height, so.max_disparity);
    TrinocularOptions t;
    t.model.position =
        position == SyntheticVertical::kAbove ? VerticalPosition::kAbove : VerticalPosition::kBelow;
    t.cost_ratio = 0.9;
    auto engine = make_trinocular_engine("cpu", eo, t);
    ASSERT_EQ(engine->submit(rig_input(f, 5)), SubmitStatus::kAccepted);
    auto r = engine->poll(60s);
    ASSERT_TRUE(r && r->ok) << (r ? r->error : "no result");
    EXPECT_EQ(r->sequence, 5u);

    // By hand.
    const VerticalLayout layout = vertical_layout(so.width, so.height, t.model.position);
    CpuPairProcessor h(eo.stereo, eo.background, 2), v(eo.stereo, eo.background, 2);
    PairOutput ho, vo;
    PairFrame hf{f.left_gray.view(), f.right_gray.view(), {}, {}};
    hf.cost_ratio_output = true;
    h.process(hf, ho);
    Gray8 tl, tv;
    to_vertical_frame(f.left_gray.view(), layout, tl);
    to_vertical_frame(f.vertical_gray.view(), layout, tv);
    PairFrame vf{tl.view(), tv.view(), {}, {}};
    vf.cost_ratio_output = true;
    v.process(vf, vo);
    FusionParams fp;
    fp.cost_ratio = 0.9;
    fp.max_disparity_q4 = kSubpixelScale * (so.max_disparity - 1) + kSubpixelScale / 2;
    FusionOutput want;
    fuse_trinocular({ho.stereo.left.view(),
                     ho.stereo.cost_ratio.view(),
                     vo.stereo.left.view(),
                     vo.stereo.cost_ratio.view(),
                     layout,
                     {}},
                    fp, want);
    Disparity16 got(so.width, so.height);
    copy_into(r->disparity, got);
    EXPECT_EQ(got, want.fused);
    Gray8 direction(so.width, so.height);
    copy_into(r->direction, direction);
    EXPECT_EQ(direction, want.direction);
    Disparity16 horizontal(so.width, so.height);
    copy_into(r->horizontal_disparity, horizontal);
    EXPECT_EQ(horizontal, ho.stereo.left);
  }
}

// Where one direction cannot see the texture the fused map is better than that direction's by a
// third, and better than the other's; where each is defeated on part of the frame (mixed) better
// than both by a third; and on ordinary texture better than both. CPU engine.
TEST(TrinocularEngine, FusionBeatsTheDefeatedDirection) {
  struct Case {
    SyntheticTexture texture;
    SyntheticVertical position;
  };
  for (const Case c : {Case{SyntheticTexture::kHorizontalStripes, SyntheticVertical::kBelow},
                       Case{SyntheticTexture::kVerticalBars, SyntheticVertical::kAbove},
                       Case{SyntheticTexture::kMixed, SyntheticVertical::kBelow},
                       Case{SyntheticTexture::kAny, SyntheticVertical::kBelow}}) {
    const SyntheticOptions so = rig_options(c.position, c.texture);
    SyntheticScene scene(so);
    TrinocularOptions t;
    t.model.position = c.position == SyntheticVertical::kAbove ? VerticalPosition::kAbove
                                                               : VerticalPosition::kBelow;
    auto engine =
        make_trinocular_engine("cpu", rig_engine_options(so.width, so.height, so.max_disparity), t);
    double fused = 0, horizontal = 0, vertical = 0;
    SyntheticFrame f;
    for (int i = 0; i < 3; ++i) {
      scene.render(30 * i, f);
      ASSERT_EQ(engine->submit(rig_input(f, static_cast<std::uint64_t>(i))),
                SubmitStatus::kAccepted);
      auto r = engine->poll(60s);
      ASSERT_TRUE(r && r->ok);
      fused += bad1(r->disparity, f.disparity);
      horizontal += bad1(r->horizontal_disparity, f.disparity);
      vertical += bad1(r->vertical_disparity, f.disparity);
    }
    const std::string what = to_string(c.texture);
    EXPECT_LT(fused, std::min(horizontal, vertical))
        << what << ": fused " << fused / 3 << ", horizontal " << horizontal / 3 << ", vertical "
        << vertical / 3;
    if (c.texture == SyntheticTexture::kHorizontalStripes) {
      EXPECT_LT(fused, 0.67 * horizontal);
    }
    if (c.texture == SyntheticTexture::kVerticalBars) {
      EXPECT_LT(fused, 0.67 * vertical);
    }
    // Each direction defeated on part of the frame: the fusion takes the other there.
    if (c.texture == SyntheticTexture::kMixed) {
      EXPECT_LT(fused, 0.67 * std::min(horizontal, vertical));
    }
  }
}

// The directions are matched without the refinement, whatever the rig's `refine` says: the fused
// map with refine: true (the default) is the one with refine: false, pixel for pixel, at start
// and after set_params.
TEST(TrinocularEngine, DirectionsRunWithoutTheRefinement) {
  const SyntheticOptions so = rig_options(SyntheticVertical::kBelow, SyntheticTexture::kMixed);
  SyntheticScene scene(so);
  SyntheticFrame f;
  scene.render(0, f);
  TrinocularOptions t;
  auto fused = [&](bool refine, bool by_set_params) {
    EngineOptions eo = rig_engine_options(so.width, so.height, so.max_disparity);
    eo.stereo.refine = by_set_params ? !refine : refine;
    auto engine = make_trinocular_engine("cpu", eo, t);
    if (by_set_params) {
      StereoParams p = eo.stereo;
      p.refine = refine;
      engine->set_params(p, eo.background);
    }
    EXPECT_EQ(engine->submit(rig_input(f, 0)), SubmitStatus::kAccepted);
    auto r = engine->poll(60s);
    EXPECT_TRUE(r && r->ok);
    Disparity16 d;
    if (r) copy_into(r->disparity, d);
    return d;
  };
  const Disparity16 plain = fused(false, false);
  EXPECT_GT(plain.size(), 0u);
  EXPECT_EQ(first_difference(plain, fused(true, false)), "");
  EXPECT_EQ(first_difference(plain, fused(true, true)), "");
}

TEST(TrinocularEngine, RefusesWhatItCannotRun) {
  const EngineOptions eo = rig_engine_options(160, 120, 32);
  TrinocularOptions t;
  t.cost_ratio = 0;
  EXPECT_THROW(make_trinocular_engine("cpu", eo, t), ParameterError);
  t.cost_ratio = 1;
  t.model.vertical_baseline_m = -1;
  EXPECT_THROW(make_trinocular_engine("cpu", eo, t), ParameterError);
  t.model.vertical_baseline_m = 0.1;  // scale 10: the vertical pair searches 4 disparities
  EXPECT_NO_THROW(make_trinocular_engine("cpu", eo, t));
  t.model.vertical_baseline_m = 1;
  EngineOptions tall = rig_engine_options(300, 40, 64);  // the vertical pair would be 40 wide
  tall.stereo.levels = 1;
  try {
    make_trinocular_engine("cpu", tall, t);
    ADD_FAILURE() << "accepted 64 disparities for a 40-pixel-wide transposed pair";
  } catch (const ParameterError& e) {
    EXPECT_NE(std::string(e.what()).find("vertical pair"), std::string::npos) << e.what();
  }

  auto engine = make_trinocular_engine("cpu", eo, t);
  SyntheticFrame f;
  SyntheticScene(rig_options(SyntheticVertical::kBelow, SyntheticTexture::kAny)).render(0, f);
  FrameInput in = rig_input(f, 1);
  in.vertical = {};
  EXPECT_THROW(engine->submit(in), ParameterError);
  Gray8 small(80, 60);
  in.vertical = small.view();
  EXPECT_THROW(engine->submit(in), ParameterError);
  EXPECT_EQ(engine->in_flight(), 0);
  // Still usable after the refusals.
  ASSERT_EQ(engine->submit(rig_input(f, 2)), SubmitStatus::kAccepted);
  auto r = engine->poll(60s);
  ASSERT_TRUE(r && r->ok);
}

// Frames in flight (three slots, eight frames, results held while the next are submitted): each
// frame's result is the one it gets alone, whichever slot it went through.
TEST(TrinocularEngine, FramesInFlightKeepTheirOwnResults) {
  const SyntheticOptions so = rig_options(SyntheticVertical::kAbove, SyntheticTexture::kMixed);
  SyntheticScene scene(so);
  TrinocularOptions t;
  t.model.position = VerticalPosition::kAbove;
  EngineOptions eo = rig_engine_options(so.width, so.height, so.max_disparity);
  auto alone = make_trinocular_engine("cpu", eo, t);
  eo.inflight = 3;
  auto busy = make_trinocular_engine("cpu", eo, t);
  constexpr int kFrames = 8;
  std::vector<SyntheticFrame> frames(kFrames);
  std::vector<Disparity16> want(kFrames);
  for (int i = 0; i < kFrames; ++i) {
    scene.render(20 * i, frames[static_cast<std::size_t>(i)]);
    ASSERT_EQ(alone->submit(rig_input(frames[static_cast<std::size_t>(i)], 0)),
              SubmitStatus::kAccepted);
    auto r = alone->poll(60s);
    ASSERT_TRUE(r && r->ok);
    copy_into(r->disparity, want[static_cast<std::size_t>(i)]);
  }
  std::deque<EngineResult> held;  // the last two results stay held while the next frames go in
  int next = 0;
  for (int done = 0; done < kFrames; ++done) {
    while (next < kFrames &&
           busy->submit(rig_input(frames[static_cast<std::size_t>(next)],
                                  static_cast<std::uint64_t>(next))) == SubmitStatus::kAccepted) {
      ++next;
    }
    auto r = busy->poll(60s);
    if (!r && !held.empty()) {
      held.pop_front();  // every slot held: give one back
      --done;
      continue;
    }
    ASSERT_TRUE(r && r->ok);
    ASSERT_EQ(r->sequence, static_cast<std::uint64_t>(done));
    Disparity16 got;
    copy_into(r->disparity, got);
    EXPECT_EQ(got, want[static_cast<std::size_t>(done)]) << "frame " << done;
    held.push_back(std::move(*r));
    if (held.size() > 2) held.pop_front();
  }
  // The held results still show their own frames after the slots went round.
  for (const EngineResult& r : held) {
    Disparity16 got;
    copy_into(r.disparity, got);
    EXPECT_EQ(got, want[static_cast<std::size_t>(r.sequence)]) << "held frame " << r.sequence;
  }
}

// Slots: as many frames in flight as asked for, busy beyond, free again when results go.
TEST(TrinocularEngine, SlotsAndBusy) {
  EngineOptions eo = rig_engine_options(160, 120, 32);
  eo.inflight = 2;
  auto engine = make_trinocular_engine("cpu", eo, TrinocularOptions{});
  SyntheticFrame f;
  SyntheticScene(rig_options(SyntheticVertical::kBelow, SyntheticTexture::kAny)).render(0, f);
  ASSERT_EQ(engine->submit(rig_input(f, 1)), SubmitStatus::kAccepted);
  ASSERT_EQ(engine->submit(rig_input(f, 2)), SubmitStatus::kAccepted);
  EXPECT_EQ(engine->submit(rig_input(f, 3)), SubmitStatus::kBusy);
  auto a = engine->poll(60s);
  auto b = engine->poll(60s);
  ASSERT_TRUE(a && a->ok && b && b->ok);
  EXPECT_EQ(a->sequence, 1u);
  EXPECT_EQ(b->sequence, 2u);
  EXPECT_EQ(engine->submit(rig_input(f, 3)), SubmitStatus::kBusy);  // results still held
  a.reset();
  ASSERT_EQ(engine->submit(rig_input(f, 3)), SubmitStatus::kAccepted);
  auto c = engine->poll(60s);
  ASSERT_TRUE(c && c->ok);
  EXPECT_EQ(c->sequence, 3u);
  // Parameters: both pairs take them; a set the vertical pair cannot use is refused whole.
  StereoParams sp = eo.stereo;
  sp.max_disparity = 150;  // fits 160 wide, not the 120-wide transposed pair
  EXPECT_THROW(engine->set_params(sp, eo.background), ParameterError);
  sp.max_disparity = 24;
  EXPECT_NO_THROW(engine->set_params(sp, eo.background));
}
