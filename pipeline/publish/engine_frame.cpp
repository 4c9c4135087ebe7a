#include "publish/engine_frame.hpp"

#include "stereo/pixel_ops.hpp"

namespace stereod::publish {

std::int64_t foreground_without_disparity(ImageView<const std::uint16_t> disparity,
                                          ImageView<const std::uint8_t> foreground) {
  // Runs on the daemon's main thread for every published frame of every pair: branch-free with a
  // 32-bit count per row, so that it vectorises (5x faster than a 64-bit && count: 0.11 against
  // 0.55 ms for 1280x720, which at 32 pairs of 30 frames/s took half of the main thread).
  std::int64_t n = 0;
  for (int y = 0; y < foreground.height; ++y) {
    const std::uint8_t* m = foreground.row(y);
    const std::uint16_t* d = disparity.row(y);
    std::uint32_t row = 0;
    for (int x = 0; x < foreground.width; ++x) {
      row += static_cast<std::uint32_t>((m[x] != 0) & (d[x] == kInvalidDisparity));
    }
    n += row;
  }
  return n;
}

PublishedFrame frame_from_result(const EngineResult& r, FrameInfo info, bool count_foreground) {
  PublishedFrame f;
  info.sequence = r.sequence;
  info.capture_ns = r.capture_time_ns;
  info.levels = r.levels_used;
  if (info.ready_ns == 0) info.ready_ns = realtime_ns();
  const StageTimings& t = r.timings;
  info.latency.push_back({"upload", t.upload_ms});
  if (t.wait_ms > 0) info.latency.push_back({"wait", t.wait_ms});
  info.latency.push_back({"compute", t.compute_ms});
  info.latency.push_back({"download", t.download_ms});
  info.latency.push_back({"engine", t.total_ms});
  if (r.ok) {
    f.disparity = r.disparity;
    f.disparity_keep_alive = r.hold;
    // The foreground mask lives in the same slot: the same hold keeps it.
    if (!r.foreground.empty()) {
      f.mask = r.foreground;
      f.mask_keep_alive = r.hold;
    }
    if (!r.direction.empty()) {
      f.direction = r.direction;
      f.direction_keep_alive = r.hold;
    }
    if (!r.confidence.empty()) {
      f.confidence = r.confidence;
      f.confidence_keep_alive = r.hold;
    }
    info.background = r.background_active;
    if (count_foreground && r.background_active && !r.foreground.empty()) {
      info.foreground_without_disparity = foreground_without_disparity(r.disparity, r.foreground);
    }
  } else {
    info.error = r.error.empty() ? "the engine failed this frame without saying why" : r.error;
  }
  f.info = std::move(info);
  return f;
}

}  // namespace stereod::publish
