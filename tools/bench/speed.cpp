// stereod-bench speed: frames per second per pair on generated textured pairs with a known
// disparity, with every pair's engine kept busy (so uploads, compute and downloads of successive
// frames overlap as they do in the daemon). Times are wall clock over the timed frames; the
// per-frame latency (submit to result) is reported too.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>
#include <iostream>
#include <thread>

#include <nlohmann/json.hpp>

#include "bench.hpp"
#include "stereo/pixel_ops.hpp"
#include "synthetic/synthetic_scene.hpp"
#include "synthetic_scene.hpp"
#if defined(STEREOD_HAVE_CUDA)
#include "cuda_engine.hpp"
#endif

namespace stereod::bench {
namespace {

// Share of visible pixels whose disparity is within 1 of the truth: proves the timed work is real.
double percent_correct(ImageView<const std::uint16_t> d, const SyntheticPair& truth) {
  long long n = 0, good = 0;
  for (int y = 0; y < d.height; ++y) {
    for (int x = 0; x < d.width; ++x) {
      if (truth.visible(x, y) == 0) continue;
      ++n;
      const std::uint16_t v = d(x, y);
      good += v != kInvalidDisparity &&
              std::fabs(v / double(kSubpixelScale) - static_cast<double>(truth.truth(x, y))) <= 1.0;
    }
  }
  return n ? 100.0 * good / n : 0;
}

}  // namespace

int run_speed(const CommonOptions& common, const SpeedOptions& o) {
  // Background off unless asked for: every pixel is matched (the speed targets are stated so).
  PairParams params = o.background ? resolve_params(common) : resolve_stereo_only(common, false);
  StereoParams& p = params.stereo;
  p.max_disparity = o.max_disparity;
  if (o.levels > 0) p.levels = o.levels;
  validate_for_images(p, o.width, o.height, o.width, o.height);

  // A few different pairs in rotation, so no cache holds the next frame's input. With background
  // modeling: 8 s of the synthetic video (--objects moving objects; the default 3 cover about
  // 15 % of the frame, the share the issue asks about), played forward, then backward, and so on:
  // objects reverse, they never jump, so the model sees the motion it would see from a camera.
  // (A short clip in a plain loop kept objects over the same pixels, where the model learned
  // them, and made them jump at the seam: a third of the foreground was lost.)
  std::vector<SyntheticPair> inputs;
  std::vector<RgbImage> colors;
  int warmup = o.warmup;
  const auto input_index = [&](int i) -> std::size_t {
    const std::size_t n = inputs.size(), k = static_cast<std::size_t>(i);
    if (colors.empty() || n < 2) return k % n;
    const std::size_t c = k % (2 * n - 2);
    return c < n ? c : 2 * n - 2 - c;
  };
  if (o.background) {
    warmup = std::max(o.warmup, params.background.warmup + 10);  // time the model at work
    SyntheticOptions so;
    so.width = o.width;
    so.height = o.height;
    so.max_disparity = o.max_disparity;
    so.objects = o.objects;
    const SyntheticScene scene(so);
    constexpr int kClipFrames = 240;
    inputs.resize(kClipFrames);
    colors.resize(2 * kClipFrames);
    // Ground truth is kept for the frame that is scored only (the last one), to save memory.
    const std::size_t scored = input_index(warmup + o.frames - 1);
    const unsigned workers = std::max(1u, std::min(8u, std::thread::hardware_concurrency()));
    std::vector<std::thread> threads;
    for (unsigned w = 0; w < workers; ++w) {
      threads.emplace_back([&, w] {
        SyntheticFrame f;
        for (int i = static_cast<int>(w); i < kClipFrames; i += static_cast<int>(workers)) {
          scene.render(i, f);
          SyntheticPair& frame = inputs[static_cast<std::size_t>(i)];
          frame.left = f.left_gray;
          frame.right = f.right_gray;
          if (static_cast<std::size_t>(i) == scored) {
            frame.truth = f.disparity;
            frame.visible.resize(o.width, o.height);
            for (std::size_t k = 0; k < frame.visible.size(); ++k) {
              frame.visible.data()[k] = f.mask.data()[k] == kMaskForeground ? 255 : 0;
            }
          }
          colors[2 * static_cast<std::size_t>(i)] = f.left;
          colors[2 * static_cast<std::size_t>(i) + 1] = f.right;
        }
      });
    }
    for (auto& t : threads) t.join();
  } else {
    for (std::uint32_t seed = 0; seed < 3; ++seed) {
      inputs.push_back(make_benchmark_pair(o.width, o.height, o.max_disparity, 11 + seed * 7));
    }
  }
  std::vector<std::unique_ptr<Engine>> engines;
  for (int k = 0; k < o.pairs; ++k) {
    engines.push_back(open_engine(common, o.width, o.height, params, o.inflight));
  }

  const int total = warmup + o.frames;
  std::vector<int> submitted(o.pairs, 0), completed(o.pairs, 0);
  std::vector<double> latency, compute, tested, foreground;
  double correct = 100;
  int levels_used = 0;
  using Clock = std::chrono::steady_clock;
  Clock::time_point start;
  bool timing = warmup == 0;
  if (timing) start = Clock::now();
  int timed_done = 0;
  auto all_warm = [&] {
    return std::all_of(completed.begin(), completed.end(), [&](int c) { return c >= warmup; });
  };
  auto handle = [&](int k, const EngineResult& r) {
    if (!r.ok) throw std::runtime_error("frame failed: " + r.error);
    if (r.sequence != static_cast<std::uint64_t>(completed[k])) {
      throw std::runtime_error("results out of order: expected " + std::to_string(completed[k]) +
                               ", got " + std::to_string(r.sequence));
    }
    levels_used = r.levels_used;
    if (completed[k] >= warmup) {
      ++timed_done;
      latency.push_back(r.timings.total_ms);
      compute.push_back(r.timings.compute_ms);
      tested.push_back(r.tested_fraction);
      long long fg = 0;
      for (int y = 0; y < r.foreground.height; ++y) {
        for (int x = 0; x < r.foreground.width; ++x) fg += r.foreground(x, y) != 0;
      }
      foreground.push_back(double(fg) / (double(r.foreground.width) * r.foreground.height));
    }
    if (completed[k] == total - 1) {
      const auto& truth = inputs[input_index(completed[k])];
      correct = std::min(correct, percent_correct(r.disparity, truth));
    }
    ++completed[k];
  };
  while (std::any_of(completed.begin(), completed.end(), [&](int c) { return c < total; })) {
    bool progress = false;
    for (int k = 0; k < o.pairs; ++k) {
      // Warm-up frames first on every pair, so the timed window starts with all pairs warm.
      const int limit = timing ? total : warmup;
      while (submitted[k] < limit) {
        const SyntheticPair& in = inputs[input_index(submitted[k])];
        FrameInput f;
        f.sequence = static_cast<std::uint64_t>(submitted[k]);
        f.left = in.left.view();
        f.right = in.right.view();
        if (!colors.empty()) {
          const std::size_t c = 2 * input_index(submitted[k]);
          f.left_color = view_of(colors[c]);
          f.right_color = view_of(colors[c + 1]);
        }
        if (engines[k]->submit(f) == SubmitStatus::kBusy) break;
        ++submitted[k];
        progress = true;
      }
      while (auto r = engines[k]->poll(std::chrono::nanoseconds(0))) {
        progress = true;
        handle(k, *r);
      }
    }
    if (!timing && all_warm()) {
      timing = true;
      start = Clock::now();
      continue;
    }
    if (!progress) {
      // Nothing ready: wait on the oldest frame of some busy pair instead of spinning.
      for (int k = 0; k < o.pairs; ++k) {
        if (completed[k] < submitted[k]) {
          if (auto r = engines[k]->poll(std::chrono::microseconds(200))) handle(k, *r);
          break;
        }
      }
    }
  }
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  std::vector<std::pair<std::string, double>> stages;
  if (o.profile && engines.front()->name() == "cpu") {
    // The same frames as the timed run (so a background model is as warm), then 21 more.
    stages = cpu_profile(common, params, total, [&](int i) {
      const std::size_t k = input_index(i);
      PairFrame f;
      f.left = inputs[k].left.view();
      f.right = inputs[k].right.view();
      if (!colors.empty()) {
        f.left_color = view_of(colors[2 * k]);
        f.right_color = view_of(colors[2 * k + 1]);
      }
      return f;
    });
  }
#if defined(STEREOD_HAVE_CUDA)
  if (o.profile && engines.front()->name() == "cuda") {
    // Median of several profiled frames per stage.
    std::vector<std::vector<std::pair<std::string, double>>> runs;
    for (int i = 0; i < 21; ++i) {
      // The frames that follow the timed ones, so a background model sees continuous motion.
      const std::size_t k = input_index(total + i);
      const SyntheticPair& in = inputs[k];
      FrameInput f;
      f.sequence = static_cast<std::uint64_t>(total + i);
      f.left = in.left.view();
      f.right = in.right.view();
      if (!colors.empty()) {
        f.left_color = view_of(colors[2 * k]);
        f.right_color = view_of(colors[2 * k + 1]);
      }
      runs.push_back(cuda_engine_profile(*engines.front(), f));
    }
    for (std::size_t s = 0; s < runs.front().size(); ++s) {
      std::vector<double> t;
      for (const auto& r : runs) t.push_back(r[s].second);
      stages.emplace_back(runs.front()[s].first, median(t));
    }
  }
#endif
  const double pair_frames = static_cast<double>(timed_done);
  const double fps_total = pair_frames / seconds;
  const double fps_pair = fps_total / o.pairs;
  const double ms_per_frame = 1000.0 / fps_pair;
  const double mde = double(o.width) * o.height * o.max_disparity * fps_total / 1e6;
  const std::string engine_name(engines.front()->name());
  if (common.json) {
    nlohmann::json j = {{"engine", engine_name},
                        {"width", o.width},
                        {"height", o.height},
                        {"max_disparity", o.max_disparity},
                        {"levels", levels_used},
                        {"pairs", o.pairs},
                        {"frames", o.frames},
                        {"inflight", o.inflight},
                        {"ms_per_frame", ms_per_frame},
                        {"fps_per_pair", fps_pair},
                        {"fps_total", fps_total},
                        {"mde_per_s", mde},
                        {"latency_ms_median", median(latency)},
                        {"compute_ms_median", median(compute)},
                        {"percent_correct", correct}};
    for (const auto& [stage, ms] : stages) j["stages_ms"][stage] = ms;
    if (o.background) {
      j["background"] = true;
      j["foreground_fraction_median"] = median(foreground);
      j["tested_fraction_median"] = median(tested);
    }
    std::cout << j.dump() << "\n";
  } else {
    std::printf(
        "engine %s  %dx%d  D=%d  L=%d  pairs=%d  inflight=%d  frames=%d\n"
        "  %.3f ms/frame per pair   %.1f fps per pair   %.1f pair-frames/s total   %.0f MDE/s\n"
        "  latency (submit to result) median %.3f ms, compute median %.3f ms, %.1f%% of visible "
        "pixels within 1 of the truth\n",
        engine_name.c_str(), o.width, o.height, o.max_disparity, levels_used, o.pairs, o.inflight,
        o.frames, ms_per_frame, fps_pair, fps_total, mde, median(latency), median(compute),
        correct);
    if (o.background) {
      std::printf(
          "  background modeling on: foreground %.1f%% of pixels, %.1f%% tested individually "
          "(medians)\n",
          100 * median(foreground), 100 * median(tested));
    }
    if (!stages.empty()) {
      print_stages(stages, engine_name == "cpu" ? "CpuPairProcessor beside the engine"
                                                : "outside the graph");
    }
  }
  return 0;
}

}  // namespace stereod::bench
