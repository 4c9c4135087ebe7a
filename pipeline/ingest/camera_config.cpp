#include "ingest/camera_config.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <numeric>
#include <set>
#include <stdexcept>

#include "ingest/source_uri.hpp"
#include "ingest/synthetic_source.hpp"

namespace stereod {
namespace {

constexpr int kMinSide = 2;
constexpr int kMaxSide = 16384;
constexpr double kMaxRate = 1000.0;

std::string synthetic_view(const SourceUri& uri, std::size_t index) {
  switch (synthetic_view_of(uri, index)) {
    case SyntheticViewKind::kRight:
      return "right";
    case SyntheticViewKind::kVertical:
      return "vertical (above or below)";
    case SyntheticViewKind::kLeft:
      break;
  }
  return "left";
}

void check_synthetic_rig(const RigConfig& rig, const std::vector<SourceUri>& uris,
                         std::vector<IngestIssue>& issues) {
  if (rig.cameras.size() > 3) {
    issues.push_back({rig.name, "cameras",
                      "a synthetic rig has one to three cameras (the scene's left and right "
                      "views, and a third above or below the left one)"});
    return;
  }
  // What the scene itself refuses (e.g. max_disparity not below half the width), checked here so
  // that a configuration the loader accepts is one the rig can start.
  try {
    validate_synthetic_options(synthetic_options(rig.cameras[0], uris[0]));
  } catch (const std::invalid_argument& e) {
    issues.push_back({rig.cameras[0].name, "uri", e.what()});
  }
  std::set<std::string> views;
  for (std::size_t i = 0; i < uris.size(); ++i) {
    const auto& cam = rig.cameras[i];
    if (!views.insert(synthetic_view(uris[i], i)).second) {
      issues.push_back({cam.name, "uri",
                        "two synthetic cameras of rig '" + rig.name + "' show the " +
                            synthetic_view(uris[i], i) + " view"});
    }
    if (i == 0) continue;
    // One generator renders both views: they must agree on everything it uses.
    const auto& first = rig.cameras[0];
    if (uris[i].options != uris[0].options) {
      issues.push_back({cam.name, "uri",
                        "synthetic options differ from camera '" + first.name +
                            "' of the same rig (one scene renders both views)"});
    }
    if (cam.width != first.width || cam.height != first.height) {
      issues.push_back({cam.name, "width",
                        "a synthetic rig's cameras must have one size (camera '" + first.name +
                            "' is " + std::to_string(first.width) + "x" +
                            std::to_string(first.height) + ")"});
    }
    if (cam.fps.num != first.fps.num || cam.fps.den != first.fps.den) {
      issues.push_back({cam.name, "fps",
                        "a synthetic rig's cameras must have one frame rate (camera '" +
                            first.name + "' has " + first.fps.to_string() + ")"});
    }
  }
}

// A replaying rig's cameras replay together (the same number of frames), and what they hold in
// memory has a bound.
void check_replay(const RigConfig& rig, const std::vector<SourceUri>& uris,
                  std::vector<IngestIssue>& issues) {
  const long long count = uris[0].option_int("replay", 0);
  for (std::size_t i = 1; i < uris.size(); ++i) {
    if (uris[i].option_int("replay", 0) != count) {
      issues.push_back({rig.cameras[i].name, "uri",
                        "replay=" + std::to_string(uris[i].option_int("replay", 0)) +
                            " differs from camera '" + rig.cameras[0].name + "' (replay=" +
                            std::to_string(count) + "): a rig's cameras replay together"});
    }
  }
  if (count <= 0) return;
  std::uint64_t bytes = 0;
  for (const auto& cam : rig.cameras) {
    // GStreamer's rows are padded to 4 bytes.
    const std::uint64_t row =
        (static_cast<std::uint64_t>(cam.width) * (cam.color ? 3 : 1) + 3) / 4 * 4;
    bytes += row * static_cast<std::uint64_t>(cam.height) * static_cast<std::uint64_t>(count);
  }
  if (bytes > kMaxReplayBytes) {
    issues.push_back({rig.cameras[0].name, "uri",
                      "replay=" + std::to_string(count) + " would hold " +
                          std::to_string(bytes >> 20) +
                          " MiB of frames in memory; a rig may hold " +
                          std::to_string(kMaxReplayBytes >> 20) + " MiB (replay fewer frames)"});
  }
}

}  // namespace

std::string name_problem(const std::string& name) {
  const bool plain = std::all_of(name.begin(), name.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.';
  });
  if (!name.empty() && name.size() <= kMaxNameLength && plain) return "";
  std::string why = "expected a name of 1 to " + std::to_string(kMaxNameLength) +
                    " letters, digits, '_', '-' or '.'";
  if (name.size() > kMaxNameLength) why += ", got " + std::to_string(name.size()) + " characters";
  return why;
}

