// What the daemon hands the Publisher for one result: the header's facts and views of the
// pixels, each with the keep-alive that keeps its buffer valid. The Publisher sends a view without
// copying when its rows are packed and it has a keep-alive; the ZeroMQ message then owns a
// reference to the keep-alive and drops it when ZeroMQ is done with the bytes. A view without a
// keep-alive is copied inside publish(), so its buffer need only outlive that call.
#pragma once

#include <cstdint>
#include <memory>

#include "image.hpp"
#include "publish/protocol.hpp"

namespace stereod::publish {

struct PublishedFrame {
  // Every header field but the payload layouts and publish_ns (the Publisher adds those, and the
  // "publish" and "total" latency stages). info.error non-empty = a failed frame: no pixels.
  FrameInfo info;

  // Left-reference disparity, 16*d, 0xFFFF = none (an EngineResult's `disparity`).
  ImageView<const std::uint16_t> disparity;
  // Keeps disparity's pixels valid, e.g. the EngineResult's `hold`. Released on whichever thread
  // drops the last reference: the caller's, the publisher thread, or ZeroMQ's I/O thread, so its
  // deleter must be thread-safe, must not block, and must not call into ZeroMQ.
  std::shared_ptr<const void> disparity_keep_alive;

  // Foreground mask (0 = background, else foreground); empty when the frame has none.
  ImageView<const std::uint8_t> mask;
  std::shared_ptr<const void> mask_keep_alive;

  // Trinocular pairs: which pair won each pixel (kDirectionEncoding); empty for other pairs.
  ImageView<const std::uint8_t> direction;
  std::shared_ptr<const void> direction_keep_alive;
};

}  // namespace stereod::publish
