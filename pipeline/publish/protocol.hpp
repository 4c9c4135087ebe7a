// The wire protocol's frame header (docs/PROTOCOL.md is the contract).
// A frame is one multipart ZeroMQ message:
//   1. topic "disparity.<pair>"
//   2. header: UTF-8 JSON, encoded and decoded here
//   3. disparity payload (when the frame is ok)
//   4... the optional payloads the header's "payloads" list names, in that order
// The structs below are both what the publisher encodes and what a client decodes, so a round
// trip is exact.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "publish/json_reader.hpp"

namespace stereod::publish {

// Major: a client rejects a header whose major differs from its own. Minor: additions only (new
// fields, new payloads, new stages); a client accepts any minor and ignores what it does not know.
constexpr int kProtocolMajor = 1;
// 1.1 added source_index, 1.2 the "wait" latency stage, 1.3 the principal point and fy, the
// confidence, left image, point cloud and (trinocular pairs) direction payloads, and
// foreground_without_disparity.
constexpr int kProtocolMinor = 3;

constexpr std::string_view kFrameTopicPrefix = "disparity.";
constexpr std::string_view kStatsTopic = "stats";

// Payload encodings. Every payload is `height` rows of `stride` bytes, little-endian.
constexpr std::string_view kDisparityEncoding = "disp16q4";  // uint16, 16*d, 0xFFFF = none
constexpr std::string_view kMaskEncoding = "mask8";          // uint8, 0 = background, else fg
constexpr std::string_view kDepthEncoding = "depth16mm";     // uint16 millimetres, 0 = none
// Since 1.3.
constexpr std::string_view kConfidenceEncoding = "confidence8";  // uint8, 0 = none, 255 = best
constexpr std::string_view kGrayEncoding = "gray8";              // uint8 luma
constexpr std::string_view kRgbEncoding = "rgb8";                // 3 x uint8: R, G, B
constexpr std::string_view kPointsEncoding = "xyz32f";           // 3 x float32 metres, NaN = none
// 3 x float32 metres, then the color as uint32 0x00RRGGBB (PCL's packed "rgb").
constexpr std::string_view kColorPointsEncoding = "xyzrgb32f";
// uint8, which pair of a trinocular rig gave the pixel its disparity: 0 none, 1 the horizontal
// pair, 2 the vertical pair.
constexpr std::string_view kDirectionEncoding = "direction8";
constexpr std::uint32_t kDisparityInvalid = 0xFFFF;
constexpr std::uint32_t kDepthInvalid = 0;
constexpr std::uint32_t kConfidenceInvalid = 0;

constexpr std::string_view kDisparityPayload = "disparity";
constexpr std::string_view kMaskPayload = "mask";
constexpr std::string_view kDepthPayload = "depth";
constexpr std::string_view kConfidencePayload = "confidence";  // since 1.3
constexpr std::string_view kLeftPayload = "left";              // since 1.3
constexpr std::string_view kPointsPayload = "points";          // since 1.3
constexpr std::string_view kDirectionPayload = "direction";    // since 1.3 (trinocular pairs)

// Bytes per pixel of an encoding this version knows; 0 for one it does not.
std::size_t encoding_pixel_bytes(std::string_view encoding);

// Limits a decoder enforces so that sizes computed from a header cannot overflow.
constexpr int kMaxImageSide = 1 << 15;
constexpr std::uint64_t kMaxStride = std::uint64_t{1} << 20;
constexpr std::size_t kMaxHeaderBytes = 64 * 1024;
// Pair, camera, payload and stage names: 1 to this many bytes.
constexpr std::size_t kMaxNameBytes = 256;

struct CameraTime {
  std::string name;             // the camera's name in the configuration
  std::int64_t capture_ns = 0;  // CLOCK_REALTIME nanoseconds
};

struct StageLatency {
  std::string stage;  // e.g. "sync", "upload", "compute", "download", "engine", "publish"
  double ms = 0;
};

// The rectified camera pair (docs/PROTOCOL.md "From disparity to depth"): for a left-reference
// disparity d (pixels) at pixel (x, y) the point in the left camera's frame (x right, y down, z
// along the optical axis, metres) is
//   Z = focal_px * baseline_m / (d - doffs_px),  X = (x - cx_px) Z / focal_px,
//   Y = (y - cy_px) Z / fy_px.
struct DepthCalibration {
  double focal_px = 0;    // fx; 0 when the pair has no camera model
  double baseline_m = 0;  // 0 when the pair has no camera model
  double doffs_px = 0;    // cx_left - cx_right of the rectified cameras (Middlebury: -doffs)
  // Since 1.3 (a header of 1.2 or older: fy_px = focal_px and the image's centre).
  double fy_px = 0;
  double cx_px = 0;  // principal point of the rectified left camera; (0, 0) is the centre of
  double cy_px = 0;  // the top-left pixel
  bool usable() const { return focal_px > 0 && baseline_m > 0; }
  // Metres for a disparity in pixels; NaN when the pair has no camera model or d <= doffs_px.
  double depth_m(double disparity_px) const;
};

// Everything the header says about a frame except the layout of its payloads: what the daemon
// knows about a result, and hands to the publisher.
struct FrameInfo {
  std::string pair;
  std::uint64_t sequence = 0;   // the rig's frame-set number; a jump means frames were lost
  std::string error;            // empty: the frame is ok; else why it failed (it has no payloads)
  std::int64_t capture_ns = 0;  // the reference (left) camera's capture time, CLOCK_REALTIME
  std::vector<CameraTime> cameras;  // every camera of the pair, reference first
  std::int64_t complete_ns = 0;     // when the frame set was complete (0: not known)
  std::int64_t ready_ns = 0;        // when the engine's result was ready
  std::vector<StageLatency> latency;
  DepthCalibration calibration;
  int min_disparity = 0;  // search range in pixels: min_disparity <= d < max_disparity
  int max_disparity = 0;
  bool background = false;  // background modeling was active for this frame
  std::uint64_t config_generation = 0;
  std::string engine;  // "cpu" | "cuda"
  int levels = 0;      // pyramid levels the matcher used
  // Since 1.1: the source's own frame number (synthetic:// cameras: the scene's frame index, so a
  // subscriber can render the ground truth); -1 when the source has none (the field is omitted).
  std::int64_t source_index = -1;
  // Since 1.3: with background modeling active, how many foreground pixels (the published mask)
  // have no disparity; -1 otherwise (the field is omitted).
  std::int64_t foreground_without_disparity = -1;
};

struct PayloadLayout {
  std::string name;      // "disparity", "mask", "depth", or a later addition
  std::string encoding;  // one of the k*Encoding values, or a later addition
  int width = 0;
  int height = 0;
  std::uint64_t stride = 0;              // bytes from one row to the next
  std::optional<std::uint32_t> invalid;  // the "no value" value, when the encoding has one

