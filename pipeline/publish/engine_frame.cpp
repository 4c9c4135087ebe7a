#include "publish/engine_frame.hpp"

namespace stereod::publish {

PublishedFrame frame_from_result(const EngineResult& r, FrameInfo info) {
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
    info.background = r.background_active;
  } else {
    info.error = r.error.empty() ? "the engine failed this frame without saying why" : r.error;
  }
  f.info = std::move(info);
  return f;
}

}  // namespace stereod::publish
