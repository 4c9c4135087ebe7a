#include <algorithm>
#include <cstdio>
#include <iostream>

#include "bench.hpp"
#include "disparity_io.hpp"
#include "sgbm.hpp"
#include "stereo/pixel_ops.hpp"

namespace stereod::bench {

int run_disparity(const CommonOptions& common, const DisparityOptions& o) {
  PairParams params = resolve_stereo_only(common, o.fill);
  params.stereo.max_disparity = o.max_disparity;
  const StereoParams& p = params.stereo;
  const Gray8 left = load_gray(o.left);
  const Gray8 right = load_gray(o.right);
  validate_for_images(p, left.width(), left.height(), right.width(), right.height());
  auto engine =
      open_engine(common, left.width(), left.height(), params, 2, nullptr, !o.right_out.empty());
  // One frame at a time (each submitted when the previous one is back): the time of a frame, not
  // the throughput of a pipeline.
  std::vector<double> ms;
  Disparity16 d, dr;
  int levels_used = 0;
  for (int i = 0; i < o.repeat; ++i) {
    FrameInput in;
    in.sequence = static_cast<std::uint64_t>(i);
    in.left = left.view();
    in.right = right.view();
    while (engine->submit(in) == SubmitStatus::kBusy) engine->poll(std::chrono::milliseconds(10));
    auto r = engine->poll(std::chrono::seconds(120));
    if (!r)
      throw std::runtime_error("no result from the " + std::string(engine->name()) + " engine");
    if (!r->ok) throw std::runtime_error(r->error);
    ms.push_back(r->timings.total_ms);
    levels_used = r->levels_used;
    if (i + 1 == o.repeat) {
      d.resize(r->disparity.width, r->disparity.height);
      copy_into(r->disparity, d);
      if (!o.right_out.empty()) {
        dr.resize(r->right_disparity.width, r->right_disparity.height);
        copy_into(r->right_disparity, dr);
      }
    }
  }
  write_disparity(o.out, d);
  if (!o.right_out.empty()) write_disparity(o.right_out, dr);
  long long valid = 0;
  for (auto v : d.pixels()) valid += v != kInvalidDisparity;
  const auto [lo, hi] = std::minmax_element(ms.begin(), ms.end());
  std::printf("%s: %dx%d, D=%d, %d levels, engine %s, %.1f ms", o.out.c_str(), d.width(),
              d.height(), p.max_disparity, levels_used, std::string(engine->name()).c_str(),
              median(ms));
  if (o.repeat > 1) std::printf(" (median of %d, %.1f-%.1f)", o.repeat, *lo, *hi);
  std::printf(", %.1f%% valid\n", 100.0 * valid / static_cast<double>(d.size()));
  if (o.sgbm) {
    Sgbm sgbm(p.max_disparity);
    std::vector<double> sgbm_ms;
    for (int i = 0; i < o.repeat; ++i) {
      double t = 0;
      sgbm.compute(left, right, &t);
      sgbm_ms.push_back(t);
    }
    const auto [slo, shi] = std::minmax_element(sgbm_ms.begin(), sgbm_ms.end());
    std::printf("OpenCV StereoSGBM (same run, MODE_SGBM, numDisparities %d): %.1f ms",
                (p.max_disparity + 15) / 16 * 16, median(sgbm_ms));
    if (o.repeat > 1) std::printf(" (median of %d, %.1f-%.1f)", o.repeat, *slo, *shi);
    std::printf("\n");
  }
  if (o.profile && engine->name() == "cpu") {
    print_stages(cpu_profile(common, params, 0,
                             [&](int) {
                               PairFrame f;
                               f.left = left.view();
                               f.right = right.view();
                               f.right_output = !o.right_out.empty();  // as the engine
                               return f;
                             }),
                 "CpuPairProcessor beside the engine");
  }
  return 0;
}

}  // namespace stereod::bench
