// ROS camera_info YAML files, one per camera (calibration.hpp says which keys).
#include <yaml-cpp/yaml.h>

#include <opencv2/core.hpp>

#include <string>

#include "rectify/calibration.hpp"
#include "rectify/camera_model.hpp"

namespace stereod {
namespace {

class RosFile {
 public:
  explicit RosFile(const std::string& path) : path_(path) {
    try {
      root_ = YAML::LoadFile(path);
    } catch (const YAML::BadFile&) {
      throw CalibrationError(path + ": cannot open the file");
    } catch (const YAML::Exception& e) {
      throw CalibrationError(where(e.mark) + "not valid YAML: " + e.msg);
    }
    if (!root_.IsMap()) throw CalibrationError(path + ": expected a camera_info map");
  }

  [[noreturn]] void fail(const YAML::Node& at, const std::string& key,
                         const std::string& what) const {
    throw CalibrationError(where(at.Mark()) + key + ": " + what);
  }

  YAML::Node required(const std::string& key) const {
    const YAML::Node n = root_[key];
    if (!n) throw CalibrationError(path_ + ": " + key + ": missing");
    return n;
  }

  int positive_int(const std::string& key) const {
    const YAML::Node n = required(key);
    try {
      const int v = n.as<int>();
      if (v > 0) return v;
    } catch (const YAML::Exception&) {
    }
    fail(n, key, "expected a positive integer");
  }

  // {rows: R, cols: C, data: [R*C numbers]}; `cols` 0 accepts any column count.
  cv::Mat matrix(const std::string& key, int rows, int cols) const {
    const YAML::Node n = required(key);
    if (!n.IsMap() || !n["rows"] || !n["cols"] || !n["data"] || !n["data"].IsSequence()) {
      fail(n, key, "expected {rows, cols, data: [...]}");
    }
    int r = 0, c = 0;
    try {
      r = n["rows"].as<int>();
      c = n["cols"].as<int>();
    } catch (const YAML::Exception&) {
      fail(n, key, "rows and cols must be integers");
    }
    if (r != rows || (cols && c != cols) || c <= 0) {
      fail(n, key,
           "expected " + std::to_string(rows) + "x" + (cols ? std::to_string(cols) : "N") +
               ", got rows " + std::to_string(r) + ", cols " + std::to_string(c));
    }
    const YAML::Node data = n["data"];
    if (data.size() != static_cast<std::size_t>(r) * static_cast<std::size_t>(c)) {
      fail(data, key + ".data",
           "expected " + std::to_string(r * c) + " numbers, got " + std::to_string(data.size()));
    }
    cv::Mat m(r, c, CV_64F);
    for (int i = 0; i < r * c; ++i) {
      try {
        m.at<double>(i / c, i % c) = data[static_cast<std::size_t>(i)].as<double>();
      } catch (const YAML::Exception&) {
        fail(data[static_cast<std::size_t>(i)], key + ".data", "expected a number");
      }
    }
    return m;
  }

  CameraModel model() const {
    CameraModel cam;
    cam.K = matrix("camera_matrix", 3, 3);
    cam.R = matrix("rectification_matrix", 3, 3);
    cam.P = matrix("projection_matrix", 3, 4);
    std::string model = "plumb_bob";
    if (const YAML::Node n = root_["distortion_model"]) {
      try {
        model = n.as<std::string>();
      } catch (const YAML::Exception&) {
        fail(n, "distortion_model", "expected a string");
      }
    }
    const bool has_d = static_cast<bool>(root_["distortion_coefficients"]);
    cam.D = has_d ? matrix("distortion_coefficients", 1, 0) : cv::Mat::zeros(1, 5, CV_64F);
    const int n = static_cast<int>(cam.D.total());
    if (model == "equidistant") {
      cam.fisheye = true;
      if (n != 4)
        fail(root_["distortion_coefficients"], "distortion_coefficients",
             "the equidistant model has 4 coefficients, got " + std::to_string(n));
    } else if (model == "plumb_bob" || model == "rational_polynomial") {
      if (n != 4 && n != 5 && n != 8 && n != 12 && n != 14) {
        fail(root_["distortion_coefficients"], "distortion_coefficients",
             "expected 4, 5, 8, 12 or 14 coefficients, got " + std::to_string(n));
      }
    } else {
      fail(root_["distortion_model"], "distortion_model",
           "\"" + model + "\" is not supported (plumb_bob, rational_polynomial, equidistant)");
    }
    return cam;
  }

  const std::string& path() const { return path_; }

 private:
  std::string where(const YAML::Mark& mark) const {
    if (mark.is_null()) return path_ + ": ";
    return path_ + ":" + std::to_string(mark.line + 1) + ":" + std::to_string(mark.column + 1) +
           ": ";
  }

  std::string path_;
  YAML::Node root_;
};

}  // namespace

StereoCalibration load_ros_calibration(const std::string& left_path,
                                       const std::string& right_path) {
  const RosFile left(left_path);
  const RosFile right(right_path);
  const int width = left.positive_int("image_width");
  const int height = left.positive_int("image_height");
  const int rw = right.positive_int("image_width");
  const int rh = right.positive_int("image_height");
  if (rw != width || rh != height) {
    throw CalibrationError(right_path + ": image size " + std::to_string(rw) + "x" +
                           std::to_string(rh) + " differs from " + left_path + " (" +
                           std::to_string(width) + "x" + std::to_string(height) + ")");
  }
  // ROS's P has Tx = -fx' * B with B in metres.
  return build_stereo_calibration(left.model(), right.model(), width, height, 1.0,
                                  left_path + " + " + right_path);
}

}  // namespace stereod
