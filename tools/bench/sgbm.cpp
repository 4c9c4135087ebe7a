#include "sgbm.hpp"

#include <chrono>

#include <opencv2/calib3d.hpp>

#include "stereo/pixel_ops.hpp"

namespace stereod::bench {

Sgbm::Sgbm(int max_disparity) {
  const int num = (max_disparity + 15) / 16 * 16;
  const int block = 3;
  sgbm_ = cv::StereoSGBM::create(0, num, block, 8 * block * block, 32 * block * block, 1, 63, 10,
                                 100, 32, cv::StereoSGBM::MODE_SGBM);
}

Sgbm::~Sgbm() = default;

Disparity16 Sgbm::compute(const Gray8& left, const Gray8& right, double* ms) {
  cv::Mat l(left.height(), left.width(), CV_8UC1, const_cast<std::uint8_t*>(left.data()));
  cv::Mat r(right.height(), right.width(), CV_8UC1, const_cast<std::uint8_t*>(right.data()));
  cv::Mat d16;
  const auto t0 = std::chrono::steady_clock::now();
  sgbm_->compute(l, r, d16);
  if (ms) {
    *ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  }
  Disparity16 out(left.width(), left.height());
  for (int y = 0; y < d16.rows; ++y) {
    const short* row = d16.ptr<short>(y);
    for (int x = 0; x < d16.cols; ++x) {
      out(x, y) = row[x] < 0 ? kInvalidDisparity : static_cast<std::uint16_t>(row[x]);
    }
  }
  return out;
}

}  // namespace stereod::bench
