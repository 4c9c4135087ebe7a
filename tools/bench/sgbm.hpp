// OpenCV's StereoSGBM, the reference the CPU engine's speed and accuracy are measured against
// (docs/PERFORMANCE.md), set up as OpenCV's own stereo_match sample sets it up.
#pragma once

#include <memory>

#include "image.hpp"

namespace cv {
class StereoSGBM;
}

namespace stereod::bench {

class Sgbm {
 public:
  // Block 3, P1 = 8*9, P2 = 32*9, uniqueness 10, speckle window 100 / range 32, left-right check
  // 1, MODE_SGBM; numDisparities = max_disparity rounded up to 16.
  explicit Sgbm(int max_disparity);
  ~Sgbm();
  // Its 16*d output turned into ours (invalid pixels stay invalid); `ms` receives the time of
  // StereoSGBM::compute alone.
  Disparity16 compute(const Gray8& left, const Gray8& right, double* ms = nullptr);

 private:
  std::shared_ptr<cv::StereoSGBM> sgbm_;
};

}  // namespace stereod::bench
