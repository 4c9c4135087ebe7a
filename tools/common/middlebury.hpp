// Middlebury scenes with ground truth, found on disk and scored the way the field scores them
// (../shared/data/README.md):
//   v2 (tsukuba, venus, teddy, cones): bad 1.0 over the nonocc, all and disc masks;
//   2014: bad 2.0 over mask0nocc == 255;  2006: bad 1.0 and bad 2.0 over pixels with ground truth.
// Pixels without an estimate count as bad everywhere.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "image.hpp"

namespace stereod {

enum class SceneFamily { kV2, kM2014, kM2006 };

struct SceneFiles {
  std::string name;  // folder name, e.g. "tsukuba"
  std::string dir;
  SceneFamily family = SceneFamily::kV2;
  std::string left, right, ground_truth;
  double gt_scale = 1;  // stored value / gt_scale = disparity (0 = no ground truth in 8-bit files)
  std::string nonocc, all, disc;  // masks; empty when the family has none
  int max_disparity = 0;          // disparities searched: 0 .. max_disparity-1
};

struct Scene {
  SceneFiles files;
  Gray8 left, right;
  Image<float> ground_truth;  // disparity; +inf or NaN where unknown
  Gray8 nonocc, all, disc;
};

struct SceneScore {
  // v2: bad 1.0 (%) over nonocc, all, disc. 2014: nonocc holds bad 2.0 over mask0nocc.
  // 2006: bad1 and bad2 over all pixels with ground truth.
  double nonocc = 0, all = 0, disc = 0;
  double bad1 = 0, bad2 = 0;
  double invalid = 0;  // % of evaluated pixels without an estimate
};

// Every scene below `dir` (searched recursively), sorted by family then name. The disparity range
// comes from calib.txt's ndisp where present, else from the range the family was published with.
std::vector<SceneFiles> find_scenes(const std::string& dir);
// The scene in exactly this folder (not below it), if it holds one; named by the folder, trailing
// slashes or not.
std::optional<SceneFiles> scene_in(const std::string& dir);
Scene load_scene(const SceneFiles& files);
// The left view's ground truth alone, as disparities: +inf where unknown.
Image<float> load_ground_truth(const SceneFiles& files);
// The pixels whose ground truth is known (255; 0 elsewhere), as the scores count them.
Gray8 ground_truth_mask(const Scene& scene);
SceneScore score_scene(const Scene& scene, const Disparity16& estimate);

// Where the estimate is right or wrong, over the family's main mask (v2 and 2014: nonocc, 2006: all
// pixels with ground truth) at the family's threshold: 0 not evaluated, 1 good, 2 bad, 3 no
// estimate.
Gray8 error_map(const Scene& scene, const Disparity16& estimate);

const char* family_name(SceneFamily f);

}  // namespace stereod
