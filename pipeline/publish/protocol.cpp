#include "publish/protocol.hpp"

#include <chrono>
#include <cmath>
#include <limits>
#include <set>
#include <stdexcept>

namespace stereod::publish {
namespace {

constexpr std::int64_t kMaxInt64 = std::numeric_limits<std::int64_t>::max();
constexpr std::size_t kMaxCameras = 16;
constexpr std::size_t kMaxStages = 64;
constexpr std::size_t kMaxPayloads = 16;
constexpr int kMaxDisparity = 0xFFFE / 16;  // the largest d that disp16q4 can hold
constexpr int kMaxLevels = 32;

// Bytes per sample (the alignment a row start needs): 2 for 16-bit encodings, 4 for float ones.
std::size_t sample_size(std::string_view encoding) {
  if (encoding == kDisparityEncoding || encoding == kDepthEncoding) return 2;
  if (encoding == kPointsEncoding || encoding == kColorPointsEncoding) return 4;
  return 1;
}

std::string name_field(const JsonReader& r, std::string_view key) {
  std::string s = r.string(key);
  if (s.empty() || s.size() > kMaxNameBytes) {
    throw ProtocolError(r.path_of(key) + ": expected 1 to " + std::to_string(kMaxNameBytes) +
                        " characters, got " + std::to_string(s.size()));
  }
  return s;
}

// The size fields shared by the top-level disparity description and each "payloads" entry.
void read_layout(const JsonReader& r, PayloadLayout& p) {
  p.width = static_cast<int>(r.integer("width", 1, kMaxImageSide));
  p.height = static_cast<int>(r.integer("height", 1, kMaxImageSide));
  p.stride = r.unsigned_integer("stride");
  // An encoding this decoder does not know: only that rows hold whole bytes.
  const std::uint64_t row = static_cast<std::uint64_t>(p.width) * encoding_pixel_bytes(p.encoding);
  if (p.stride < row || p.stride > kMaxStride || p.stride == 0) {
    throw ProtocolError(r.path_of("stride") + ": " + std::to_string(p.stride) +
                        " bytes does not fit a row of " + std::to_string(p.width) + " " +
                        p.encoding + " pixels (expected " + std::to_string(row) + " to " +
                        std::to_string(kMaxStride) + ")");
  }
  const std::size_t sample = sample_size(p.encoding);
  if (sample > 1 && p.stride % sample != 0) {
    throw ProtocolError(r.path_of("stride") + ": " + std::to_string(p.stride) +
                        " bytes is not a whole number of " + std::to_string(sample) +
                        "-byte samples");
  }
}

void write_layout(Json& j, const PayloadLayout& p) {
  j["width"] = p.width;
  j["height"] = p.height;
  j["stride"] = p.stride;
  j["encoding"] = p.encoding;
  if (p.invalid) j["invalid"] = *p.invalid;
}

// The "invalid" value of an encoding that fixes it: required, and must be that value.
void read_fixed_invalid(const JsonReader& r, PayloadLayout& p, std::uint32_t expected) {
  const auto v = static_cast<std::uint32_t>(r.integer("invalid", 0, 0xFFFFFFFFLL));
  if (v != expected) {
    throw ProtocolError(r.path_of("invalid") + ": " + p.encoding + " marks missing values with " +
                        std::to_string(expected) + ", the header says " + std::to_string(v));
  }
  p.invalid = v;
}

std::optional<std::uint32_t> optional_invalid(const JsonReader& r) {
  if (!r.has("invalid")) return std::nullopt;
  return static_cast<std::uint32_t>(r.integer("invalid", 0, 0xFFFFFFFFLL));
}

void read_status(const JsonReader& r, FrameHeader& h) {
  const std::string status = r.string("status");
  if (status == "ok") return;
  if (status != "error") {
    throw ProtocolError(r.path_of("status") + ": expected \"ok\" or \"error\", got \"" +
                        printable(status) + "\"");
  }
  h.info.error = r.string("error");
  if (h.info.error.empty()) throw ProtocolError(r.path_of("error") + ": empty for a failed frame");
}

void read_cameras(const JsonReader& r, FrameInfo& f) {
  const Json& cameras = r.array("cameras", kMaxCameras);
  for (std::size_t i = 0; i < cameras.size(); ++i) {
    const JsonReader c = r.element("cameras", i);
    f.cameras.push_back({name_field(c, "name"), c.integer("capture_ns", 0, kMaxInt64)});
  }
}

void read_latency(const JsonReader& r, FrameInfo& f) {
  const JsonReader l = r.object("latency_ms", kMaxStages);
  for (auto it = l.json().begin(); it != l.json().end(); ++it) {
    f.latency.push_back({it.key(), l.number(it.key())});
  }
}

// `width`, `height`: the disparity's size (0 for a failed frame), for the principal point of a
// header older than 1.3.
void read_calibration(const JsonReader& r, int minor, int width, int height, DepthCalibration& c) {
  c.focal_px = r.number("focal_px");
  c.baseline_m = r.number("baseline_m");
  c.doffs_px = r.number("doffs_px");
  if (c.focal_px < 0) throw ProtocolError(r.path_of("focal_px") + ": negative");
  if (c.baseline_m < 0) throw ProtocolError(r.path_of("baseline_m") + ": negative");
  if (minor < 3) {
    c.fy_px = c.focal_px;
    c.cx_px = width > 0 ? (width - 1) / 2.0 : 0.0;
    c.cy_px = height > 0 ? (height - 1) / 2.0 : 0.0;
    return;
  }
  c.fy_px = r.number("fy_px");
  c.cx_px = r.number("cx_px");
  c.cy_px = r.number("cy_px");
  if (c.fy_px < 0) throw ProtocolError(r.path_of("fy_px") + ": negative");
}

PayloadLayout read_disparity_layout(const JsonReader& r) {
  PayloadLayout p;
  p.name = std::string(kDisparityPayload);
  p.encoding = r.string("encoding");
  if (p.encoding != kDisparityEncoding) {
    throw ProtocolError(r.path_of("encoding") + ": \"" + printable(p.encoding) +
                        "\" is not a disparity encoding this client reads (" +
                        std::string(kDisparityEncoding) + ")");
  }
  read_layout(r, p);
  read_fixed_invalid(r, p, kDisparityInvalid);
  return p;
}

void read_payloads(const JsonReader& r, FrameHeader& h) {
  const Json& list = r.array("payloads", kMaxPayloads);
  if (!h.ok() && !list.empty()) {
    throw ProtocolError(r.path_of("payloads") + ": a failed frame carries no payloads");
  }
  std::set<std::string> names;
  for (std::size_t i = 0; i < list.size(); ++i) {
    const JsonReader e = r.element("payloads", i);
    PayloadLayout p;
    p.name = name_field(e, "name");
    if (p.name == kDisparityPayload || !names.insert(p.name).second) {
      throw ProtocolError(e.path_of("name") + ": \"" + printable(p.name) +
                          "\" appears twice in the frame");
    }
    p.encoding = name_field(e, "encoding");
    read_layout(e, p);
    if (p.encoding == kDepthEncoding) {
      read_fixed_invalid(e, p, kDepthInvalid);
    } else if (p.encoding == kConfidenceEncoding) {
      read_fixed_invalid(e, p, kConfidenceInvalid);
    } else {
      p.invalid = optional_invalid(e);
    }
    h.payloads.push_back(std::move(p));
  }
}

}  // namespace

ProtocolVersion read_protocol_version(const JsonReader& r) {
  const JsonReader v = r.object("version");
  ProtocolVersion out;
  out.major = static_cast<int>(v.integer("major", 0, 1 << 16));
  out.minor = static_cast<int>(v.integer("minor", 0, 1 << 16));
  if (out.major != kProtocolMajor) {
    throw ProtocolError(v.path() + ": protocol " + std::to_string(out.major) + "." +
                        std::to_string(out.minor) + " is not supported (this client reads " +
                        std::to_string(kProtocolMajor) + ".x)");
  }
  return out;
}

Json protocol_version_json() {
  return {{"major", kProtocolMajor}, {"minor", kProtocolMinor}};
}

std::size_t encoding_pixel_bytes(std::string_view encoding) {
  if (encoding == kDisparityEncoding || encoding == kDepthEncoding) return 2;
  if (encoding == kMaskEncoding || encoding == kConfidenceEncoding || encoding == kGrayEncoding ||
      encoding == kDirectionEncoding) {
    return 1;
  }
  if (encoding == kRgbEncoding) return 3;
  if (encoding == kPointsEncoding) return 12;
  if (encoding == kColorPointsEncoding) return 16;
  return 0;
}

double DepthCalibration::depth_m(double disparity_px) const {
  const double d = disparity_px - doffs_px;
  if (!usable() || !(d > 0)) return std::numeric_limits<double>::quiet_NaN();
  return focal_px * baseline_m / d;
}

const PayloadLayout* FrameHeader::find(std::string_view name) const {
  for (const auto& p : payloads) {
    if (p.name == name) return &p;
  }
  return nullptr;
}

void check_frame_info(const FrameInfo& f) {
  const std::string what = "frame " + printable(f.pair) + "#" + std::to_string(f.sequence) + ": ";
  auto fail = [&](const std::string& why) { throw std::invalid_argument(what + why); };
  auto check_name = [&](const std::string& name, const std::string& field) {
    if (name.empty() || name.size() > kMaxNameBytes) {
      fail(field + " must have 1 to " + std::to_string(kMaxNameBytes) + " characters");
    }
  };
  check_name(f.pair, "pair");
  if (f.capture_ns < 0 || f.complete_ns < 0 || f.ready_ns < 0) fail("a time is negative");
  if (f.cameras.size() > kMaxCameras) fail("more than 16 cameras");
  for (const auto& c : f.cameras) {
    check_name(c.name, "camera name");
    if (c.capture_ns < 0) fail("camera " + c.name + ": capture time is negative");
  }
  if (f.latency.size() > kMaxStages) fail("more than 64 latency stages");
  std::set<std::string> stages;
  for (const auto& s : f.latency) {
    check_name(s.stage, "latency stage name");
    if (!stages.insert(s.stage).second) fail("latency stage \"" + s.stage + "\" appears twice");
    if (!std::isfinite(s.ms)) fail("latency stage \"" + s.stage + "\" is not finite");
  }
  const DepthCalibration& c = f.calibration;
  if (!std::isfinite(c.focal_px) || !std::isfinite(c.baseline_m) || !std::isfinite(c.doffs_px) ||
      !std::isfinite(c.fy_px) || !std::isfinite(c.cx_px) || !std::isfinite(c.cy_px) ||
      c.focal_px < 0 || c.baseline_m < 0 || c.fy_px < 0) {
    fail("calibration must be finite with focal_px, fy_px and baseline_m >= 0");
  }
  if (f.min_disparity < 0 || f.min_disparity > kMaxDisparity || f.max_disparity < f.min_disparity ||
      f.max_disparity > kMaxDisparity + 1) {
    fail("disparity range " + std::to_string(f.min_disparity) + ".." +
         std::to_string(f.max_disparity) + " is not within 0.." +
         std::to_string(kMaxDisparity + 1));
  }
  if (f.levels < 0 || f.levels > kMaxLevels) fail("levels must be in 0..32");
}

std::int64_t realtime_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string frame_topic(std::string_view pair) {
  return std::string(kFrameTopicPrefix) + std::string(pair);
}

std::string encode_header(const FrameHeader& h) {
  const FrameInfo& f = h.info;
  Json j;
  j["version"] = {{"major", h.version_major}, {"minor", h.version_minor}};
  j["pair"] = f.pair;
  j["sequence"] = f.sequence;
  j["status"] = h.ok() ? "ok" : "error";
  if (!h.ok()) j["error"] = f.error;
  // The disparity's layout sits at the top level (docs/PROTOCOL.md lists it there); the rest go in
  // "payloads".
  if (h.ok() && !h.payloads.empty()) write_layout(j, h.payloads.front());
  j["capture_ns"] = f.capture_ns;
  Json cameras = Json::array();
  for (const auto& c : f.cameras)
    cameras.push_back({{"name", c.name}, {"capture_ns", c.capture_ns}});
  j["cameras"] = std::move(cameras);
  j["complete_ns"] = f.complete_ns;
  j["ready_ns"] = f.ready_ns;
  j["publish_ns"] = h.publish_ns;
  Json latency = Json::object();
  for (const auto& s : f.latency) latency[s.stage] = s.ms;
  j["latency_ms"] = std::move(latency);
  j["focal_px"] = f.calibration.focal_px;
  j["baseline_m"] = f.calibration.baseline_m;
  j["doffs_px"] = f.calibration.doffs_px;
  j["fy_px"] = f.calibration.fy_px;
  j["cx_px"] = f.calibration.cx_px;
  j["cy_px"] = f.calibration.cy_px;
  j["min_disparity"] = f.min_disparity;
  j["max_disparity"] = f.max_disparity;
  j["background"] = f.background;
  j["config_generation"] = f.config_generation;
  j["engine"] = f.engine;
  j["levels"] = f.levels;
  if (f.source_index >= 0) j["source_index"] = f.source_index;
  if (f.foreground_without_disparity >= 0) {
    j["foreground_without_disparity"] = f.foreground_without_disparity;
  }
  Json payloads = Json::array();
  for (std::size_t i = h.ok() ? 1 : 0; i < h.payloads.size(); ++i) {
    Json p;
    p["name"] = h.payloads[i].name;
    write_layout(p, h.payloads[i]);
    payloads.push_back(std::move(p));
  }
  j["payloads"] = std::move(payloads);
  return j.dump(-1, ' ', false, Json::error_handler_t::replace);
}

FrameHeader decode_header(std::string_view json) {
  const Json j = parse_json_object(json, "header", kMaxHeaderBytes);
  const JsonReader r(j, "header");
  FrameHeader h;
  // The version first: a header of another major version may lack any of the other fields.
  const ProtocolVersion version = read_protocol_version(r);
  h.version_major = version.major;
  h.version_minor = version.minor;
  FrameInfo& f = h.info;
  f.pair = name_field(r, "pair");
  f.sequence = r.unsigned_integer("sequence");
  read_status(r, h);
  if (h.ok()) h.payloads.push_back(read_disparity_layout(r));
  f.capture_ns = r.integer("capture_ns", 0, kMaxInt64);
  read_cameras(r, f);
  f.complete_ns = r.integer("complete_ns", 0, kMaxInt64);
  f.ready_ns = r.integer("ready_ns", 0, kMaxInt64);
  h.publish_ns = r.integer("publish_ns", 0, kMaxInt64);
  read_latency(r, f);
  const int width = h.ok() ? h.payloads.front().width : 0;
  const int height = h.ok() ? h.payloads.front().height : 0;
  read_calibration(r, version.minor, width, height, f.calibration);
  f.min_disparity = static_cast<int>(r.integer("min_disparity", 0, kMaxDisparity));
  f.max_disparity = static_cast<int>(r.integer("max_disparity", 0, kMaxDisparity + 1));
  if (f.max_disparity < f.min_disparity) {
    throw ProtocolError("header.max_disparity: " + std::to_string(f.max_disparity) +
                        " is below min_disparity " + std::to_string(f.min_disparity));
  }
  f.background = r.boolean("background");
  f.config_generation = r.unsigned_integer("config_generation");
  f.engine = r.string("engine");
  f.levels = static_cast<int>(r.integer("levels", 0, kMaxLevels));
  if (r.has("source_index")) f.source_index = r.integer("source_index", 0, kMaxInt64);
  if (r.has("foreground_without_disparity")) {
    f.foreground_without_disparity = r.integer("foreground_without_disparity", 0, kMaxInt64);
  }
  read_payloads(r, h);
  return h;
}

bool operator==(const CameraTime& a, const CameraTime& b) {
  return a.name == b.name && a.capture_ns == b.capture_ns;
}
bool operator==(const StageLatency& a, const StageLatency& b) {
  return a.stage == b.stage && a.ms == b.ms;
}
bool operator==(const DepthCalibration& a, const DepthCalibration& b) {
  return a.focal_px == b.focal_px && a.baseline_m == b.baseline_m && a.doffs_px == b.doffs_px &&
         a.fy_px == b.fy_px && a.cx_px == b.cx_px && a.cy_px == b.cy_px;
}
bool operator==(const FrameInfo& a, const FrameInfo& b) {
  return a.pair == b.pair && a.sequence == b.sequence && a.error == b.error &&
         a.capture_ns == b.capture_ns && a.cameras == b.cameras && a.complete_ns == b.complete_ns &&
         a.ready_ns == b.ready_ns && a.latency == b.latency && a.calibration == b.calibration &&
         a.min_disparity == b.min_disparity && a.max_disparity == b.max_disparity &&
         a.background == b.background && a.config_generation == b.config_generation &&
         a.engine == b.engine && a.levels == b.levels && a.source_index == b.source_index &&
         a.foreground_without_disparity == b.foreground_without_disparity;
}
bool operator==(const PayloadLayout& a, const PayloadLayout& b) {
  return a.name == b.name && a.encoding == b.encoding && a.width == b.width &&
         a.height == b.height && a.stride == b.stride && a.invalid == b.invalid;
}
bool operator==(const FrameHeader& a, const FrameHeader& b) {
  return a.version_major == b.version_major && a.version_minor == b.version_minor &&
         a.info == b.info && a.publish_ns == b.publish_ns && a.payloads == b.payloads;
}

}  // namespace stereod::publish
