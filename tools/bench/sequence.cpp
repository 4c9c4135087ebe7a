// stereod-bench sequence: one engine instance over numbered frames, so the background model's
// state carries from frame to frame. Each frame's disparity (PFM) and foreground mask (PNG) go to
// --out when given. Where ground truth lies beside the frames (stereod-synth's layout:
// disparity_%06d.pfm and mask_%06d.png next to left_%06d.png) or is named with --truth-*, the run
// is scored: mask IoU, precision and recall after warm-up, shadow pixels called foreground,
// disparity bad 1.0 / 2.0 over true foreground, foreground left without disparity, the same over
// the foreground the right view shows (foreground_score.hpp), and the share of full-resolution
// pixels the hierarchy tested individually.
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>

#include <nlohmann/json.hpp>

#include "bench.hpp"
#include "disparity_io.hpp"
#include "foreground_score.hpp"
#include "ingest/frame_pattern.hpp"
#include "stereo/pixel_ops.hpp"

namespace stereod::bench {
namespace {

namespace fs = std::filesystem;

// Ground-truth patterns beside the left frames, in stereod-synth's naming.
std::string sibling_pattern(const std::string& left_pattern, const std::string& name) {
  const fs::path p(left_pattern);
  return (p.parent_path() / name).string();
}

struct Totals {
  long long frames = 0, scored_frames = 0;
  ForegroundScore score;
  double tested = 0;
  double ms = 0;
};

double shadow_called_background(const ForegroundScore& sc) {
  return sc.shadow ? 1.0 - sc.shadow_called_foreground() : 1.0;
}

// The mean tested fraction over the scored frames.
double mean_tested(const Totals& t) {
  return t.scored_frames ? t.tested / t.scored_frames : 0;
}

PairParams sequence_params(const CommonOptions& common, const SequenceOptions& o) {
  PairParams base;
  base.stereo.fill = o.fill;
  PairParams params = resolve_params(common, base);
  params.stereo.max_disparity = o.max_disparity;
  if (o.fill) params.stereo.fill = true;
  if (o.no_background) params.background.enabled = false;
  return params;
}

// Frame i through the engine, waiting for its result. Throws std::runtime_error when none comes
// or the frame failed.
EngineResult run_frame(Engine& engine, long long i, const Gray8& left, const Gray8& right,
                       const RgbImage* left_rgb, const RgbImage* right_rgb) {
  FrameInput in;
  in.sequence = static_cast<std::uint64_t>(i);
  in.left = left.view();
  in.right = right.view();
  if (left_rgb) {
    in.left_color = view_of(*left_rgb);
    in.right_color = view_of(*right_rgb);
  }
  while (engine.submit(in) == SubmitStatus::kBusy) engine.poll(std::chrono::milliseconds(10));
  auto r = engine.poll(std::chrono::seconds(120));
  if (!r) throw std::runtime_error("no result for frame " + std::to_string(i));
  if (!r->ok) throw std::runtime_error("frame " + std::to_string(i) + ": " + r->error);
  return *r;
}

// Frame i's disparity (PFM) and foreground mask (PNG) into `out`.
void save_frame(const std::string& out, long long i, const EngineResult& r) {
  Disparity16 d(r.disparity.width, r.disparity.height);
  copy_into(r.disparity, d);
  char name[64];
  std::snprintf(name, sizeof name, "disparity_%06lld.pfm", i);
  write_pfm((fs::path(out) / name).string(), to_float_disparity(d));
  Gray8 fg(r.foreground.width, r.foreground.height);
  copy_into(r.foreground, fg);
  std::snprintf(name, sizeof name, "foreground_%06lld.png", i);
  write_png8((fs::path(out) / name).string(), fg);
}

// The run's summary; scores only when frames were scored.
nlohmann::json report_json(const Totals& t) {
  const ForegroundScore& sc = t.score;
  nlohmann::json j = {
      {"frames", t.frames}, {"scored_frames", t.scored_frames}, {"ms_per_frame", t.ms / t.frames}};
  if (t.scored_frames) {
    j["mask_iou"] = sc.iou();
    j["mask_precision"] = sc.precision();
    j["mask_recall"] = sc.recall();
    j["shadow_called_background"] = shadow_called_background(sc);
    j["shadow_pixels"] = sc.shadow;
    j["foreground_coverage"] = sc.ratio(sc.tp + sc.fn, sc.pixels);
    j["bad1_foreground"] = sc.ratio(sc.bad1, sc.fg);
    j["bad2_foreground"] = sc.ratio(sc.bad2, sc.fg);
    j["foreground_without_disparity"] = sc.ratio(sc.no_disparity, sc.fg);
    j["bad1_foreground_estimated"] = sc.ratio(sc.bad1 - sc.no_disparity, sc.fg - sc.no_disparity);
    j["tested_fraction"] = mean_tested(t);
    j["right_visible_share"] = sc.ratio(sc.visible, sc.fg);
    j["bad1_right_visible"] = sc.bad1_visible();
    j["right_visible_without_disparity"] = sc.visible_without_disparity();
    j["right_visible_outside_mask"] = sc.ratio(sc.visible_outside_mask, sc.visible);
  }
  return j;
}

void print_report(const Totals& t, const std::string& engine_name) {
  std::printf("%lld frames, %.1f ms per frame (engine %s)\n", t.frames, t.ms / t.frames,
              engine_name.c_str());
  if (t.scored_frames == 0) {
    std::printf("no ground truth scored (none found, or the model never finished warming up)\n");
    return;
  }
  const ForegroundScore& sc = t.score;
  std::printf(
      "scored %lld frames after warm-up, true foreground %.1f%% of pixels\n"
      "  mask: IoU %.3f  precision %.3f  recall %.3f\n"
      "  shadow pixels called background: %.1f%% (of %lld)\n"
      "  disparity over true foreground: bad 1.0 %.2f%%  bad 2.0 %.2f%%  without disparity %.2f%%"
      "  (bad 1.0 where estimated %.2f%%)\n"
      "  right-visible foreground (%.1f%% of it): bad 1.0 %.2f%%  without disparity %.2f%%"
      "  (outside the mask %.2f%%)\n"
      "  full-resolution pixels tested individually: %.1f%%\n",
      t.scored_frames, 100 * sc.ratio(sc.tp + sc.fn, sc.pixels), sc.iou(), sc.precision(),
      sc.recall(), 100 * shadow_called_background(sc), sc.shadow, 100 * sc.ratio(sc.bad1, sc.fg),
      100 * sc.ratio(sc.bad2, sc.fg), 100 * sc.ratio(sc.no_disparity, sc.fg),
      100 * sc.ratio(sc.bad1 - sc.no_disparity, sc.fg - sc.no_disparity),
      100 * sc.ratio(sc.visible, sc.fg), 100 * sc.bad1_visible(),
      100 * sc.visible_without_disparity(), 100 * sc.ratio(sc.visible_outside_mask, sc.visible),
      100 * mean_tested(t));
}

}  // namespace

int run_sequence(const CommonOptions& common, const SequenceOptions& o) {
  const PairParams params = sequence_params(common, o);
  if (!o.out.empty()) fs::create_directories(o.out);

  std::string truth_disp = o.truth_disparity, truth_mask = o.truth_mask;
  if (truth_disp.empty()) truth_disp = sibling_pattern(o.left_pattern, "disparity_%06d.pfm");
  if (truth_mask.empty()) truth_mask = sibling_pattern(o.left_pattern, "mask_%06d.png");

  std::unique_ptr<Engine> engine;
  Totals t;
  RgbImage left_rgb, right_rgb;
  Gray8 left, right;
  for (long long i = o.start; o.count == 0 || i < o.start + o.count; ++i) {
    const std::string lp = format_frame_path(o.left_pattern, i);
    const std::string rp = format_frame_path(o.right_pattern, i);
    if (!fs::exists(lp) || !fs::exists(rp)) {
      if (o.count != 0) throw std::runtime_error("missing frame " + std::to_string(i) + ": " + lp);
      break;
    }
    const bool color =
        load_color_and_gray(lp, left_rgb, left) & load_color_and_gray(rp, right_rgb, right);
    if (!engine) engine = open_engine(common, left.width(), left.height(), params);
    const EngineResult r = run_frame(*engine, i, left, right, color ? &left_rgb : nullptr,
                                     color ? &right_rgb : nullptr);
    ++t.frames;
    t.ms += r.timings.total_ms;

    const std::string gd = format_frame_path(truth_disp, i), gm = format_frame_path(truth_mask, i);
    const bool have_truth = fs::exists(gd) && fs::exists(gm);
    // With modeling off, the same frames as with it on (those after the warm-up), so that the two
    // runs compare: the matcher's completeness without any mask.
    const bool scored =
        r.background_active || (o.no_background && i >= o.start + params.background.warmup);
    if (have_truth && scored) {
      t.score.add(r.disparity, r.foreground, read_pfm(gd), load_mask(gm));
      ++t.scored_frames;
      t.tested += r.tested_fraction;
    }
    if (!o.out.empty()) save_frame(o.out, i, r);
    if (o.verbose && !common.json) {
      std::printf("frame %lld: %.1f ms, background %s, tested %.1f%%\n", i, r.timings.total_ms,
                  r.background_active ? "active" : "warming up", 100 * r.tested_fraction);
    }
  }
  if (t.frames == 0) throw std::runtime_error("no frames found for " + o.left_pattern);

  if (common.json) {
    std::cout << report_json(t).dump(2) << "\n";
    return 0;
  }
  print_report(t, std::string(engine->name()));
  return 0;
}

}  // namespace stereod::bench
