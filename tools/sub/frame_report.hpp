// What stereod-sub prints and saves for a received frame or stats message.
#pragma once

#include <cstdint>
#include <string>

#include "image.hpp"
#include "stats/stats.hpp"
#include "stereod_client.hpp"

namespace stereod::sub {

struct DisparitySummary {
  double valid_percent = 0;
  double min_d = 0;  // over valid pixels, in pixels; 0 when none is valid
  double max_d = 0;
};
DisparitySummary summarize_disparity(ImageView<const std::uint16_t> disparity);

// "front #1234  latency 12.3 ms  publish 4.56 ms  valid 87.2 %  d 0.50..63.75 px", or the frame's
// error: latency is capture -> receive_ns (CLOCK_REALTIME when the frame arrived), publish is
// capture -> the daemon's send (the header's publish_ns). `summary` false: without the disparity's
// valid share and range (which costs a pass over the image: many pairs at full rate). Where the
// header counts them, "  fg without d 123" follows: foreground pixels left without a disparity.
std::string frame_line(const client::Frame& frame, std::int64_t receive_ns, bool summary = true);
// The same from a header and its disparity (empty unless `summary`).
std::string frame_line(const publish::FrameHeader& header, ImageView<const std::uint16_t> disparity,
                       std::int64_t receive_ns, bool summary);

// One line per pair (fps, drops by reason in the interval and since start, p50 and p99 per
// stage), then one for the publisher.
std::string stats_lines(const stats::StatsSnapshot& snapshot);

// What `stereod-sub --save DIR` writes for a frame (kSavedFiles lists them), DIR/<pair>_<sequence>
// followed by _header.json, _disparity.png, _color.png and, when the frame has what they need,
// _mask.png, _depth.png, _depth_color.png, _left.png, _confidence.png and _points.ply. Throws
// std::runtime_error naming the file that could not be written.
void save_frame(const std::string& dir, const client::Frame& frame);

// The frame's point cloud as PLY: the points payload, or else the points computed from the
// disparity and the header's camera model (colored by the left image when the frame has one).
// Writes nothing and returns 0 when the pair has no camera model; else the number of points.
std::size_t save_points(const std::string& path, const client::Frame& frame);

// The files save_frame writes, one line each ("_color.png  the disparity, colorized, with ..."),
// for stereod-sub --help.
extern const char* const kSavedFiles;

}  // namespace stereod::sub
