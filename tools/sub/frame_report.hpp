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
// valid share and range (which costs a pass over the image: many pairs at full rate).
std::string frame_line(const client::Frame& frame, std::int64_t receive_ns, bool summary = true);

// One line per pair (fps, drops by reason in the interval and since start, p50 and p99 per
// stage), then one for the publisher.
std::string stats_lines(const stats::StatsSnapshot& snapshot);

// Writes DIR/<pair>_<sequence>_{disparity.png (16-bit, 16*d), color.png, header.json} and, when
// the frame has them, _mask.png and _depth.png (16-bit millimetres). Throws std::runtime_error
// naming the file that could not be written.
void save_frame(const std::string& dir, const client::Frame& frame);

}  // namespace stereod::sub
