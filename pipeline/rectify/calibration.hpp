// Stereo calibration for one camera pair: the rectification maps, computed once at start-up with
// OpenCV (cv::initUndistortRectifyMap, then stored in fixed point: remap.hpp), and the numbers
// that turn disparity into depth. Nothing here runs per frame.
//
// Two file forms:
//  - OpenCV FileStorage YAML as written after cv::stereoCalibrate / cv::stereoRectify:
//      K1 (or M1), D1, K2 (or M2), D2   camera matrices and distortion (D optional: none)
//      R1, R2, P1, P2                   rectification, used as given when present; otherwise
//      R, T                             the pair's extrinsics, rectified with cv::stereoRectify
//                                       (CALIB_ZERO_DISPARITY, alpha from the options)
//      image_width and image_height, or image_size / size: [width, height]
//      translation_unit: m (default), cm or mm   the unit of T (stereoCalibrate gives T in the
//                                       unit of the calibration target's points)
//  - a pair of ROS camera_info YAML files (left, right): image_width, image_height,
//    camera_matrix, distortion_model (plumb_bob, rational_polynomial or equidistant),
//    distortion_coefficients, rectification_matrix, projection_matrix; P's Tx = -fx * B is in
//    metres, as ROS defines it.
//
// Depth from a left-reference disparity d (pixels): Z = focal_px * baseline_m / (d - doffs_px),
// with doffs_px = cx(left, rectified) - cx(right, rectified) (0 with CALIB_ZERO_DISPARITY).
#pragma once

#include <stdexcept>
#include <string>

#include "rectify/remap.hpp"

namespace stereod {

class CalibrationError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct StereoCalibration {
  std::string source;  // the file(s) it was read from, for messages
  int width = 0;       // image size the calibration is for
  int height = 0;
  RectificationMap left, right;
  double focal_px = 0;    // rectified focal length (P1[0][0])
  double fy_px = 0;       // rectified vertical focal length (P1[1][1])
  double baseline_m = 0;  // distance between the rectified optical centres, > 0
  double doffs_px = 0;    // principal-point offset: depth = f * B / (d - doffs)
  double cx = 0, cy = 0;  // rectified principal point of the left camera

  // Metres for a disparity in pixels; +inf when d <= doffs (at or beyond infinity).
  double depth_m(double disparity_px) const;
};

struct CalibrationOptions {
  // cv::stereoRectify's free scaling when the file has no R1/R2/P1/P2: 0 keeps only valid
  // pixels, 1 keeps every source pixel (black corners).
  double alpha = 0.0;
};

// Throws CalibrationError naming the file and the key that is missing or malformed.
StereoCalibration load_opencv_calibration(const std::string& path,
                                          const CalibrationOptions& options = {});
StereoCalibration load_ros_calibration(const std::string& left_path, const std::string& right_path);

// Start-up check: throws CalibrationError ("pair 'front': calibration calib.yaml is for 1280x720
// images, but the cameras deliver 640x480") when the sizes differ.
void check_calibration_size(const StereoCalibration& calibration, const std::string& pair,
                            int width, int height);

}  // namespace stereod
