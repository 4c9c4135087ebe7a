// stereod-bench matcher-volume: times the cost-volume prototypes of the finest level's matcher
// (volume_proto.hpp, two layouts) on the GPU, on the finest level of the benchmark pair (or a
// scene) as the CPU engine matched it, and holds their winners and subpixel values to the CPU
// engine's: the winners to the CPU's own, the subpixel values to the definition
// (naive_aggregated_cost at d - 1, d and d + 1). The left view only, background off; the pixels
// within 4 of the sides are left out. Exits 1 when a value differs, 77 without a GPU.
#include <cstdio>

#include "bench.hpp"
#include "stereo/adaptive_window.hpp"
#include "stereo/cost.hpp"
#include "stereo/mean_removal.hpp"
#include "stereo/pixel_ops.hpp"
#ifdef STEREOD_HAVE_CUDA
#include "volume_proto.hpp"
#endif

namespace stereod::bench {

// Exit status without a GPU: CTest's SKIP_RETURN_CODE for the test that runs this.
constexpr int kNoGpuExit = 77;

#ifndef STEREOD_HAVE_CUDA
int run_matcher_volume(const CommonOptions&, const MatcherVolumeOptions&) {
  std::fprintf(stderr, "stereod-bench matcher-volume: this build has no CUDA\n");
  return kNoGpuExit;
}
#else
int run_matcher_volume(const CommonOptions& common, const MatcherVolumeOptions& o) {
  StudiedFrame f;
  if (!load_studied_frame("matcher-volume", common, o.width, o.height, o.max_disparity, o.scene, f))
    return 2;
  const StereoParams& sp = f.params.stereo;
  if (sp.aggregation != Aggregation::kWindow || sp.subwindow != 3 || sp.best_k != 4 ||
      sp.uniqueness != 0) {
    std::fprintf(stderr,
                 "stereod-bench matcher-volume: the prototype is the default window's only "
                 "(aggregation window, subwindow 3, best_k 4, uniqueness 0)\n");
    return 2;
  }
  const CpuStereoMatcher& m = f.match(common.threads);
  const std::string& source = f.source;
  const LevelCandidates c = level_candidates(m, sp, 0, 0);
  const int w = c.w, h = c.h, nd = c.nd;

  // What the matcher reads at the finest level: the AD term's input and the census codes.
  const CostTables tables = make_cost_tables(sp);
  Gray8 ad[2];
  for (int v = 0; v < 2; ++v) {
    if (sp.ad_mean_radius > 0 && sp.cost != MatchingCost::kCensus)
      remove_local_mean(m.level_gray(0, v).view(), sp.ad_mean_radius, ad[v]);
    else
      ad[v] = m.level_gray(0, v);
  }
  Image<std::uint64_t> census[2];
  for (int v = 0; v < 2; ++v) {
    census[v] = m.level_census(0, v);
    if (census[v].empty()) census[v] = Image<std::uint64_t>(w, h, 0);
  }
  VolumeProtoInput in;
  in.width = w, in.height = h, in.disparities = nd;
  in.ref_ad = ad[0].data(), in.tgt_ad = ad[1].data();
  in.ref_census = census[0].data(), in.tgt_census = census[1].data();
  in.lo = c.lo.data(), in.hi = c.hi.data();
  std::copy(tables.ad, tables.ad + 256, in.ad_table);
  std::copy(tables.census, tables.census + 65, in.census_table);
  in.outside = tables.outside;
  in.subpixel = sp.subpixel;
  in.iterations = o.iterations;
  const VolumeProtoResult r = run_volume_proto(in);
  if (!r.error.empty()) {
    std::fprintf(stderr, "stereod-bench matcher-volume: %s\n", r.error.c_str());
    return r.no_device ? kNoGpuExit : 1;
  }

  // The winners against the CPU's; the subpixel values against the definition.
  MatchSide side;
  side.ref = ad[0].view();
  side.tgt = ad[1].view();
  if (!m.level_census(0, 0).empty()) {
    side.ref_census = census[0].view();
    side.tgt_census = census[1].view();
  }
  side.direction = -1;
  const Image<std::int16_t>& cpu_disp = m.level_disparity(0, 0);
  // The definition's subpixel value of the CPU's winner, once for both designs.
  std::vector<std::uint16_t> expected_q4(static_cast<std::size_t>(w) * h, kInvalidDisparity);
  long long covered = 0;
  for (int y = 0; y < h; ++y) {
    for (int x = 0; x < w; ++x) {
      const std::size_t i = static_cast<std::size_t>(y) * w + x;
      const int d = cpu_disp(x, y);
      if (!r.covered[i] || d == kNoDisparity) {
        covered += r.covered[i] ? 1 : 0;
        continue;
      }
      ++covered;
      const int need_lo = std::max(0, c.lo[i] - 1);
      const int need_hi = std::min({nd - 1, c.hi[i] + 1, x});
      const auto cost_at = [&](int dd) -> std::uint32_t {
        if (dd < need_lo || dd > need_hi) return 0xFFFFu;
        return naive_aggregated_cost(side, tables, 3, 4, x, y, dd);
      };
      expected_q4[i] = subpixel_disparity(d, nd, cost_at(d), cost_at, 0xFFFFu, sp.subpixel);
    }
  }
  std::printf(
      "matcher volume prototype, %dx%d D=%d (finest level %d disparities), %s, left view; "
      "pixels covered %lld of %lld\n",
      w, h, sp.max_disparity, nd, source.c_str(), covered, static_cast<long long>(w) * h);
  bool all_equal = true;
  for (const VolumeDesignResult& design : r.designs) {
    long long winners_differ = 0, q4_differ = 0;
    for (std::size_t i = 0; i < expected_q4.size(); ++i) {
      if (!r.covered[i]) continue;
      const int x = static_cast<int>(i % static_cast<std::size_t>(w));
      const int y = static_cast<int>(i / static_cast<std::size_t>(w));
      if (design.disparity[i] != cpu_disp(x, y))
        ++winners_differ;
      else if (design.q4[i] != expected_q4[i])
        ++q4_differ;
    }
    all_equal = all_equal && winners_differ == 0 && q4_differ == 0;
    std::printf(
        "%s: winners differing from the CPU's %lld, subpixel values differing from the "
        "definition %lld\n",
        design.name.c_str(), winners_differ, q4_differ);
    std::printf("  words of two disparities: pixel costs %lld, sums %lld, aggregations %lld\n",
                design.cost_words, design.sum_words, design.aggregation_words);
    std::printf("  mean over %d runs (ms):", o.iterations);
    for (const auto& [name, ms] : design.stage_ms) std::printf("  %s %.4f", name.c_str(), ms);
    std::printf("\n  chain %.4f ms\n", design.chain_ms);
  }
  return all_equal ? 0 : 1;
}
#endif

}  // namespace stereod::bench
