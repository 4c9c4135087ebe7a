// stereod-bench trinocular: an L-shaped rig (issue 17) on the synthetic scene with its third view.
//   accuracy: frames of one scene type through a trinocular engine (background modeling off:
//     every frame is matched whole), each scored against the exact ground truth for the fused map,
//     the horizontal pair alone and the vertical pair alone: bad 1.0 over every pixel with ground
//     truth (no estimate counts as bad, occluded pixels included), and the share without one.
//   --speed: frames per second and per-frame latency of the fused rig against the horizontal pair
//     alone on the same frames and engine kind, and the rig's host work timed apart (the
//     transpositions of one frame's vertical input and one fusion, on the engine's pool).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <deque>
#include <optional>

#include <nlohmann/json.hpp>

#include "bench.hpp"
#include "middlebury_background.hpp"
#include "stereo/pixel_ops.hpp"
#include "synthetic/synthetic_scene.hpp"
#include "thread_pool.hpp"
#include "trinocular/trinocular_engine.hpp"

namespace stereod::bench {
namespace {

using Clock = std::chrono::steady_clock;

struct Score {
  long long known = 0, bad = 0, missing = 0;
  void add(ImageView<const std::uint16_t> d, const Image<float>& gt) {
    for (int y = 0; y < gt.height(); ++y) {
      for (int x = 0; x < gt.width(); ++x) {
        const float t = gt(x, y);
        if (!std::isfinite(t)) continue;
        ++known;
        const std::uint16_t v = d(x, y);
        if (v == kInvalidDisparity) {
          ++missing;
          ++bad;
        } else if (std::fabs(v / double(kSubpixelScale) - double(t)) > 1.0) {
          ++bad;
        }
      }
    }
  }
  double bad_pct() const { return known ? 100.0 * double(bad) / double(known) : 0; }
  double missing_pct() const { return known ? 100.0 * double(missing) / double(known) : 0; }
};

FrameInput input_of(const SyntheticFrame& f, std::uint64_t sequence) {
  FrameInput in;
  in.sequence = sequence;
  in.left = f.left_gray.view();
  in.right = f.right_gray.view();
  in.vertical = f.vertical_gray.view();
  return in;
}

// Runs `frames` through the engine with its slots kept full; returns frames/s and the median of
// submit-to-result times.
std::pair<double, double> time_engine(Engine& engine, const std::vector<SyntheticFrame>& frames,
                                      int count, int warmup, bool trinocular) {
  std::vector<double> latency;
  std::deque<Clock::time_point> submitted;
  Clock::time_point start;
  int done = 0, next = 0;
  const int total = count + warmup;
  while (done < total) {
    while (next < total) {
      FrameInput in = input_of(frames[static_cast<std::size_t>(next) % frames.size()],
                               static_cast<std::uint64_t>(next));
      if (!trinocular) {
        in.vertical = {};
      }
      const auto t = Clock::now();
      if (engine.submit(in) == SubmitStatus::kBusy) break;
      submitted.push_back(t);
      ++next;
    }
    auto r = engine.poll(std::chrono::seconds(60));
    if (!r) throw std::runtime_error("no result in 60 s");
    if (!r->ok) throw std::runtime_error(r->error);
    const auto now = Clock::now();
    if (done == warmup) start = now;
    if (done >= warmup) {
      latency.push_back(std::chrono::duration<double, std::milli>(now - submitted.front()).count());
    }
    submitted.pop_front();
    ++done;
  }
  const double s = std::chrono::duration<double>(Clock::now() - start).count();
  return {count > 1 ? (count - 1) / s : 0.0, median(latency)};
}

struct HostParts {
  double transpose_ms = 0, fusion_ms = 0;
  unsigned threads = 0;
};

// The median over 50 runs of what the rig does on the host per frame besides the pair engines:
// the two transpositions of the vertical pair's input and the fusion (on maps of the frame's
// size: plausible disparities and cost ratios, part of them missing; the fusion has no branch
// that depends on them).
HostParts time_host_parts(const SyntheticFrame& f, const VerticalLayout& layout,
                          const FusionParams& params, unsigned threads) {
  const std::shared_ptr<ThreadPool> pool = ThreadPool::for_threads(threads);
  const int w = layout.width, h = layout.height;
  Disparity16 hd(w, h), vd(h, w);
  Image<std::uint32_t> hr(w, h), vr(h, w);
  std::uint32_t state = 1;
  auto next = [&] { return state = state * 1664525u + 1013904223u; };
  for (auto* d : {&hd, &vd}) {
    for (auto& v : d->pixels())
      v = next() % 16 ? static_cast<std::uint16_t>(next() % 2000) : kInvalidDisparity;
  }
  for (auto* r : {&hr, &vr}) {
    for (auto& v : r->pixels()) v = 4096 + next() % 60000;
  }
  Gray8 a, b;
  FusionOutput out;
  const FusionInput in{hd.view(), hr.view(), vd.view(), vr.view(), layout, f.left_gray.view()};
  std::vector<double> transpose, fusion;
  for (int i = 0; i < 50; ++i) {
    const auto t0 = Clock::now();
    to_vertical_frame(f.left_gray.view(), layout, a, pool.get());
    to_vertical_frame(f.vertical_gray.view(), layout, b, pool.get());
    const auto t1 = Clock::now();
    fuse_trinocular(in, params, out, pool.get());
    const auto t2 = Clock::now();
    transpose.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
    fusion.push_back(std::chrono::duration<double, std::milli>(t2 - t1).count());
  }
  return {median(transpose), median(fusion), pool->size()};
}

}  // namespace

int run_trinocular(const CommonOptions& common, const TrinocularBenchOptions& o) {
  SyntheticOptions so;
  so.width = o.width;
  so.height = o.height;
  so.max_disparity = o.max_disparity;
  so.min_disparity = o.min_disparity;
  so.objects = o.objects;
  so.seed = o.seed;
  so.texture = o.texture;
  so.vertical = o.vertical;
  std::optional<SyntheticBackground> background;
  if (!o.background.empty()) background = load_middlebury_background(o.background);
  const SyntheticScene scene(so, std::move(background));

  PairParams params = resolve_params(common);
  params.background.enabled = false;  // every frame matched whole
  params.stereo.max_disparity = o.max_disparity;
  EngineOptions eo;
  eo.width = o.width;
  eo.height = o.height;
  eo.stereo = params.stereo;
  eo.background = params.background;
  eo.inflight = o.inflight;
  eo.cpu_threads = common.threads;
  TrinocularOptions t;
  t.model.position =
      o.vertical == SyntheticVertical::kAbove ? VerticalPosition::kAbove : VerticalPosition::kBelow;
  t.model.horizontal_focal_px = t.model.vertical_focal_px = 1;
  t.model.horizontal_baseline_m = t.model.vertical_baseline_m = 1;  // the scene's baselines agree
  t.cost_ratio = o.cost_ratio;
  auto engine = make_trinocular_engine(common.engine, eo, t);

  if (o.speed) {
    std::vector<SyntheticFrame> frames(4);
    for (std::size_t i = 0; i < frames.size(); ++i) {
      scene.render(o.start + static_cast<int>(i) * o.step, frames[i]);
    }
    auto pair = make_engine(common.engine, eo);
    const auto fused = time_engine(*engine, frames, o.frames, 10, true);
    const auto alone = time_engine(*pair, frames, o.frames, 10, false);
    FusionParams fp;
    fp.cost_ratio = o.cost_ratio;
    fp.max_disparity_q4 = kSubpixelScale * (o.max_disparity - 1) + kSubpixelScale / 2;
    const HostParts host = time_host_parts(
        frames[0], vertical_layout(o.width, o.height, t.model.position), fp, common.threads);
    if (common.json) {
      nlohmann::json j = {{"engine", std::string(engine->name())},
                          {"width", o.width},
                          {"height", o.height},
                          {"max_disparity", o.max_disparity},
                          {"frames", o.frames},
                          {"inflight", o.inflight},
                          {"fused_fps", fused.first},
                          {"fused_latency_ms", fused.second},
                          {"horizontal_fps", alone.first},
                          {"horizontal_latency_ms", alone.second},
                          {"host_threads", host.threads},
                          {"host_transpose_ms", host.transpose_ms},
                          {"host_fusion_ms", host.fusion_ms}};
      std::printf("%s\n", j.dump(2).c_str());
    } else {
      std::printf("trinocular speed, %s engine, %dx%d, %d disparities, %d frames, %d slots\n",
                  std::string(engine->name()).c_str(), o.width, o.height, o.max_disparity, o.frames,
                  o.inflight);
      std::printf("  %-28s %10s %16s\n", "", "frames/s", "latency ms (p50)");
      std::printf("  %-28s %10.1f %16.2f\n", "fused (both pairs + fusion)", fused.first,
                  fused.second);
      std::printf("  %-28s %10.1f %16.2f\n", "horizontal pair alone", alone.first, alone.second);
      std::printf(
          "  host work per frame, timed apart (%u threads): transpositions %.3f ms, "
          "fusion %.3f ms (medians of 50)\n",
          host.threads, host.transpose_ms, host.fusion_ms);
    }
    return 0;
  }

  Score fused, horizontal, vertical;
  long long from_vertical = 0, decided = 0;
  SyntheticFrame f;
  for (int i = 0; i < o.frames; ++i) {
    const int index = o.start + i * o.step;
    scene.render(index, f);
    const auto seq = static_cast<std::uint64_t>(i);
    while (engine->submit(input_of(f, seq)) == SubmitStatus::kBusy) {
      engine->poll(std::chrono::milliseconds(100));
    }
    const EngineResult r = wait_for_result(*engine, seq);
    fused.add(r.disparity, f.disparity);
    horizontal.add(r.horizontal_disparity, f.disparity);
    vertical.add(r.vertical_disparity, f.disparity);
    for (int y = 0; y < r.direction.height; ++y) {
      for (int x = 0; x < r.direction.width; ++x) {
        from_vertical += r.direction(x, y) == kFusedVertical;
        decided += r.direction(x, y) != kFusedNone;
      }
    }
  }
  const std::string name = !o.background.empty() ? "photo" : to_string(o.texture);
  if (common.json) {
    nlohmann::json j = {{"scene", name},
                        {"background", o.background},
                        {"vertical", to_string(o.vertical)},
                        {"frames", o.frames},
                        {"cost_ratio", o.cost_ratio},
                        {"fused_bad1", fused.bad_pct()},
                        {"horizontal_bad1", horizontal.bad_pct()},
                        {"vertical_bad1", vertical.bad_pct()},
                        {"fused_missing", fused.missing_pct()},
                        {"horizontal_missing", horizontal.missing_pct()},
                        {"vertical_missing", vertical.missing_pct()},
                        {"from_vertical", decided ? double(from_vertical) / decided : 0.0}};
    std::printf("%s\n", j.dump(2).c_str());
  } else {
    std::printf(
        "trinocular accuracy: scene %s%s%s, vertical view %s, %dx%d, %d frames, %s engine\n",
        name.c_str(), o.background.empty() ? "" : " ", o.background.c_str(), to_string(o.vertical),
        o.width, o.height, o.frames, std::string(engine->name()).c_str());
    std::printf("  %-16s %8s %10s\n", "", "bad 1.0", "missing");
    std::printf("  %-16s %7.2f%% %9.2f%%\n", "fused", fused.bad_pct(), fused.missing_pct());
    std::printf("  %-16s %7.2f%% %9.2f%%\n", "horizontal only", horizontal.bad_pct(),
                horizontal.missing_pct());
    std::printf("  %-16s %7.2f%% %9.2f%%\n", "vertical only", vertical.bad_pct(),
                vertical.missing_pct());
    std::printf("  fused pixels from the vertical pair: %.1f %%\n",
                decided ? 100.0 * double(from_vertical) / double(decided) : 0.0);
  }
  return 0;
}

}  // namespace stereod::bench
