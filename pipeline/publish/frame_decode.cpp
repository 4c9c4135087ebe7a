#include "publish/frame_decode.hpp"

#include <cstdint>
#include <string>

namespace stereod::publish {
namespace {

std::string part_name(std::size_t index, const PayloadLayout& p) {
  return "part " + std::to_string(index + 1) + " (" + p.name + ")";
}

// `channels` samples of T per pixel.
template <typename T>
ImageView<const T> view_of(std::string_view bytes, const PayloadLayout& p, std::size_t index,
                           int channels = 1) {
  if (reinterpret_cast<std::uintptr_t>(bytes.data()) % alignof(T) != 0) {
    throw ProtocolError(part_name(index, p) + ": data is not aligned to " +
                        std::to_string(alignof(T)) + " bytes");
  }
  return {reinterpret_cast<const T*>(bytes.data()), p.width * channels, p.height,
          static_cast<std::ptrdiff_t>(p.stride / sizeof(T))};
}

}  // namespace

bool needs_realignment(const void* data) {
  return reinterpret_cast<std::uintptr_t>(data) % alignof(float) != 0;
}

DecodedFrame decode_frame(const std::vector<std::string_view>& parts) {
  if (parts.size() < 2) {
    throw ProtocolError("message: " + std::to_string(parts.size()) +
                        " part(s), a frame has at least a topic and a header");
  }
  DecodedFrame f;
  f.header = decode_header(parts[1]);
  const FrameHeader& h = f.header;
  const std::string expected_topic = frame_topic(h.info.pair);
  if (parts[0] != expected_topic) {
    throw ProtocolError("part 1 (topic): \"" + printable(parts[0]) +
                        "\" does not match the header's pair (\"" + expected_topic +
                        "\" expected)");
  }
  f.topic = expected_topic;
  const std::size_t expected_parts = 2 + h.payloads.size();
  if (parts.size() != expected_parts) {
    throw ProtocolError("message: " + std::to_string(parts.size()) + " parts, the header names " +
                        std::to_string(h.payloads.size()) + " payload(s) so " +
                        std::to_string(expected_parts) + " were expected");
  }
  for (std::size_t i = 0; i < h.payloads.size(); ++i) {
    const PayloadLayout& p = h.payloads[i];
    const std::string_view bytes = parts[2 + i];
    if (bytes.size() != p.bytes()) {
      throw ProtocolError(part_name(2 + i, p) + ": " + std::to_string(bytes.size()) +
                          " bytes, the header says " + std::to_string(p.height) + " rows of " +
                          std::to_string(p.stride) + " = " + std::to_string(p.bytes()));
    }
    f.payload_bytes.push_back(bytes);
    if (p.name == kDisparityPayload && p.encoding == kDisparityEncoding) {
      f.disparity = view_of<std::uint16_t>(bytes, p, 2 + i);
    } else if (p.name == kMaskPayload && p.encoding == kMaskEncoding) {
      f.mask = view_of<std::uint8_t>(bytes, p, 2 + i);
    } else if (p.name == kDepthPayload && p.encoding == kDepthEncoding) {
      f.depth = view_of<std::uint16_t>(bytes, p, 2 + i);
    } else if (p.name == kConfidencePayload && p.encoding == kConfidenceEncoding) {
      f.confidence = view_of<std::uint8_t>(bytes, p, 2 + i);
    } else if (p.name == kLeftPayload &&
               (p.encoding == kGrayEncoding || p.encoding == kRgbEncoding)) {
      f.left_channels = p.encoding == kGrayEncoding ? 1 : 3;
      f.left = view_of<std::uint8_t>(bytes, p, 2 + i, f.left_channels);
    } else if (p.name == kPointsPayload &&
               (p.encoding == kPointsEncoding || p.encoding == kColorPointsEncoding)) {
      f.points_channels = p.encoding == kPointsEncoding ? 3 : 4;
      f.points = view_of<float>(bytes, p, 2 + i, f.points_channels);
    }
  }
  return f;
}

}  // namespace stereod::publish
