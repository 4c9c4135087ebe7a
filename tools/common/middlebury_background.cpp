#include "middlebury_background.hpp"

#include <stdexcept>

#include "disparity_io.hpp"
#include "middlebury.hpp"

namespace stereod {

SyntheticBackground load_middlebury_background(const std::string& scene_dir) {
  const auto files = scene_in(scene_dir);
  if (!files) {
    throw std::runtime_error(scene_dir +
                             ": not a Middlebury scene folder (expected im0.png, im1.png, "
                             "disp0GT.pfm and calib.txt; view1.png, view5.png and disp1.png; "
                             "im2.png, im6.png and disp2.png; or a 2001 layout)");
  }
  SyntheticBackground bg;
  bg.left = load_rgb(files->left);
  bg.right = load_rgb(files->right);
  bg.left_disparity = load_ground_truth(*files);
  return bg;
}

}  // namespace stereod
