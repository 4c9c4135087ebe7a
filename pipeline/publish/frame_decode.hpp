// Decoding a whole received frame message: the topic, the header, and views of the payloads that
// point into the message parts (no copy). Independent of ZeroMQ: a part is a byte range.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "image.hpp"
#include "publish/protocol.hpp"

namespace stereod::publish {

struct DecodedFrame {
  std::string topic;
  FrameHeader header;
  // One byte range per header.payloads entry, in the same order (parts 3, 4, ...).
  std::vector<std::string_view> payload_bytes;
  // Typed views of the payloads this decoder knows (empty when the frame has none of that kind).
  ImageView<const std::uint16_t> disparity;  // disp16q4
  ImageView<const std::uint8_t> mask;        // mask8
  ImageView<const std::uint16_t> depth;      // depth16mm
  // Since 1.3.
  ImageView<const std::uint8_t> confidence;  // confidence8
  // The rectified left image: gray8 (left_channels 1), or rgb8 (left_channels 3: the view's
  // width is 3 x the image's, R G B interleaved); left_channels 0 when the frame has none.
  ImageView<const std::uint8_t> left;
  int left_channels = 0;
  // The point cloud: xyz32f (points_channels 3: X Y Z per pixel, so the view's width is 3 x the
  // image's) or xyzrgb32f (points_channels 4: X Y Z and the packed color's bits); NaN = none.
  ImageView<const float> points;
  int points_channels = 0;
};

// Validates a frame message: the topic names the header's pair, the header decodes, the number of
// parts matches the payloads the header names, each part has exactly stride * height bytes, and
// 16-bit payloads start on a 2-byte boundary (the caller copies a misaligned part first, see
// needs_realignment). The views and byte ranges point into `parts`, which must outlive them.
// Throws ProtocolError saying what was wrong and where ("part 3 (disparity): ...").
DecodedFrame decode_frame(const std::vector<std::string_view>& parts);

// True when a received part's bytes must be copied to aligned storage before decode_frame can
// view them as 16-bit or 32-bit samples (ZeroMQ may hand out small messages at any address).
bool needs_realignment(const void* data);

}  // namespace stereod::publish