std::int64_t FrameRate::interval_ns() const {
  return num > 0 ? static_cast<std::int64_t>(1000000000LL) * den / num : 0;
}

std::string FrameRate::to_string() const {
  return std::to_string(num) + "/" + std::to_string(den);
}

FrameRate parse_frame_rate(const std::string& text) {
  const auto bad = [&](const std::string& why) -> std::invalid_argument {
    return std::invalid_argument("frame rate \"" + text + "\": " + why);
  };
  const std::size_t slash = text.find('/');
  if (slash != std::string::npos) {
    errno = 0;
    char* end = nullptr;
    const long num = std::strtol(text.c_str(), &end, 10);
    if (end != text.c_str() + slash) throw bad("expected N/D with integers");
    const char* den_start = text.c_str() + slash + 1;
    const long den = std::strtol(den_start, &end, 10);
    if (end == den_start || *end != '\0' || errno != 0) throw bad("expected N/D with integers");
    if (num <= 0 || den <= 0 || num > 1000000 || den > 1000000) throw bad("out of range");
    return {static_cast<int>(num), static_cast<int>(den)};
  }
  errno = 0;
  char* end = nullptr;
  const double hz = std::strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0' || errno != 0) throw bad("expected a number or N/D");
  if (!(hz > 0) || hz > kMaxRate) throw bad("expected a rate in (0, 1000] frames per second");
  const double whole = std::round(hz);
  if (std::abs(hz - whole) < 1e-9) return {static_cast<int>(whole), 1};
  // NTSC-style rates (29.97, 59.94, 23.976) are n*1000/1001.
  const double ntsc = std::round(hz * 1.001);
  if (std::abs(hz - ntsc * 1000.0 / 1001.0) < 0.005) return {static_cast<int>(ntsc) * 1000, 1001};
  const int num = static_cast<int>(std::round(hz * 1000.0));
  const int g = std::gcd(num, 1000);
  return {num / g, 1000 / g};
}

std::int64_t RigConfig::effective_sync_tolerance_ns() const {
  if (sync_tolerance_ns >= 0) return sync_tolerance_ns;
  std::int64_t shortest = 0;
  for (const auto& cam : cameras) {
    const std::int64_t interval = cam.fps.interval_ns();
    if (interval > 0 && (shortest == 0 || interval < shortest)) shortest = interval;
  }
  return shortest / 2;
}

std::string IngestIssue::to_string() const {
  std::string s = "camera '" + camera + "': ";
  if (!key.empty()) s += key + ": ";
  return s + message;
}

std::string to_string(const std::vector<IngestIssue>& issues) {
  std::string s;
  for (const auto& issue : issues) s += (s.empty() ? "" : "\n") + issue.to_string();
  return s;
}

std::vector<IngestIssue> validate_camera(const CameraConfig& cam) {
  std::vector<IngestIssue> issues;
  const std::string& who = cam.name;
  if (const std::string why = name_problem(cam.name); !why.empty()) {
    issues.push_back({who, "name", why});
  }
  SourceUri uri;
  bool uri_ok = false;
  try {
    uri = parse_source_uri(cam.uri);
    uri_ok = true;
  } catch (const SourceUriError& e) {
    issues.push_back({who, "uri", e.what()});
  }
  const auto side = [&](int v, const char* key) {
    if (v < kMinSide || v > kMaxSide) {
      issues.push_back({who, key,
                        std::to_string(v) + " is out of range [" + std::to_string(kMinSide) + ", " +
                            std::to_string(kMaxSide) + "]"});
    }
  };
  side(cam.width, "width");
  side(cam.height, "height");
  if (cam.fps.num <= 0 || cam.fps.den <= 0 || cam.fps.hz() > kMaxRate) {
    issues.push_back({who, "fps", cam.fps.to_string() + " is not a rate in (0, 1000] per second"});
  }
  if (!cam.source_format.empty()) {
    if (uri_ok && uri.scheme != SourceScheme::kV4l2) {
      issues.push_back({who, "source_format", "only v4l2:// cameras take a source format"});
    }
    const bool plain = std::all_of(cam.source_format.begin(), cam.source_format.end(), [](char c) {
      return std::isupper(static_cast<unsigned char>(c)) ||
             std::isdigit(static_cast<unsigned char>(c)) || c == '_';
    });
    if (!plain) {
      issues.push_back({who, "source_format",
                        "\"" + cam.source_format +
                            "\": expected a GStreamer format name such as YUY2, NV12, GRAY8 "
                            "or MJPG"});
    }
  }
  if (!cam.raw_format.empty()) {
    if (cam.raw_format != "UYVY" && cam.raw_format != "NV12") {
      issues.push_back({who, "raw_format",
                        "\"" + cam.raw_format +
                            "\": expected UYVY or NV12 (the formats the "
                            "engines convert), or leave it out to have GStreamer convert to RGB"});
    } else if (!cam.color) {
      issues.push_back({who, "raw_format",
                        "only color cameras take a raw format (set color: true, or leave "
                        "raw_format out: a gray camera's frames are converted to GRAY8)"});
    } else if (uri_ok &&
               (uri.scheme == SourceScheme::kSynthetic || uri.scheme == SourceScheme::kImages ||
                uri.scheme == SourceScheme::kCsi)) {
      issues.push_back({who, "raw_format",
                        "not for " + cam.uri.substr(0, cam.uri.find(':')) +
                            ":// cameras (they deliver RGB); only v4l2, test, gst, rtsp and "
                            "file sources"});
    } else if (cam.width % 2 != 0 || (cam.raw_format == "NV12" && cam.height % 2 != 0)) {
      issues.push_back({who, "raw_format",
                        cam.raw_format + " needs an even width" +
                            (cam.raw_format == "NV12" ? " and height" : "") + ", the camera is " +
                            std::to_string(cam.width) + "x" + std::to_string(cam.height)});
    }
  }
  return issues;
}

