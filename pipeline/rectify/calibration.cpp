#include <opencv2/calib3d.hpp>

#include <cmath>
#include <limits>

#include "rectify/calibration.hpp"
#include "rectify/camera_model.hpp"

namespace stereod {
namespace {

RectificationMap fixed_point_map(const CameraModel& cam, int width, int height) {
  cv::Mat map_x, map_y;
  const cv::Mat new_k = cam.P(cv::Rect(0, 0, 3, 3));
  const cv::Size size(width, height);
  if (cam.fisheye) {
    cv::fisheye::initUndistortRectifyMap(cam.K, cam.D, cam.R, new_k, size, CV_32FC1, map_x, map_y);
  } else {
    cv::initUndistortRectifyMap(cam.K, cam.D, cam.R, new_k, size, CV_32FC1, map_x, map_y);
  }
  RectificationMap map;
  map.resize(width, height);
  for (int y = 0; y < height; ++y) {
    const float* mx = map_x.ptr<float>(y);
    const float* my = map_y.ptr<float>(y);
    for (int x = 0; x < width; ++x) {
      map.at(x, y)[0] = quantize_map_coord(mx[x], width);
      map.at(x, y)[1] = quantize_map_coord(my[x], height);
    }
  }
  return map;
}

}  // namespace

double StereoCalibration::depth_m(double disparity_px) const {
  const double d = disparity_px - doffs_px;
  return d > 0 ? focal_px * baseline_m / d : std::numeric_limits<double>::infinity();
}

StereoCalibration build_stereo_calibration(const CameraModel& left, const CameraModel& right,
                                           int width, int height, double translation_scale,
                                           const std::string& source) {
  const auto fail = [&](const std::string& what) { throw CalibrationError(source + ": " + what); };
  const cv::Mat& p1 = left.P;
  const cv::Mat& p2 = right.P;
  const double f = p1.at<double>(0, 0);
  if (!(f > 0)) fail("P1: the rectified focal length P1[0][0] must be positive");
  // A horizontal pair has its translation in P2[0][3] = -f * B; a vertical one in P2[1][3].
  const double tx = p2.at<double>(0, 3);
  const double ty = p2.at<double>(1, 3);
  if (std::abs(ty) > std::abs(tx)) {
    fail(
        "P2: the pair is rectified vertically (translation in P2[1][3]); stereod matches "
        "horizontal pairs, left camera first");
  }
  const double baseline = -tx / p2.at<double>(0, 0) * translation_scale;
  if (!(baseline > 0)) {
    fail(
        "P2: the baseline -P2[0][3] / P2[0][0] is not positive: the right camera is not to "
        "the right of the left one (swap the cameras, or the files)");
  }
  StereoCalibration c;
  c.source = source;
  c.width = width;
  c.height = height;
  c.left = fixed_point_map(left, width, height);
  c.right = fixed_point_map(right, width, height);
  c.focal_px = f;
  c.fy_px = p1.at<double>(1, 1);
  c.baseline_m = baseline;
  c.doffs_px = p1.at<double>(0, 2) - p2.at<double>(0, 2);
  c.cx = p1.at<double>(0, 2);
  c.cy = p1.at<double>(1, 2);
  return c;
}

void check_calibration_size(const StereoCalibration& calibration, const std::string& pair,
                            int width, int height) {
  if (calibration.width == width && calibration.height == height) return;
  throw CalibrationError("pair '" + pair + "': calibration " + calibration.source + " is for " +
                         std::to_string(calibration.width) + "x" +
                         std::to_string(calibration.height) + " images, but the cameras deliver " +
                         std::to_string(width) + "x" + std::to_string(height));
}

}  // namespace stereod
