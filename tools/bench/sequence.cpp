// stereod-bench sequence: one engine instance over numbered frames, so state (once background
// modeling exists) carries from frame to frame; each frame's disparity goes to a PFM.
#include <cstdio>
#include <filesystem>

#include "bench.hpp"
#include "disparity_io.hpp"
#include "frame_pattern.hpp"
#include "stereo/pixel_ops.hpp"

namespace stereod::bench {

int run_sequence(const CommonOptions& common, const SequenceOptions& o) {
  namespace fs = std::filesystem;
  StereoParams base;
  base.fill = o.fill;
  StereoParams p = resolve_params(common, base);
  p.max_disparity = o.max_disparity;
  if (o.fill) p.fill = true;
  fs::create_directories(o.out);

  std::unique_ptr<Engine> engine;
  int done = 0;
  for (long long i = o.start; o.count == 0 || i < o.start + o.count; ++i) {
    const std::string lp = format_frame_path(o.left_pattern, i);
    const std::string rp = format_frame_path(o.right_pattern, i);
    if (!fs::exists(lp) || !fs::exists(rp)) {
      if (o.count != 0) throw std::runtime_error("missing frame " + std::to_string(i) + ": " + lp);
      break;
    }
    const Gray8 left = load_gray(lp);
    const Gray8 right = load_gray(rp);
    if (!engine) engine = open_engine(common, left.width(), left.height(), p);
    StageTimings t;
    const Disparity16 d = run_pair(*engine, left, right, static_cast<std::uint64_t>(i), &t);
    char name[64];
    std::snprintf(name, sizeof name, "disparity_%06lld.pfm", i);
    write_pfm((fs::path(o.out) / name).string(), to_float_disparity(d));
    long long valid = 0;
    for (auto v : d.pixels()) valid += v != kInvalidDisparity;
    if (!common.json) {
      std::printf("frame %lld: %.1f ms, %.1f%% valid\n", i, t.total_ms,
                  100.0 * valid / static_cast<double>(d.size()));
    }
    ++done;
  }
  if (done == 0) throw std::runtime_error("no frames found for " + o.left_pattern);
  std::printf("%d frames written to %s\n", done, o.out.c_str());
  return 0;
}

}  // namespace stereod::bench
