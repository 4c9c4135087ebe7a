#include "frame_report.hpp"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <stdexcept>

#include "colormap.hpp"
#include "disparity_io.hpp"
#include "legend.hpp"
#include "ply.hpp"
#include "publish/points.hpp"
#include "stereo/pixel_ops.hpp"

namespace stereod::sub {
namespace {

// `v` with `decimals` digits after the point.
std::string fixed(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

template <typename T>
Image<T> packed(ImageView<const T> v) {
  Image<T> out;
  copy_into(v, out);
  return out;
}

}  // namespace

DisparitySummary summarize_disparity(ImageView<const std::uint16_t> d) {
  DisparitySummary s;
  std::uint64_t valid = 0;
  std::uint16_t lo = 0xFFFF, hi = 0;
  for (int y = 0; y < d.height; ++y) {
    const std::uint16_t* row = d.row(y);
    for (int x = 0; x < d.width; ++x) {
      if (row[x] == kInvalidDisparity) continue;
      ++valid;
      lo = std::min(lo, row[x]);
      hi = std::max(hi, row[x]);
    }
  }
  const double total = static_cast<double>(d.width) * d.height;
  if (valid == 0 || total == 0) return s;
  s.valid_percent = 100.0 * static_cast<double>(valid) / total;
  s.min_d = lo / static_cast<double>(kSubpixelScale);
  s.max_d = hi / static_cast<double>(kSubpixelScale);
  return s;
}

std::string frame_line(const client::Frame& frame, std::int64_t receive_ns, bool summary) {
  return frame_line(frame.header(), summary ? frame.disparity() : ImageView<const std::uint16_t>{},
                    receive_ns, summary);
}

std::string frame_line(const publish::FrameHeader& h, ImageView<const std::uint16_t> disparity,
                       std::int64_t receive_ns, bool summary) {
  std::string line = h.info.pair + " #" + std::to_string(h.info.sequence);
  if (!h.ok()) return line + "  error: " + h.info.error;
  if (h.info.capture_ns > 0) {
    line +=
        "  latency " + fixed(static_cast<double>(receive_ns - h.info.capture_ns) / 1e6, 1) + " ms";
    if (h.publish_ns > 0) {
      line += "  publish " + fixed(static_cast<double>(h.publish_ns - h.info.capture_ns) / 1e6, 2) +
              " ms";
    }
  }
  if (summary) {
    const DisparitySummary s = summarize_disparity(disparity);
    line += "  valid " + fixed(s.valid_percent, 1) + " %  d " + fixed(s.min_d, 2) + ".." +
            fixed(s.max_d, 2) + " px";
  }
  if (h.info.foreground_without_disparity >= 0) {
    line += "  fg without d " + std::to_string(h.info.foreground_without_disparity);
  }
  return line;
}

std::string stats_lines(const stats::StatsSnapshot& snapshot) {
  std::string out;
  for (const auto& p : snapshot.pairs) {
    out += p.pair + ": " + fixed(p.fps, 1) + " fps";
    out += "  drops";
    for (std::size_t i = 0; i < stats::kDropReasons; ++i) {
      out += " " + std::string(stats::drop_reason_name(static_cast<stats::DropReason>(i))) + "=" +
             std::to_string(p.drops[i]);
    }
    out += " (since start";
    for (std::size_t i = 0; i < stats::kDropReasons; ++i) {
      out += " " + std::string(stats::drop_reason_name(static_cast<stats::DropReason>(i))) + "=" +
             std::to_string(p.drops_total[i]);
    }
    out += ")";
    for (const auto& st : p.latency) {
      if (st.latency.count == 0) continue;
      out += "  " + st.stage + " p50 " + fixed(st.latency.p50, 1) + " p99 " +
             fixed(st.latency.p99, 1) + " ms";
    }
    if (!p.last_error.empty()) out += "  last error: " + p.last_error;
    out += "\n";
  }
  const auto& q = snapshot.publisher;
  out += "publisher: queued " + std::to_string(q.queued) + "/" + std::to_string(q.queue_capacity) +
         ", sent " + std::to_string(q.frames_sent_total) + ", payloads zero-copy " +
         std::to_string(q.zero_copy_payloads_total) + " copied " +
         std::to_string(q.copied_payloads_total) + "\n";
  return out;
}

const char* const kSavedFiles =
    "With --save DIR, each frame becomes DIR/<pair>_<sequence> followed by:\n"
    "  _header.json       the frame's header (docs/PROTOCOL.md)\n"
    "  _disparity.png     16-bit disparity, 16 x d pixels, 65535 = none\n"
    "  _color.png         the disparity, colorized (black = none), with a color bar in metres\n"
    "                     (in pixels for a pair without a camera model)\n"
    "  _depth_color.png   depth, colorized, with a color bar in metres (pairs with a camera "
    "model)\n"
    "  _depth.png         16-bit depth in millimetres, 0 = none (when the pair sends depth)\n"
    "  _points.ply        the point cloud, x y z metres in the left camera's frame, colored\n"
    "                     when the pair sends the left image (pairs with a camera model)\n"
    "  _left.png          the rectified left image (when the pair sends it)\n"
    "  _mask.png          the foreground mask, 255 = foreground (when the pair sends it)\n"
    "  _confidence.png    matching confidence, 0 = none, 255 = most certain (when sent)\n"
    "What a pair sends is its configuration's outputs: section (docs/CONFIG.md).";

void save_frame(const std::string& dir, const client::Frame& frame) {
  const auto& h = frame.header();
  char seq[32];
  std::snprintf(seq, sizeof seq, "%08llu", static_cast<unsigned long long>(h.info.sequence));
  const std::string base = dir + "/" + h.info.pair + "_" + seq;
  {
    std::ofstream json(base + "_header.json");
    json << frame.header_json() << "\n";
    if (!json) throw std::runtime_error(base + "_header.json: cannot write");
  }
  if (!h.ok()) return;
  const auto disparity = frame.disparity();
  const publish::DepthCalibration& camera = h.info.calibration;
  write_png16(base + "_disparity.png", packed(disparity));
  write_rgb(base + "_color.png",
            disparity_picture(disparity, h.info.min_disparity, h.info.max_disparity, camera));
  if (!frame.mask().empty()) write_png8(base + "_mask.png", packed(frame.mask()));
  if (!frame.depth().empty()) write_png16(base + "_depth.png", packed(frame.depth()));
  double near_m = 0, far_m = 0;
  if (depth_range(disparity, camera, near_m, far_m)) {
    write_rgb(base + "_depth_color.png", depth_picture(disparity, camera, near_m, far_m));
  }
  const auto left = frame.left();
  if (frame.left_channels() == 3) {
    RgbImage rgb;
    rgb.resize(left.width / 3, left.height);
    for (int y = 0; y < left.height; ++y)
      std::copy(left.row(y), left.row(y) + left.width, rgb.row(y));
    write_rgb(base + "_left.png", rgb);
  } else if (frame.left_channels() == 1) {
    write_png8(base + "_left.png", packed(left));
  }
  if (!frame.confidence().empty()) write_png8(base + "_confidence.png", packed(frame.confidence()));
  save_points(base + "_points.ply", frame);
}

std::size_t save_points(const std::string& path, const client::Frame& frame) {
  const auto& info = frame.header().info;
  const std::string comment = "stereod pair " + info.pair + " sequence " +
                              std::to_string(info.sequence) + ", metres, left camera frame";
  if (frame.points_channels() > 0) {
    return write_ply(path, frame.points(), frame.points_channels(), comment);
  }
  if (!info.calibration.usable()) return 0;
  // No points payload: the same points from the disparity and the camera model, colored by the
  // left image when the frame has one.
  const auto d = frame.disparity();
  const auto left = frame.left();
  const int channels = frame.left_channels() > 0 ? 4 : 3;
  std::vector<float> points(static_cast<std::size_t>(d.width) * d.height * channels);
  publish::disparity_to_points(
      d, info.calibration, ImageView<float>(points.data(), d.width * channels, d.height), channels,
      frame.left_channels() == 1 ? left : ImageView<const std::uint8_t>{},
      frame.left_channels() == 3 ? left : ImageView<const std::uint8_t>{});
  return write_ply(path, ImageView<const float>(points.data(), d.width * channels, d.height),
                   channels, comment);
}

}  // namespace stereod::sub
