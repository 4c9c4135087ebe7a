// Fuzz target: what a subscriber decodes (the C++ client's decoder: pipeline/publish/): a frame
// message of any parts, a header alone, a stats message. The input is split into message parts:
// byte 0 gives the number of parts (1 to 8), then each part but the last is a 2-byte little-endian
// length and its bytes; the last part is what remains. Properties: decoding succeeds or throws
// ProtocolError (never crashes, never reads outside a part: AddressSanitizer watches), and what it
// accepts is consistent: one byte range per payload of stride x height bytes, views inside them.
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_target.hpp"
#include "publish/frame_decode.hpp"
#include "publish/json_reader.hpp"
#include "publish/protocol.hpp"
#include "stats/stats.hpp"
#include "touch.hpp"

using namespace stereod;
using fuzz::require;
using test::touch;

namespace {

std::vector<std::string> split_parts(const std::uint8_t* data, std::size_t size) {
  std::vector<std::string> parts;
  if (size == 0) return parts;
  const std::size_t count = 1 + data[0] % 8;
  std::size_t at = 1;
  for (std::size_t i = 0; i + 1 < count && at + 2 <= size; ++i) {
    const std::size_t length = data[at] | (static_cast<std::size_t>(data[at + 1]) << 8);
    at += 2;
    const std::size_t take = std::min(length, size - at);
    parts.emplace_back(reinterpret_cast<const char*>(data + at), take);
    at += take;
  }
  parts.emplace_back(reinterpret_cast<const char*>(data + at), size - at);
  return parts;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  // Every part in storage of its own, as ZeroMQ hands them out (aligned; a misaligned one the
  // client copies first).
  const std::vector<std::string> storage = split_parts(data, size);
  std::vector<std::string_view> parts(storage.begin(), storage.end());
  try {
    const publish::DecodedFrame f = publish::decode_frame(parts);
    require(f.payload_bytes.size() == f.header.payloads.size(), "one byte range per payload");
    for (std::size_t i = 0; i < f.payload_bytes.size(); ++i) {
      require(f.payload_bytes[i].size() == f.header.payloads[i].bytes(),
              "a payload has stride x height bytes");
    }
    require(f.header.ok() == !f.disparity.empty(), "an ok frame has its disparity");
    static_cast<void>(touch(f.disparity) + touch(f.mask) + touch(f.depth));
  } catch (const publish::ProtocolError&) {
  }
  const std::string_view whole(reinterpret_cast<const char*>(data), size);
  try {
    const publish::FrameHeader h = publish::decode_header(whole);
    // What decodes encodes again to a header that decodes to the same thing.
    require(publish::decode_header(publish::encode_header(h)) == h, "headers round-trip");
  } catch (const publish::ProtocolError&) {
  }
  try {
    static_cast<void>(stats::decode_stats(whole));
  } catch (const publish::ProtocolError&) {
  }
  return 0;
}
