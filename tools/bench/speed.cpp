// stereod-bench speed: frames per second per pair on generated textured pairs with a known
// disparity, with every pair's engine kept busy (so uploads, compute and downloads of successive
// frames overlap as they do in the daemon). Times are wall clock over the timed frames; the
// per-frame latency (submit to result) is reported too.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <thread>

#include <nlohmann/json.hpp>

#include "bench.hpp"
#include "stereo/pixel_ops.hpp"
#include "synthetic_scene.hpp"

namespace stereod::bench {
namespace {

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

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
  // Background off: every pixel is matched (the speed targets are stated that way).
  PairParams params = resolve_stereo_only(common, false);
  StereoParams& p = params.stereo;
  p.max_disparity = o.max_disparity;
  if (o.levels > 0) p.levels = o.levels;
  validate_for_images(p, o.width, o.height, o.width, o.height);

  // A few different pairs in rotation, so no cache holds the next frame's input.
  std::vector<SyntheticPair> inputs;
  for (std::uint32_t seed = 0; seed < 3; ++seed) {
    inputs.push_back(make_benchmark_pair(o.width, o.height, o.max_disparity, 11 + seed * 7));
  }
  std::vector<std::unique_ptr<Engine>> engines;
  for (int k = 0; k < o.pairs; ++k) {
    engines.push_back(open_engine(common, o.width, o.height, params, o.inflight));
  }

  const int total = o.warmup + o.frames;
  std::vector<int> submitted(o.pairs, 0), completed(o.pairs, 0);
  std::vector<double> latency, compute;
  double correct = 100;
  int levels_used = 0;
  using Clock = std::chrono::steady_clock;
  Clock::time_point start;
  bool timing = o.warmup == 0;
  if (timing) start = Clock::now();
  int timed_done = 0;
  auto all_warm = [&] {
    return std::all_of(completed.begin(), completed.end(), [&](int c) { return c >= o.warmup; });
  };
  auto handle = [&](int k, const EngineResult& r) {
    if (!r.ok) throw std::runtime_error("frame failed: " + r.error);
    if (r.sequence != static_cast<std::uint64_t>(completed[k])) {
      throw std::runtime_error("results out of order: expected " + std::to_string(completed[k]) +
                               ", got " + std::to_string(r.sequence));
    }
    levels_used = r.levels_used;
    if (completed[k] >= o.warmup) {
      ++timed_done;
      latency.push_back(r.timings.total_ms);
      compute.push_back(r.timings.compute_ms);
    }
    if (completed[k] == total - 1) {
      const auto& truth = inputs[static_cast<std::size_t>(completed[k]) % inputs.size()];
      correct = std::min(correct, percent_correct(r.disparity, truth));
    }
    ++completed[k];
  };
  while (std::any_of(completed.begin(), completed.end(), [&](int c) { return c < total; })) {
    bool progress = false;
    for (int k = 0; k < o.pairs; ++k) {
      // Warm-up frames first on every pair, so the timed window starts with all pairs warm.
      const int limit = timing ? total : o.warmup;
      while (submitted[k] < limit) {
        const SyntheticPair& in = inputs[static_cast<std::size_t>(submitted[k]) % inputs.size()];
        FrameInput f;
        f.sequence = static_cast<std::uint64_t>(submitted[k]);
        f.left = in.left.view();
        f.right = in.right.view();
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
  }
  return 0;
}

}  // namespace stereod::bench
