#include "middlebury.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <regex>
#include <stdexcept>

#include "disparity_io.hpp"
#include "stereo/pixel_ops.hpp"

namespace stereod {
namespace fs = std::filesystem;
namespace {

bool has(const fs::path& dir, const char* name) {
  return fs::exists(dir / name);
}

// ndisp from a Middlebury calib.txt, tolerant of stray spaces; 0 when absent.
int read_ndisp(const fs::path& calib) {
  std::ifstream in(calib);
  std::string line;
  static const std::regex re(R"(^\s*ndisp\s*=\s*(\d+))");
  while (std::getline(in, line)) {
    std::smatch m;
    if (std::regex_search(line, m, re)) return std::stoi(m[1]);
  }
  return 0;
}

std::optional<SceneFiles> classify(const fs::path& dir) {
  SceneFiles f;
  f.name = dir.filename().string();
  f.dir = dir.string();
  auto p = [&](const char* n) { return (dir / n).string(); };
  if (has(dir, "imL.png") && has(dir, "imR.png") && has(dir, "truedisp.pgm")) {
    // 2001 tsukuba layout: 16 disparity levels, ground truth stored x16.
    f.family = SceneFamily::kV2;
    f.left = p("imL.png"), f.right = p("imR.png"), f.ground_truth = p("truedisp.pgm");
    f.gt_scale = 16, f.max_disparity = 16;
  } else if (has(dir, "im2.ppm") && has(dir, "im6.ppm") && has(dir, "disp2.pgm")) {
    // 2001 venus layout: 20 levels, ground truth x8.
    f.family = SceneFamily::kV2;
    f.left = p("im2.ppm"), f.right = p("im6.ppm"), f.ground_truth = p("disp2.pgm");
    f.gt_scale = 8, f.max_disparity = 20;
  } else if (has(dir, "im2.png") && has(dir, "im6.png") && has(dir, "disp2.png")) {
    // 2003 teddy/cones (quarter size): ground truth x4, 0 = unknown, at most 63.75.
    f.family = SceneFamily::kV2;
    f.left = p("im2.png"), f.right = p("im6.png"), f.ground_truth = p("disp2.png");
    f.gt_scale = 4, f.max_disparity = 64;
  } else if (has(dir, "view1.png") && has(dir, "view5.png") && has(dir, "disp1.png")) {
    // 2006 third size: ground truth x3, 0 = unknown; third-size disparities stay under 85.
    f.family = SceneFamily::kM2006;
    f.left = p("view1.png"), f.right = p("view5.png"), f.ground_truth = p("disp1.png");
    f.gt_scale = 3, f.max_disparity = 85;
  } else if (has(dir, "im0.png") && has(dir, "im1.png") && has(dir, "disp0GT.pfm")) {
    f.family = SceneFamily::kM2014;
    f.left = p("im0.png"), f.right = p("im1.png"), f.ground_truth = p("disp0GT.pfm");
    f.gt_scale = 1;
    f.max_disparity = has(dir, "calib.txt") ? read_ndisp(dir / "calib.txt") : 0;
    if (f.max_disparity <= 0) return std::nullopt;
    if (has(dir, "mask0nocc.png")) f.nonocc = p("mask0nocc.png");
    return f;
  } else {
    return std::nullopt;
  }
  if (has(dir, "nonocc.png")) f.nonocc = p("nonocc.png");
  if (has(dir, "all.png")) f.all = p("all.png");
  if (has(dir, "disc.png")) f.disc = p("disc.png");
  if (has(dir, "calib.txt")) {
    const int n = read_ndisp(dir / "calib.txt");
    if (n > 0) f.max_disparity = n;
  }
  return f;
}

bool bad(const Disparity16& est, const Image<float>& gt, int x, int y, double threshold) {
  const std::uint16_t e = est(x, y);
  if (e == kInvalidDisparity) return true;
  return std::fabs(static_cast<double>(e) / kSubpixelScale - static_cast<double>(gt(x, y))) >
         threshold;
}

bool known(float g) {
  return std::isfinite(g);
}

// Percentage of bad pixels over pixels where `use` holds and the ground truth is known.
template <typename Use>
double percent_bad(const Disparity16& est, const Image<float>& gt, double threshold, Use use,
                   double* invalid = nullptr) {
  long long n = 0, nbad = 0, ninvalid = 0;
  for (int y = 0; y < gt.height(); ++y) {
    for (int x = 0; x < gt.width(); ++x) {
      if (!known(gt(x, y)) || !use(x, y)) continue;
      ++n;
      nbad += bad(est, gt, x, y, threshold);
      ninvalid += est(x, y) == kInvalidDisparity;
    }
  }
  if (invalid) *invalid = n ? 100.0 * ninvalid / n : 0;
  return n ? 100.0 * nbad / n : 0;
}

}  // namespace

Gray8 ground_truth_mask(const Scene& scene) {
  const Image<float>& gt = scene.ground_truth;
  Gray8 mask(gt.width(), gt.height());
  for (int y = 0; y < gt.height(); ++y)
    for (int x = 0; x < gt.width(); ++x) mask(x, y) = known(gt(x, y)) ? 255 : 0;
  return mask;
}

const char* family_name(SceneFamily f) {
  switch (f) {
    case SceneFamily::kV2:
      return "v2";
    case SceneFamily::kM2014:
      return "2014";
    case SceneFamily::kM2006:
      return "2006";
  }
  return "?";
}

std::vector<SceneFiles> find_scenes(const std::string& dir) {
  std::vector<SceneFiles> scenes;
  if (!fs::is_directory(dir)) throw std::runtime_error(dir + ": not a directory");
  std::vector<fs::path> dirs{fs::path(dir)};
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    if (e.is_directory()) dirs.push_back(e.path());
  }
  for (const auto& d : dirs) {
    if (auto s = classify(d)) scenes.push_back(*s);
  }
  std::sort(scenes.begin(), scenes.end(), [](const SceneFiles& a, const SceneFiles& b) {
    if (a.family != b.family) return a.family < b.family;
    return a.name < b.name;
  });
  return scenes;
}

