// Internal to stereod_rectify: one camera as the calibration files describe it, and the
// computation both file forms share (OpenCV maps, then fixed point; depth parameters).
#pragma once

#include <opencv2/core.hpp>

#include <string>

#include "rectify/calibration.hpp"

namespace stereod {

struct CameraModel {
  cv::Mat K;             // 3x3 camera matrix, CV_64F
  cv::Mat D;             // distortion coefficients, 1xN CV_64F (may be empty: none)
  cv::Mat R;             // 3x3 rectification rotation
  cv::Mat P;             // 3x4 projection in the rectified frame
  bool fisheye = false;  // D is the equidistant model's k1..k4
};

// Maps for both cameras and the depth parameters. `translation_scale` turns P2's translation
// unit into metres. Throws CalibrationError (prefixed with `source`) for a vertical pair, a
// negative baseline (cameras swapped) or a non-positive focal length.
StereoCalibration build_stereo_calibration(const CameraModel& left, const CameraModel& right,
                                           int width, int height, double translation_scale,
                                           const std::string& source);

}  // namespace stereod
