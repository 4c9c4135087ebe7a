// stereod-bench accuracy: every scene under --data through the engine (and OpenCV's StereoSGBM as a
// reference row), scored as ../shared/data/README.md says the field scores it.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>

#include <nlohmann/json.hpp>
#include "bench.hpp"
#include "disparity_io.hpp"
#include "middlebury.hpp"
#include "sgbm.hpp"
#include "stereo/pixel_ops.hpp"

namespace stereod::bench {
namespace {

struct Totals {
  double v2_sum = 0;
  int v2_count = 0;  // scenes
  double m2014_sum = 0;
  int m2014_count = 0;
  double m2006_sum = 0;
  int m2006_count = 0;

  void add(SceneFamily f, const SceneScore& s) {
    switch (f) {
      case SceneFamily::kV2:
        v2_sum += s.nonocc + s.all + s.disc;
        ++v2_count;
        break;
      case SceneFamily::kM2014:
        m2014_sum += s.nonocc;
        ++m2014_count;
        break;
      case SceneFamily::kM2006:
        m2006_sum += s.bad2;
        ++m2006_count;
        break;
    }
  }
  double v2() const { return v2_count ? v2_sum / (3.0 * v2_count) : 0; }
  double m2014() const { return m2014_count ? m2014_sum / m2014_count : 0; }
  double m2006() const { return m2006_count ? m2006_sum / m2006_count : 0; }
};

std::string score_text(SceneFamily f, const SceneScore& s) {
  char buf[96];
  switch (f) {
    case SceneFamily::kV2:
      std::snprintf(buf, sizeof buf, "%6.2f %6.2f %6.2f", s.nonocc, s.all, s.disc);
      break;
    case SceneFamily::kM2014:
      std::snprintf(buf, sizeof buf, "%6.2f %6s %6s", s.nonocc, "", "");
      break;
    case SceneFamily::kM2006:
      std::snprintf(buf, sizeof buf, "%6.2f %6.2f %6s", s.bad1, s.bad2, "");
      break;
  }
  return buf;
}

nlohmann::json score_json(SceneFamily f, const SceneScore& s) {
  switch (f) {
    case SceneFamily::kV2:
      return {{"bad1_nonocc", s.nonocc},
              {"bad1_all", s.all},
              {"bad1_disc", s.disc},
              {"invalid", s.invalid}};
    case SceneFamily::kM2014:
      return {{"bad2_nonocc", s.nonocc}, {"invalid", s.invalid}};
    case SceneFamily::kM2006:
      return {{"bad1", s.bad1}, {"bad2", s.bad2}, {"invalid", s.invalid}};
  }
  return {};
}

// The scenes under o.data whose names contain o.only (every one when it is empty).
std::vector<SceneFiles> select_scenes(const AccuracyOptions& o) {
  auto scenes = find_scenes(o.data);
  if (!o.only.empty()) {
    scenes.erase(std::remove_if(
                     scenes.begin(), scenes.end(),
                     [&](const SceneFiles& s) { return s.name.find(o.only) == std::string::npos; }),
                 scenes.end());
  }
  return scenes;
}

void print_header(const AccuracyOptions& o) {
  std::printf("%-5s %-11s %-8s %4s | %-20s | %-20s | %8s %8s\n", "set", "scene", "size", "D",
              "stereod", o.sgbm ? "StereoSGBM" : "", "ms", o.sgbm ? "SGBM ms" : "");
  std::printf("%-5s %-11s %-8s %4s | %-20s | %-20s |\n", "", "", "", "", "v2: nonocc all disc",
              "2014: bad2 nonocc");
  std::printf("%-5s %-11s %-8s %4s | %-20s | %-20s |\n", "", "", "", "", "2006: bad1 bad2", "");
}

// One scene's scores and median times; sgbm and sgbm_ms only with o.sgbm.
struct SceneResult {
  Disparity16 d;  // stereod's map
  SceneScore ours, sgbm;
  double ms = 0, sgbm_ms = 0;
};

// The scene o.repeat times through each matcher; the times are medians, the scores are of the
// last run (every run gives the same maps).
SceneResult run_scene(Engine& engine, const Scene& scene, const SceneFiles& files,
                      const AccuracyOptions& o) {
  SceneResult r;
  std::vector<double> ms, sgbm_ms;
  for (int i = 0; i < o.repeat; ++i) {
    StageTimings t;
    r.d = run_pair(engine, scene.left, scene.right, static_cast<std::uint64_t>(i), &t);
    ms.push_back(t.total_ms);
  }
  r.ours = score_scene(scene, r.d);
  if (o.sgbm) {
    Sgbm matcher(files.max_disparity);
    Disparity16 ref_d;
    for (int i = 0; i < o.repeat; ++i) {
      double t = 0;
      ref_d = matcher.compute(scene.left, scene.right, &t);
      sgbm_ms.push_back(t);
    }
    r.sgbm = score_scene(scene, ref_d);
  }
  r.ms = median(ms);
  r.sgbm_ms = median(sgbm_ms);
  return r;
}

// Into `folder`: the disparity (PFM) and the left image, darkened, with bad pixels red and pixels
// without an estimate blue (PNG).
void save_scene(const std::string& folder, const SceneFiles& files, const Scene& scene,
                const Disparity16& d) {
  const std::filesystem::path dir(folder);
  write_pfm((dir / (files.name + ".pfm")).string(), to_float_disparity(d));
  const Gray8 errors = error_map(scene, d);
  RgbImage vis;
  vis.resize(d.width(), d.height());
  for (int y = 0; y < d.height(); ++y) {
    for (int x = 0; x < d.width(); ++x) {
      const std::uint8_t g = static_cast<std::uint8_t>(scene.left(x, y) / 2);
      const std::uint8_t e = errors(x, y);
      std::uint8_t* px = vis.row(y) + 3 * x;
      px[0] = e == 2 ? 255 : e == 3 ? 0 : g;
      px[1] = e == 2 ? 0 : e == 3 ? 64 : g;
      px[2] = e == 2 ? 0 : e == 3 ? 255 : g;
    }
  }
  write_rgb((dir / (files.name + "_errors.png")).string(), vis);
}

nlohmann::json scene_json(const SceneFiles& files, const std::string& size, const SceneResult& r,
                          const AccuracyOptions& o) {
  nlohmann::json row = {{"family", family_name(files.family)},
                        {"scene", files.name},
                        {"size", size},
                        {"max_disparity", files.max_disparity},
                        {"stereod", score_json(files.family, r.ours)},
                        {"ms", r.ms}};
  if (o.sgbm) {
    row["sgbm"] = score_json(files.family, r.sgbm);
    row["sgbm_ms"] = r.sgbm_ms;
  }
  return row;
}

void print_scene(const SceneFiles& files, const std::string& size, const SceneResult& r,
                 const AccuracyOptions& o) {
  char sgbm_time[16] = "";
  if (o.sgbm) std::snprintf(sgbm_time, sizeof sgbm_time, "%8.1f", r.sgbm_ms);
  std::printf("%-5s %-11s %-8s %4d | %-20s | %-20s | %8.1f %8s\n", family_name(files.family),
              files.name.c_str(), size.c_str(), files.max_disparity,
              score_text(files.family, r.ours).c_str(),
              o.sgbm ? score_text(files.family, r.sgbm).c_str() : "", r.ms, sgbm_time);
}

nlohmann::json summary_json(const std::string& engine_name, const AccuracyOptions& o,
                            const nlohmann::json& rows, const Totals& ours, const Totals& sgbm) {
  nlohmann::json out = {
      {"engine", engine_name},
      {"fill", o.fill},
      {"repeat", o.repeat},
      {"scenes", rows},
      {"stereod",
       {{"v2_mean12", ours.v2()}, {"m2014_bad2", ours.m2014()}, {"m2006_bad2", ours.m2006()}}}};
  if (o.sgbm) {
    out["sgbm"] = {
        {"v2_mean12", sgbm.v2()}, {"m2014_bad2", sgbm.m2014()}, {"m2006_bad2", sgbm.m2006()}};
  }
  return out;
}

void print_summary(const std::string& engine_name, const AccuracyOptions& o, const Totals& ours,
                   const Totals& sgbm) {
  std::printf("\n%-46s %10s %12s\n", "headline (% bad; invalid pixels count as bad)", "stereod",
              o.sgbm ? "StereoSGBM" : "");
  auto line = [&](const char* what, int n, double a, double b) {
    if (n == 0) return;
    if (o.sgbm)
      std::printf("%-46s %9.2f%% %11.2f%%\n", what, a, b);
    else
      std::printf("%-46s %9.2f%%\n", what, a);
  };
  line("Middlebury v2 mean of 12 (bad 1.0)", ours.v2_count, ours.v2(), sgbm.v2());
  line("2014 nonocc bad 2.0, mean", ours.m2014_count, ours.m2014(), sgbm.m2014());
  line("2006 bad 2.0, mean", ours.m2006_count, ours.m2006(), sgbm.m2006());
  std::printf("engine %s, fill %s; ms: median of %d runs per scene (stereod: submit to result)\n",
              engine_name.c_str(), o.fill ? "on" : "off", o.repeat);
}

}  // namespace

int run_accuracy(const CommonOptions& common, const AccuracyOptions& o) {
  const PairParams params = resolve_stereo_only(common, o.fill);
  const auto scenes = select_scenes(o);
  if (scenes.empty()) {
    std::cerr << "stereod-bench accuracy: no scenes under " << o.data << "\n";
    return 1;
  }
  if (!o.save.empty()) std::filesystem::create_directories(o.save);

  Totals ours, sgbm;
  nlohmann::json rows = nlohmann::json::array();
  std::string engine_name;
  if (!common.json) print_header(o);
  for (const auto& files : scenes) {
    const Scene scene = load_scene(files);
    PairParams p = params;
    p.stereo.max_disparity = files.max_disparity;
    auto engine = open_engine(common, scene.left.width(), scene.left.height(), p);
    engine_name = engine->name();
    const SceneResult r = run_scene(*engine, scene, files, o);
    ours.add(files.family, r.ours);
    if (o.sgbm) sgbm.add(files.family, r.sgbm);
    if (!o.save.empty()) save_scene(o.save, files, scene, r.d);
    char size[32];
    std::snprintf(size, sizeof size, "%dx%d", scene.left.width(), scene.left.height());
    if (common.json) {
      rows.push_back(scene_json(files, size, r, o));
    } else {
      print_scene(files, size, r, o);
    }
    std::fflush(stdout);
  }
  if (common.json) {
    std::cout << summary_json(engine_name, o, rows, ours, sgbm).dump(2) << "\n";
    return 0;
  }
  print_summary(engine_name, o, ours, sgbm);
  return 0;
}

}  // namespace stereod::bench