  std::uint64_t bytes() const { return stride * static_cast<std::uint64_t>(height); }
};

struct FrameHeader {
  int version_major = kProtocolMajor;
  int version_minor = kProtocolMinor;
  FrameInfo info;
  std::int64_t publish_ns = 0;  // when the publisher sent the frame, CLOCK_REALTIME
  // Message parts 3, 4, ... in order. An ok frame's first payload is the disparity; a failed
  // frame has none.
  std::vector<PayloadLayout> payloads;

  bool ok() const { return info.error.empty(); }
  // The payload of that name, or nullptr.
  const PayloadLayout* find(std::string_view name) const;
};

std::string frame_topic(std::string_view pair);

// Now on the protocol's clock: CLOCK_REALTIME nanoseconds since the Unix epoch.
std::int64_t realtime_ns();

// The "version" object every message's JSON starts with (frame headers and stats alike).
struct ProtocolVersion {
  int major = kProtocolMajor;
  int minor = kProtocolMinor;
};
// Reads r's "version"; throws ProtocolError when the major version is not this one.
ProtocolVersion read_protocol_version(const JsonReader& r);
Json protocol_version_json();

// Throws std::invalid_argument, naming the frame and the field, when `info` breaks a rule that
// decode_header enforces (empty or overlong names, negative times, non-finite or negative
// calibration, a stage named twice, disparity range out of order, too many cameras or stages), so
// that every header the publisher sends decodes.
void check_frame_info(const FrameInfo& info);

// The header's JSON text. An ok frame's first payload is its disparity. The caller has checked
// the info (check_frame_info) and the layouts.
std::string encode_header(const FrameHeader& header);

// Parses and validates a header: version, every field's presence, type and range, and the payload
// layouts' internal consistency (sizes against message parts are checked by decode_frame).
// Throws ProtocolError naming the field.
FrameHeader decode_header(std::string_view json);

bool operator==(const CameraTime& a, const CameraTime& b);
bool operator==(const StageLatency& a, const StageLatency& b);
bool operator==(const DepthCalibration& a, const DepthCalibration& b);
bool operator==(const FrameInfo& a, const FrameInfo& b);
bool operator==(const PayloadLayout& a, const PayloadLayout& b);
bool operator==(const FrameHeader& a, const FrameHeader& b);

}  // namespace stereod::publish
