#include "legend.hpp"

#include <opencv2/imgproc.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "stereo/pixel_ops.hpp"

namespace stereod::sub {
namespace {

constexpr int kFont = cv::FONT_HERSHEY_SIMPLEX;
constexpr double kFontScale = 0.4;
constexpr int kBarWidth = 14;
constexpr int kMargin = 6;

// Labels for round values, all with the digits their spacing needs ("0.5 m", "1.0 m", "1.5 m").
std::vector<std::string> labels(const std::vector<double>& values, const char* unit) {
  const double step = values.size() > 1 ? values[1] - values[0] : 1.0;
  const int decimals = std::clamp(static_cast<int>(-std::floor(std::log10(step) + 1e-9)), 0, 4);
  std::vector<std::string> out;
  for (const double v : values) {
    char buf[48];
    std::snprintf(buf, sizeof buf, "%.*f %s", decimals, v, unit);
    out.emplace_back(buf);
  }
  return out;
}

cv::Size text_size(const std::string& text) {
  int baseline = 0;
  return cv::getTextSize(text, kFont, kFontScale, 1, &baseline);
}

}  // namespace

std::vector<double> nice_ticks(double lo, double hi, int count) {
  std::vector<double> out;
  if (!(hi > lo) || count < 1 || !std::isfinite(lo) || !std::isfinite(hi)) return out;
  const double raw = (hi - lo) / count;
  const double power = std::pow(10.0, std::floor(std::log10(raw)));
  double step = power;
  for (const double m : {1.0, 2.0, 5.0, 10.0}) {
    step = m * power;
    if (step >= raw) break;
  }
  for (double v = std::ceil(lo / step) * step; v <= hi + step * 1e-9; v += step) {
    out.push_back(std::fabs(v) < step * 1e-9 ? 0.0 : v);
  }
  return out;
}

RgbImage add_color_bar(const RgbImage& picture, const std::vector<LegendTick>& ticks,
                       const std::string& title) {
  int label_width = text_size(title).width;
  for (const auto& t : ticks) label_width = std::max(label_width, text_size(t.label).width);
  const int text_h = text_size("0").height;
  const int bar_top = kMargin + text_h + kMargin;
  const int height = std::max(picture.height, bar_top + 6 * text_h + kMargin);
  const int width = picture.width + kMargin + kBarWidth + 4 + label_width + kMargin;
  cv::Mat out(height, width, CV_8UC3, cv::Scalar(255, 255, 255));
  // cv::Mat over the same bytes the RgbImage holds: channel order is ours (R, G, B).
  const cv::Mat src(picture.height, picture.width, CV_8UC3,
                    const_cast<std::uint8_t*>(picture.pixels.data()));
  src.copyTo(out(cv::Rect(0, 0, picture.width, picture.height)));
  const int bar_x = picture.width + kMargin;
  const int bar_bottom = height - kMargin - text_h / 2;
  const auto& map = perceptual_colormap();
  const int span = std::max(bar_bottom - bar_top, 1);
  for (int y = bar_top; y <= bar_bottom; ++y) {
    const double t = static_cast<double>(bar_bottom - y) / span;
    const Rgb& c = map[static_cast<std::size_t>(std::lround(t * 255))];
    cv::line(out, {bar_x, y}, {bar_x + kBarWidth - 1, y}, cv::Scalar(c[0], c[1], c[2]));
  }
  const cv::Scalar ink(0, 0, 0);
  cv::putText(out, title, {bar_x, kMargin + text_h}, kFont, kFontScale, ink, 1, cv::LINE_AA);
  int last_y = -1000;
  for (const auto& t : ticks) {
    if (!(t.position >= 0 && t.position <= 1)) continue;
    const int y = bar_bottom - static_cast<int>(std::lround(t.position * span));
    if (std::abs(y - last_y) < text_h + 3) continue;  // labels must not overlap
    last_y = y;
    cv::line(out, {bar_x + kBarWidth - 4, y}, {bar_x + kBarWidth + 2, y}, ink);
    cv::putText(out, t.label, {bar_x + kBarWidth + 4, y + text_h / 2}, kFont, kFontScale, ink, 1,
                cv::LINE_AA);
  }
  RgbImage result;
  result.resize(width, height);
  std::copy(out.data, out.data + result.pixels.size(), result.pixels.begin());
  return result;
}

RgbImage disparity_picture(ImageView<const std::uint16_t> disparity, double min_d, double max_d,
                           const publish::DepthCalibration& camera) {
  const RgbImage colors = colorize(disparity, min_d, max_d);
  const double span = max_d > min_d ? max_d - min_d : 1.0;
  std::vector<LegendTick> ticks;
  if (camera.usable()) {
    // Round depths, placed at their disparity: d = f B / Z + doffs.
    const double lo_d = std::max(min_d, camera.doffs_px + 0.5);
    const double near = camera.depth_m(max_d), far = camera.depth_m(lo_d);
    // Depth is not linear along the bar: round depths from the near end, where they spread out.
    const std::vector<double> z = nice_ticks(near, std::min(far, near * 8), 6);
    const std::vector<std::string> text = labels(z, "m");
    for (std::size_t i = 0; i < z.size(); ++i) {
      const double d = camera.focal_px * camera.baseline_m / z[i] + camera.doffs_px;
      ticks.push_back({(d - min_d) / span, text[i]});
    }
    return add_color_bar(colors, ticks, "depth");
  }
  const std::vector<double> d = nice_ticks(min_d, max_d, 6);
  const std::vector<std::string> text = labels(d, "px");
  for (std::size_t i = 0; i < d.size(); ++i) ticks.push_back({(d[i] - min_d) / span, text[i]});
  return add_color_bar(colors, ticks, "disparity");
}

bool depth_range(ImageView<const std::uint16_t> disparity, const publish::DepthCalibration& camera,
                 double& near_m, double& far_m) {
  std::vector<float> z;
  for (int y = 0; y < disparity.height; ++y) {
    for (int x = 0; x < disparity.width; ++x) {
      const std::uint16_t v = disparity(x, y);
      if (v == kInvalidDisparity) continue;
      const double m = camera.depth_m(v / static_cast<double>(kSubpixelScale));
      if (std::isfinite(m)) z.push_back(static_cast<float>(m));
    }
  }
  if (z.empty()) return false;
  const auto at = [&](double q) {
    auto it = z.begin() + static_cast<std::ptrdiff_t>(q * static_cast<double>(z.size() - 1));
    std::nth_element(z.begin(), it, z.end());
    return static_cast<double>(*it);
  };
  near_m = at(0.01);
  far_m = at(0.99);
  if (!(far_m > near_m)) far_m = near_m * 1.01 + 1e-3;
  return true;
}

RgbImage depth_picture(ImageView<const std::uint16_t> disparity,
                       const publish::DepthCalibration& camera, double near_m, double far_m) {
  const auto& map = perceptual_colormap();
  RgbImage colors;
  colors.resize(disparity.width, disparity.height);
  const double span = far_m > near_m ? far_m - near_m : 1.0;
  for (int y = 0; y < disparity.height; ++y) {
    std::uint8_t* o = colors.row(y);
    for (int x = 0; x < disparity.width; ++x) {
      const std::uint16_t v = disparity(x, y);
      if (v == kInvalidDisparity) continue;
      const double z = camera.depth_m(v / static_cast<double>(kSubpixelScale));
      if (!std::isfinite(z)) continue;
      const double t = std::clamp((far_m - z) / span, 0.0, 1.0);
      const Rgb& c = map[static_cast<std::size_t>(std::lround(t * 255))];
      std::copy(c.begin(), c.end(), o + 3 * x);
    }
  }
  std::vector<LegendTick> ticks;
  const std::vector<double> z = nice_ticks(near_m, far_m, 6);
  const std::vector<std::string> text = labels(z, "m");
  for (std::size_t i = 0; i < z.size(); ++i) ticks.push_back({(far_m - z[i]) / span, text[i]});
  return add_color_bar(colors, ticks, "depth");
}

}  // namespace stereod::sub
