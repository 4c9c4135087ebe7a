// Calibration files: OpenCV FileStorage (stereoCalibrate's K, D, R, T, or stereoRectify's
// R1, R2, P1, P2) and ROS camera_info pairs. Synthetic calibrations with a known offset or
// rotation must move a known pattern where expected; depth parameters must turn disparities back
// into the depths the points were made at; every error names the file and the key.
#include <gtest/gtest.h>

#include <opencv2/calib3d.hpp>
#include <opencv2/core.hpp>

#include <unistd.h>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <functional>
#include <string>

#include "rectify/calibration.hpp"

using namespace stereod;

namespace {

std::string temp_path(const char* suffix) {
  char name[] = "/tmp/stereod_calib_XXXXXX";
  const int fd = mkstemp(name);
  EXPECT_GE(fd, 0);
  close(fd);
  std::remove(name);
  return std::string(name) + suffix;
}

cv::Mat camera_k(double f, double cx, double cy) {
  return (cv::Mat_<double>(3, 3) << f, 0, cx, 0, f, cy, 0, 0, 1);
}

cv::Mat projection(double f, double cx, double cy, double tx) {
  return (cv::Mat_<double>(3, 4) << f, 0, cx, tx, 0, f, cy, 0, 0, 0, 1, 0);
}

// An OpenCV FileStorage YAML file, as stereoCalibrate/stereoRectify users write it.
std::string write_opencv(const std::function<void(cv::FileStorage&)>& fill) {
  const std::string path = temp_path(".yaml");
  cv::FileStorage fs(path, cv::FileStorage::WRITE);
  fill(fs);
  fs.release();
  return path;
}

std::string error_of(const std::function<void()>& load) {
  try {
    load();
  } catch (const CalibrationError& e) {
    return e.what();
  }
  return "";
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

std::string ros_matrix(const char* key, int rows, int cols, const cv::Mat& m) {
  std::string s = std::string(key) + ":\n  rows: " + std::to_string(rows) +
                  "\n  cols: " + std::to_string(cols) + "\n  data: [";
  for (int i = 0; i < rows * cols; ++i) {
    s += (i ? ", " : "") + std::to_string(m.at<double>(i / cols, i % cols));
  }
  return s + "]\n";
}

std::string write_ros(const cv::Mat& k, const cv::Mat& p, const std::string& extra = "") {
  const std::string path = temp_path(".yaml");
  std::ofstream(path) << "image_width: 64\nimage_height: 48\ncamera_name: cam\n"
                      << ros_matrix("camera_matrix", 3, 3, k) << "distortion_model: plumb_bob\n"
                      << ros_matrix("distortion_coefficients", 1, 5, cv::Mat::zeros(1, 5, CV_64F))
                      << ros_matrix("rectification_matrix", 3, 3, cv::Mat::eye(3, 3, CV_64F))
                      << ros_matrix("projection_matrix", 3, 4, p) << extra;
  return path;
}

// A pattern: black, with a bright 3x3 block whose top-left corner is (x, y).
Gray8 pattern(int w, int h, int x, int y) {
  Gray8 img(w, h, 0);
  for (int v = 0; v < 3; ++v) {
    for (int u = 0; u < 3; ++u) img(x + u, y + v) = 200;
  }
  return img;
}

}  // namespace

TEST(Calibration, GivenRectificationShiftsAPatternByThePrincipalPointOffset) {
  // R1 = I and P1's principal point 10 px right and 5 px down of K1's: the rectified image is
  // the source moved by (10, 5), exactly, with black where nothing maps.
  const std::string path = write_opencv([](cv::FileStorage& fs) {
    fs << "image_width" << 64 << "image_height" << 48;
    fs << "K1" << camera_k(100, 31, 23) << "D1" << cv::Mat::zeros(1, 5, CV_64F);
    fs << "K2" << camera_k(100, 31, 23) << "D2" << cv::Mat::zeros(1, 5, CV_64F);
    fs << "R1" << cv::Mat::eye(3, 3, CV_64F) << "R2" << cv::Mat::eye(3, 3, CV_64F);
    fs << "P1" << projection(100, 41, 28, 0) << "P2" << projection(100, 41, 28, -100 * 0.1);
  });
  const StereoCalibration c = load_opencv_calibration(path);
  std::remove(path.c_str());
  EXPECT_EQ(c.width, 64);
  EXPECT_EQ(c.height, 48);
  Gray8 out;
  remap(pattern(64, 48, 20, 12).view(), c.left, out);
  EXPECT_EQ(out, pattern(64, 48, 30, 17));
  EXPECT_DOUBLE_EQ(c.focal_px, 100);
  EXPECT_DOUBLE_EQ(c.baseline_m, 0.1);
  EXPECT_DOUBLE_EQ(c.doffs_px, 0);
  // The rectified left camera's model, as frame headers carry it: P1's fy, cx and cy.
  EXPECT_DOUBLE_EQ(c.fy_px, 100);
  EXPECT_DOUBLE_EQ(c.cx, 41);
  EXPECT_DOUBLE_EQ(c.cy, 28);
}

TEST(Calibration, GivenRotationTurnsAPatternAboutThePrincipalPoint) {
  // R1 = a quarter turn about the optical axis, principal point (20, 20) of a 41x41 image: the
  // rectified pixel (u, v) shows the source pixel (v, 40 - u). A block at (33, 8) lands with its
  // corners at u = 40 - 8 - 2 .. 40 - 8, v = 33 .. 35.
  const std::string path = write_opencv([](cv::FileStorage& fs) {
    fs << "image_size" << cv::Size(41, 41);
    const cv::Mat quarter = (cv::Mat_<double>(3, 3) << 0, -1, 0, 1, 0, 0, 0, 0, 1);
    fs << "M1" << camera_k(50, 20, 20) << "M2" << camera_k(50, 20, 20);
    fs << "R1" << quarter << "R2" << quarter;
    fs << "P1" << projection(50, 20, 20, 0) << "P2" << projection(50, 20, 20, -50 * 0.2);
  });
  const StereoCalibration c = load_opencv_calibration(path);
  std::remove(path.c_str());
  Gray8 out;
  remap(pattern(41, 41, 33, 8).view(), c.left, out);
  EXPECT_EQ(out, pattern(41, 41, 30, 33));
}

TEST(Calibration, ExtrinsicsAreRectifiedAndGiveBackTheDepth) {
  // A slightly verged pair 12 cm apart with some distortion, as stereoCalibrate writes it, with T
  // in millimetres. Points at known depths, projected into both cameras and rectified, must give
  // Z = f B / (d - doffs), and the left map must point back to where each point was seen.
  const cv::Mat k1 = camera_k(500, 318, 241), k2 = camera_k(505, 322, 238);
  const cv::Mat d1 = (cv::Mat_<double>(1, 5) << -0.05, 0.01, 0, 0, 0);
  const cv::Mat d2 = (cv::Mat_<double>(1, 5) << -0.04, 0.008, 0, 0, 0);
  cv::Mat r;
  cv::Rodrigues(cv::Vec3d(0.002, -0.03, 0.001), r);
  const cv::Mat t_mm = (cv::Mat_<double>(3, 1) << -120.0, 1.5, 2.0);
  const std::string path = write_opencv([&](cv::FileStorage& fs) {
    fs << "image_width" << 640 << "image_height" << 480 << "translation_unit"
       << "mm";
    fs << "K1" << k1 << "D1" << d1 << "K2" << k2 << "D2" << d2 << "R" << r << "T" << t_mm;
  });
  const StereoCalibration c = load_opencv_calibration(path);
  std::remove(path.c_str());
  EXPECT_NEAR(c.baseline_m, std::sqrt(0.12 * 0.12 + 0.0015 * 0.0015 + 0.002 * 0.002), 1e-9);
  EXPECT_DOUBLE_EQ(c.doffs_px, 0);  // CALIB_ZERO_DISPARITY

  // The test's own rectification, to find where the points land.
  cv::Mat r1, r2, p1, p2, q;
  cv::stereoRectify(k1, d1, k2, d2, cv::Size(640, 480), r, t_mm / 1000.0, r1, r2, p1, p2, q,
                    cv::CALIB_ZERO_DISPARITY, 0.0);
  for (double z : {1.0, 2.5, 6.0}) {
    for (double x : {-0.3, 0.1}) {
      const std::vector<cv::Point3d> point = {{x, 0.05, z}};
      std::vector<cv::Point2d> seen1, seen2, rect1, rect2;
      cv::projectPoints(point, cv::Vec3d(0, 0, 0), cv::Vec3d(0, 0, 0), k1, d1, seen1);
      cv::Mat rvec;
      cv::Rodrigues(r, rvec);
      cv::projectPoints(point, rvec, t_mm / 1000.0, k2, d2, seen2);
      cv::undistortPoints(seen1, rect1, k1, d1, r1, p1);
      cv::undistortPoints(seen2, rect2, k2, d2, r2, p2);
      // Depth is measured along the rectified optical axis (R1 turns the left camera a little).
      const cv::Mat in_rectified = r1 * (cv::Mat_<double>(3, 1) << x, 0.05, z);
      const double z_rect = in_rectified.at<double>(2);
      const double d = rect1[0].x - rect2[0].x;
      EXPECT_NEAR(c.depth_m(d), z_rect, z_rect * 1e-4) << "x " << x << " z " << z;
      // The left map at the nearest rectified pixel points within a pixel of the original.
      const int u = static_cast<int>(std::lround(rect1[0].x));
      const int v = static_cast<int>(std::lround(rect1[0].y));
      EXPECT_NEAR(c.left.at(u, v)[0] / 256.0, seen1[0].x, 1.0);
      EXPECT_NEAR(c.left.at(u, v)[1] / 256.0, seen1[0].y, 1.0);
    }
  }
}

TEST(Calibration, RosCameraInfoPairGivesDepthParameters) {
  // The right camera's rectified principal point is 3 px left of its sensor's: doffs = 3 and its
  // map reads 3 px to the right.
  const std::string left = write_ros(camera_k(80, 31, 23), projection(80, 31, 23, 0));
  const std::string right = write_ros(camera_k(80, 31, 23), projection(80, 28, 23, -80 * 0.25));
  const StereoCalibration c = load_ros_calibration(left, right);
  EXPECT_EQ(c.width, 64);
  EXPECT_DOUBLE_EQ(c.focal_px, 80);
  EXPECT_DOUBLE_EQ(c.baseline_m, 0.25);
  EXPECT_DOUBLE_EQ(c.doffs_px, 3);
  EXPECT_DOUBLE_EQ(c.depth_m(3 + 80 * 0.25 / 2.0), 2.0);
  EXPECT_TRUE(std::isinf(c.depth_m(2.0)));
  EXPECT_EQ(c.left.xy, identity_map(64, 48).xy);
  EXPECT_EQ(c.right.at(10, 7)[0], 13 * 256);
  EXPECT_EQ(c.right.at(10, 7)[1], 7 * 256);
  std::remove(left.c_str());
  std::remove(right.c_str());
}

TEST(Calibration, ErrorsNameTheFileAndKey) {
  std::string path = write_opencv([](cv::FileStorage& fs) {
    fs << "image_width" << 64 << "image_height" << 48 << "K2" << camera_k(1, 0, 0);
  });
  std::string e = error_of([&] { load_opencv_calibration(path); });
  EXPECT_TRUE(contains(e, path + ": K1: missing")) << e;
  std::remove(path.c_str());

  path = write_opencv([](cv::FileStorage& fs) {
    fs << "image_width" << 64 << "image_height" << 48;
    fs << "K1" << camera_k(100, 31, 23) << "K2" << camera_k(100, 31, 23);
    fs << "R1" << cv::Mat::eye(3, 3, CV_64F) << "R2" << cv::Mat::eye(3, 3, CV_64F);
    fs << "P1" << projection(100, 31, 23, 0) << "P2" << camera_k(100, 31, 23);
  });
  e = error_of([&] { load_opencv_calibration(path); });
  EXPECT_TRUE(contains(e, path + ": P2: expected a 3x4 matrix, got 3x3")) << e;
  std::remove(path.c_str());

  path = write_opencv([](cv::FileStorage& fs) {
    fs << "K1" << camera_k(100, 31, 23) << "K2" << camera_k(100, 31, 23);
  });
  e = error_of([&] { load_opencv_calibration(path); });
  EXPECT_TRUE(contains(e, "image_width: missing")) << e;
  std::remove(path.c_str());

  path = write_opencv([](cv::FileStorage& fs) {
    fs << "image_width" << 64 << "image_height" << 48;
    fs << "K1" << camera_k(100, 31, 23) << "K2" << camera_k(100, 31, 23) << "R1"
       << cv::Mat::eye(3, 3, CV_64F);
  });
  e = error_of([&] { load_opencv_calibration(path); });
  EXPECT_TRUE(contains(e, "R2: missing (R1, R2, P1 and P2 come together")) << e;
  std::remove(path.c_str());

  // Right camera to the left of the left one.
  path = write_opencv([](cv::FileStorage& fs) {
    fs << "image_width" << 64 << "image_height" << 48;
    fs << "K1" << camera_k(100, 31, 23) << "K2" << camera_k(100, 31, 23);
    fs << "R1" << cv::Mat::eye(3, 3, CV_64F) << "R2" << cv::Mat::eye(3, 3, CV_64F);
    fs << "P1" << projection(100, 31, 23, 0) << "P2" << projection(100, 31, 23, 10);
  });
  e = error_of([&] { load_opencv_calibration(path); });
  EXPECT_TRUE(contains(e, "baseline") && contains(e, "swap")) << e;
  std::remove(path.c_str());

  e = error_of([] { load_opencv_calibration("/nonexistent/calib.yaml"); });
  EXPECT_TRUE(contains(e, "/nonexistent/calib.yaml")) << e;

  const std::string left = write_ros(camera_k(80, 31, 23), projection(80, 31, 23, 0));
  const std::string bad = temp_path(".yaml");
  std::ofstream(bad) << "image_width: 64\nimage_height: 48\n"
                     << ros_matrix("camera_matrix", 3, 3, camera_k(80, 31, 23))
                     << ros_matrix("rectification_matrix", 3, 3, cv::Mat::eye(3, 3, CV_64F))
                     << ros_matrix("projection_matrix", 3, 3, camera_k(80, 31, 23));
  e = error_of([&] { load_ros_calibration(left, bad); });
  EXPECT_TRUE(contains(e, bad + ":12:3: projection_matrix: expected 3x4, got rows 3, cols 3")) << e;
  e = error_of([&] { load_ros_calibration(left, "/nonexistent/right.yaml"); });
  EXPECT_TRUE(contains(e, "/nonexistent/right.yaml: cannot open")) << e;
  std::remove(left.c_str());
  std::remove(bad.c_str());
}

TEST(Calibration, SizeMustMatchTheCameras) {
  StereoCalibration c;
  c.source = "front.yaml";
  c.width = 1280;
  c.height = 720;
  EXPECT_NO_THROW(check_calibration_size(c, "front", 1280, 720));
  const std::string e = error_of([&] { check_calibration_size(c, "front", 640, 480); });
  EXPECT_EQ(e,
            "pair 'front': calibration front.yaml is for 1280x720 images, but the cameras "
            "deliver 640x480");
}
