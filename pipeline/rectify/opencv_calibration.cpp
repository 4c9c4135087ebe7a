// OpenCV FileStorage calibration files (calibration.hpp says which keys).
#include <opencv2/calib3d.hpp>
#include <opencv2/core.hpp>

#include <fstream>
#include <initializer_list>
#include <string>
#include <vector>

#include "rectify/calibration.hpp"
#include "rectify/camera_model.hpp"

namespace stereod {
namespace {

class Reader {
 public:
  explicit Reader(const std::string& path) : path_(path) {
    // Checked first so that OpenCV does not log its own complaint as well.
    if (!std::ifstream(path).good()) throw CalibrationError(path + ": cannot open the file");
    try {
      fs_.open(path, cv::FileStorage::READ);
    } catch (const cv::Exception& e) {
      throw CalibrationError(path + ": not a readable OpenCV FileStorage file: " + e.msg);
    }
    if (!fs_.isOpened()) throw CalibrationError(path + ": cannot open the file");
  }

  [[noreturn]] void fail(const std::string& key, const std::string& what) const {
    throw CalibrationError(path_ + ": " + key + ": " + what);
  }

  // The first of `names` present, or "" when none is.
  std::string find(std::initializer_list<const char*> names) const {
    for (const char* n : names) {
      if (!fs_[n].empty() && !fs_[n].isNone()) return n;
    }
    return "";
  }

  bool has(const char* name) const { return !find({name}).empty(); }

  // A matrix of `rows` x `cols` as CV_64F; rows or cols 0 means any.
  cv::Mat matrix(const std::string& key, int rows, int cols) const {
    cv::Mat m;
    try {
      fs_[key] >> m;
    } catch (const cv::Exception&) {
      m.release();
    }
    if (m.empty()) fail(key, "expected a matrix (!!opencv-matrix)");
    if ((rows && m.rows != rows) || (cols && m.cols != cols)) {
      fail(key, "expected a " + std::to_string(rows) + "x" + std::to_string(cols) +
                    " matrix, got " + std::to_string(m.rows) + "x" + std::to_string(m.cols));
    }
    cv::Mat d;
    m.convertTo(d, CV_64F);
    return d;
  }

  // Distortion: 1xN or Nx1 with N in {4, 5, 8, 12, 14}; absent means none.
  cv::Mat distortion(const char* key) const {
    if (!has(key)) return cv::Mat::zeros(1, 5, CV_64F);
    cv::Mat d = matrix(key, 0, 0);
    const int n = static_cast<int>(d.total());
    if ((d.rows != 1 && d.cols != 1) || (n != 4 && n != 5 && n != 8 && n != 12 && n != 14)) {
      fail(key, "expected 4, 5, 8, 12 or 14 distortion coefficients in one row, got " +
                    std::to_string(d.rows) + "x" + std::to_string(d.cols));
    }
    return d.reshape(1, 1);
  }

  int integer(const char* key) const {
    const cv::FileNode n = fs_[key];
    if (!n.isInt() || static_cast<int>(n) <= 0) fail(key, "expected a positive integer");
    return static_cast<int>(n);
  }

  cv::Size image_size() const {
    if (has("image_width") || has("image_height")) {
      return {integer("image_width"), integer("image_height")};
    }
    const std::string key = find({"image_size", "imageSize", "size"});
    if (key.empty()) {
      fail("image_width", "missing: give image_width and image_height (or image_size: [w, h])");
    }
    const cv::FileNode n = fs_[key];
    if (!n.isSeq() || n.size() != 2 || !n[0].isInt() || !n[1].isInt() ||
        static_cast<int>(n[0]) <= 0 || static_cast<int>(n[1]) <= 0) {
      fail(key, "expected [width, height]");
    }
    return {static_cast<int>(n[0]), static_cast<int>(n[1])};
  }

  double translation_scale() const {
    if (!has("translation_unit")) return 1.0;
    const cv::FileNode n = fs_["translation_unit"];
    const std::string unit = n.isString() ? static_cast<std::string>(n) : "";
    if (unit == "m") return 1.0;
    if (unit == "cm") return 0.01;
    if (unit == "mm") return 0.001;
    fail("translation_unit", "expected m, cm or mm");
  }

  const std::string& path() const { return path_; }

 private:
  std::string path_;
  cv::FileStorage fs_;
};

cv::Mat camera_matrix(const Reader& r, const char* k, const char* m, const char* which) {
  const std::string key = r.find({k, m});
  if (key.empty()) {
    r.fail(k,
           std::string("missing: the ") + which + " camera matrix (3x3; also read as " + m + ")");
  }
  return r.matrix(key, 3, 3);
}

}  // namespace

StereoCalibration load_opencv_calibration(const std::string& path,
                                          const CalibrationOptions& options) {
  const Reader r(path);
  const cv::Size size = r.image_size();
  CameraModel left, right;
  left.K = camera_matrix(r, "K1", "M1", "left");
  right.K = camera_matrix(r, "K2", "M2", "right");
  left.D = r.distortion("D1");
  right.D = r.distortion("D2");
  double scale = r.translation_scale();

  const char* rectification[] = {"R1", "R2", "P1", "P2"};
  std::vector<std::string> missing;
  for (const char* key : rectification) {
    if (!r.has(key)) missing.emplace_back(key);
  }
  if (missing.empty()) {  // rectified already: use R1, R2, P1, P2 as given
    left.R = r.matrix("R1", 3, 3);
    right.R = r.matrix("R2", 3, 3);
    left.P = r.matrix("P1", 3, 4);
    right.P = r.matrix("P2", 3, 4);
  } else if (missing.size() < 4) {
    std::string list;
    for (const auto& m : missing) list += (list.empty() ? "" : ", ") + m;
    r.fail(missing[0], "missing (R1, R2, P1 and P2 come together; absent: " + list + ")");
  } else {
    if (!r.has("R") || !r.has("T")) {
      r.fail(r.has("R") ? "T" : "R",
             "missing: give R and T (stereoCalibrate) or R1, R2, P1 and P2 (stereoRectify)");
    }
    cv::Mat rotation = r.matrix("R", 0, 0);
    if (rotation.total() == 3) {
      cv::Mat rodrigues;
      cv::Rodrigues(rotation.reshape(1, 3), rodrigues);
      rotation = rodrigues;
    } else if (rotation.rows != 3 || rotation.cols != 3) {
      r.fail("R", "expected a 3x3 rotation or a 3-vector (Rodrigues)");
    }
    cv::Mat t = r.matrix("T", 0, 0);
    if (t.total() != 3) r.fail("T", "expected a 3-vector");
    t = t.reshape(1, 3) * scale;  // metres from here on
    scale = 1.0;
    cv::Mat q;
    cv::stereoRectify(left.K, left.D, right.K, right.D, size, rotation, t, left.R, right.R, left.P,
                      right.P, q, cv::CALIB_ZERO_DISPARITY, options.alpha);
  }
  return build_stereo_calibration(left, right, size.width, size.height, scale, path);
}

}  // namespace stereod