std::optional<SceneFiles> scene_in(const std::string& dir) {
  if (!fs::is_directory(dir)) return std::nullopt;
  // "…/tsukuba/" is "…/tsukuba": the scene is named by its folder.
  fs::path folder(dir);
  while (!folder.has_filename() && folder.parent_path() != folder) folder = folder.parent_path();
  return classify(folder);
}

Image<float> load_ground_truth(const SceneFiles& files) {
  if (files.family == SceneFamily::kM2014) return read_pfm(files.ground_truth);
  const Gray8 raw = load_mask(files.ground_truth);
  Image<float> gt(raw.width(), raw.height());
  for (std::size_t i = 0; i < raw.size(); ++i) {
    const std::uint8_t v = raw.data()[i];
    gt.data()[i] =
        v == 0 ? std::numeric_limits<float>::infinity() : static_cast<float>(v / files.gt_scale);
  }
  return gt;
}

Scene load_scene(const SceneFiles& files) {
  Scene s;
  s.files = files;
  s.left = load_gray(files.left);
  s.right = load_gray(files.right);
  s.ground_truth = load_ground_truth(files);
  if (!files.nonocc.empty()) s.nonocc = load_mask(files.nonocc);
  if (!files.all.empty()) s.all = load_mask(files.all);
  if (!files.disc.empty()) s.disc = load_mask(files.disc);
  auto same = [&](int w, int h, const std::string& what) {
    if (w != s.left.width() || h != s.left.height()) {
      throw std::runtime_error(files.dir + ": " + what + " is " + std::to_string(w) + "x" +
                               std::to_string(h) + ", the left image " +
                               std::to_string(s.left.width()) + "x" +
                               std::to_string(s.left.height()));
    }
  };
  same(s.right.width(), s.right.height(), "the right image");
  same(s.ground_truth.width(), s.ground_truth.height(), "the ground truth");
  if (!s.nonocc.empty()) same(s.nonocc.width(), s.nonocc.height(), "the nonocc mask");
  if (!s.all.empty()) same(s.all.width(), s.all.height(), "the all mask");
  if (!s.disc.empty()) same(s.disc.width(), s.disc.height(), "the disc mask");
  return s;
}

Gray8 error_map(const Scene& s, const Disparity16& est) {
  const double threshold = s.files.family == SceneFamily::kV2 ? 1.0 : 2.0;
  const Gray8* mask = s.nonocc.empty() ? nullptr : &s.nonocc;
  Gray8 out(est.width(), est.height(), 0);
  for (int y = 0; y < est.height(); ++y) {
    for (int x = 0; x < est.width(); ++x) {
      if (!known(s.ground_truth(x, y)) || (mask && (*mask)(x, y) != 255)) continue;
      out(x, y) = est(x, y) == kInvalidDisparity              ? 3
                  : bad(est, s.ground_truth, x, y, threshold) ? 2
                                                              : 1;
    }
  }
  return out;
}

SceneScore score_scene(const Scene& s, const Disparity16& est) {
  if (est.width() != s.ground_truth.width() || est.height() != s.ground_truth.height()) {
    throw std::runtime_error(s.files.name + ": estimate size differs from the ground truth");
  }
  SceneScore r;
  const auto& gt = s.ground_truth;
  auto everywhere = [](int, int) { return true; };
  switch (s.files.family) {
    case SceneFamily::kV2: {
      auto in = [](const Gray8& m) { return [&m](int x, int y) { return m(x, y) == 255; }; };
      r.nonocc = percent_bad(est, gt, 1.0, in(s.nonocc), &r.invalid);
      r.all = percent_bad(est, gt, 1.0, in(s.all));
      r.disc = percent_bad(est, gt, 1.0, in(s.disc));
      break;
    }
    case SceneFamily::kM2014: {
      if (s.nonocc.empty()) {
        r.nonocc = percent_bad(est, gt, 2.0, everywhere, &r.invalid);
      } else {
        const Gray8& m = s.nonocc;
        r.nonocc = percent_bad(
            est, gt, 2.0, [&](int x, int y) { return m(x, y) == 255; }, &r.invalid);
      }
      break;
    }
    case SceneFamily::kM2006:
      r.bad1 = percent_bad(est, gt, 1.0, everywhere, &r.invalid);
      r.bad2 = percent_bad(est, gt, 2.0, everywhere);
      break;
  }
  return r;
}

}  // namespace stereod
