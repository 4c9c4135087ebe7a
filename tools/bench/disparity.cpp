#include <cstdio>
#include <iostream>

#include "bench.hpp"
#include "disparity_io.hpp"
#include "stereo/pixel_ops.hpp"

namespace stereod::bench {

int run_disparity(const CommonOptions& common, const std::string& left_path,
                  const std::string& right_path, int max_disparity, const std::string& out,
                  bool fill, const std::string& right_out) {
  PairParams params = resolve_stereo_only(common, fill);
  params.stereo.max_disparity = max_disparity;
  const StereoParams& p = params.stereo;
  const Gray8 left = load_gray(left_path);
  const Gray8 right = load_gray(right_path);
  validate_for_images(p, left.width(), left.height(), right.width(), right.height());
  auto engine =
      open_engine(common, left.width(), left.height(), params, 2, nullptr, !right_out.empty());
  FrameInput in;
  in.left = left.view();
  in.right = right.view();
  while (engine->submit(in) == SubmitStatus::kBusy) engine->poll(std::chrono::milliseconds(10));
  auto r = engine->poll(std::chrono::seconds(120));
  if (!r) throw std::runtime_error("no result from the " + std::string(engine->name()) + " engine");
  if (!r->ok) throw std::runtime_error(r->error);
  Disparity16 d(r->disparity.width, r->disparity.height);
  copy_into(r->disparity, d);
  write_disparity(out, d);
  if (!right_out.empty()) {
    Disparity16 dr(r->right_disparity.width, r->right_disparity.height);
    copy_into(r->right_disparity, dr);
    write_disparity(right_out, dr);
  }
  long long valid = 0;
  for (auto v : d.pixels()) valid += v != kInvalidDisparity;
  std::printf("%s: %dx%d, D=%d, %d levels, engine %s, %.1f ms, %.1f%% valid\n", out.c_str(),
              d.width(), d.height(), p.max_disparity, r->levels_used,
              std::string(engine->name()).c_str(), r->timings.total_ms,
              100.0 * valid / static_cast<double>(d.size()));
  return 0;
}

}  // namespace stereod::bench