std::vector<IngestIssue> validate_rig(const RigConfig& rig) {
  std::vector<IngestIssue> issues;
  if (const std::string why = name_problem(rig.name); !why.empty()) {
    issues.push_back({rig.name, "rig name", why});
  }
  if (rig.cameras.empty()) issues.push_back({rig.name, "cameras", "a rig needs a camera"});
  std::set<std::string> names;
  std::vector<SourceUri> uris;
  bool all_parsed = true;
  for (const auto& cam : rig.cameras) {
    auto cam_issues = validate_camera(cam);
    issues.insert(issues.end(), cam_issues.begin(), cam_issues.end());
    if (!names.insert(cam.name).second) {
      issues.push_back({cam.name, "name", "used twice in rig '" + rig.name + "'"});
    }
    try {
      uris.push_back(parse_source_uri(cam.uri));
    } catch (const SourceUriError&) {
      all_parsed = false;  // already reported
    }
  }
  if (rig.sync_max_pending < 1 || rig.sync_max_pending > 64) {
    issues.push_back({rig.name, "sync.max_pending", "out of range [1, 64]"});
  }
  if (rig.restart.initial.count() <= 0 || rig.restart.max < rig.restart.initial) {
    issues.push_back({rig.name, "restart", "expected 0 < initial backoff <= maximum backoff"});
  }
  if (!all_parsed || uris.empty()) return issues;

  const auto& first = rig.cameras[0];
  for (std::size_t i = 1; i < uris.size(); ++i) {
    const auto& cam = rig.cameras[i];
    if (uris[i].is_file() != uris[0].is_file()) {
      issues.push_back({cam.name, "uri",
                        "rig '" + rig.name +
                            "' mixes recordings (file://, images://) with live cameras: they "
                            "cannot be synchronised; give them separate rigs"});
    } else if (uris[i].is_file() && cam.loop != first.loop) {
      issues.push_back(
          {cam.name, "loop",
           "differs from camera '" + first.name + "': a rig's recordings loop or end together"});
    }
    const bool images = uris[i].scheme == SourceScheme::kImages;
    if (images != (uris[0].scheme == SourceScheme::kImages) && uris[i].is_file() &&
        uris[0].is_file()) {
      issues.push_back({cam.name, "uri",
                        "rig '" + rig.name +
                            "' mixes images:// with file://: a rig's image sequences are read "
                            "in lockstep, number by number; give them separate rigs"});
    }
    const bool synthetic = uris[i].scheme == SourceScheme::kSynthetic;
    if (synthetic != (uris[0].scheme == SourceScheme::kSynthetic)) {
      issues.push_back({cam.name, "uri",
                        "rig '" + rig.name +
                            "' mixes synthetic:// with other sources (one generator drives a "
                            "synthetic rig)"});
    }
  }
  if (uris[0].scheme == SourceScheme::kSynthetic) check_synthetic_rig(rig, uris, issues);
  check_replay(rig, uris, issues);
  return issues;
}

int replay_count(const RigConfig& rig) {
  if (rig.cameras.empty()) return 0;
  try {
    const SourceUri uri = parse_source_uri(rig.cameras[0].uri);
    if (uri.scheme != SourceScheme::kSynthetic && uri.scheme != SourceScheme::kImages) return 0;
    return static_cast<int>(uri.option_int("replay", 0));
  } catch (const SourceUriError&) {
    return 0;
  }
}

std::string check_pair_sizes(const CameraConfig& left, const CameraConfig& right) {
  if (left.width == right.width && left.height == right.height) return "";
  return "cameras '" + left.name + "' (" + std::to_string(left.width) + "x" +
         std::to_string(left.height) + ") and '" + right.name + "' (" +
         std::to_string(right.width) + "x" + std::to_string(right.height) +
         ") form a pair but deliver different sizes";
}

}  // namespace stereod
