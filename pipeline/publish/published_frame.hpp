// What the daemon hands the Publisher for one result: the header's facts and views of the
// pixels, each with the keep-alive that keeps its buffer valid. The publisher thread copies the
// pixels into the message it sends and then drops the keep-alive, so a buffer is held only while
// its frame waits in the publisher's queue, never by a subscriber that reads slowly or not at
// all. A view without a keep-alive is copied inside publish(), so its buffer need only outlive
// that call.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>

#include "image.hpp"
#include "publish/protocol.hpp"
#include "publish/publisher_options.hpp"

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

  // Since protocol 1.3.
  // Which optional payloads to send (the pair's outputs); unset: the Publisher's (set_outputs).
  std::optional<PublisherOutputs> outputs;
  // The engine's matching confidence (confidence8: 0 = none, 255 = most certain); empty when the
  // engine computes none.
  ImageView<const std::uint8_t> confidence;
  std::shared_ptr<const void> confidence_keep_alive;
  // The rectified left image, for the "left" payload and the colors of "xyzrgb32f" points: gray,
  // and/or color (interleaved R G B, so the view is 3 x the image's width). Either may be empty.
  ImageView<const std::uint8_t> left_gray;
  ImageView<const std::uint8_t> left_color;
  std::shared_ptr<const void> left_keep_alive;  // keeps both
  // Trinocular pairs: which pair won each pixel (kDirectionEncoding); empty for other pairs.
  ImageView<const std::uint8_t> direction;
  std::shared_ptr<const void> direction_keep_alive;
};

}  // namespace stereod::publish
