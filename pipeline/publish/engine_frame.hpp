// From an engine's result to what the Publisher sends: the pixels with the result's hold as their
// keep-alive (so the engine slot returns once the publisher thread has copied them into its
// message), and the header facts the result carries, with the stage names docs/PROTOCOL.md lists.
#pragma once

#include "engine.hpp"
#include "publish/published_frame.hpp"

namespace stereod::publish {

// `info` holds what only the daemon knows (pair, cameras, complete_ns, calibration, disparity
// range, background, config generation, engine name, a "sync" stage); this adds the sequence,
// capture time, status, levels, whether the background model decided the frame, the foreground
// mask and the confidence (sent when the outputs ask for them), and the stages "upload", "compute",
// "download" and "engine" from the result, and sets ready_ns to now when the caller left it 0.
// With the background model active it also counts foreground_without_disparity.
PublishedFrame frame_from_result(const EngineResult& result, FrameInfo info);

// Pixels the mask calls foreground (non-zero) whose disparity is kInvalidDisparity.
std::int64_t foreground_without_disparity(ImageView<const std::uint16_t> disparity,
                                          ImageView<const std::uint8_t> foreground);

}  // namespace stereod::publish
