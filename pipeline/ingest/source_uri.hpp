// Camera source URIs, in the ecosystem's habit (jetson-utils, GStreamer):
//
//   v4l2:///dev/video0                   USB / V4L2 camera
//   csi://0?sensor_mode=2&flip=0         Jetson CSI camera (nvarguscamerasrc sensor-id=0)
//   rtsp://host:554/stream#latency=100   network camera; stereod's options after '#', so the
//                                        URL (query included) reaches the camera untouched
//   file:///data/left.mkv                video file (file://relative/path: from the working dir)
//   images:///data/left_%06d.png?start=1 numbered PNG or JPEG images (&replay=N: the first N
//                                        decoded once, then served from memory in a loop)
//   test://?pattern=ball                 GStreamer's videotestsrc
//   synthetic://left?objects=3&seed=1    the built-in synthetic scene with ground truth
//                                        (&replay=N: frames 0..N-1 rendered once, then looped)
//   gst://v4l2src device=/dev/video2 ! videoflip method=rotate-180
//                                        any GStreamer launch description ending in raw video
//
// Parsing checks everything that can be checked without opening the source: the scheme, the
// location's form and every option's name and value. Errors name the URI and what is wrong.
#pragma once

#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace stereod {

enum class SourceScheme { kV4l2, kCsi, kRtsp, kFile, kImages, kTest, kSynthetic, kGst };

class SourceUriError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

struct SourceUri {
  SourceScheme scheme = SourceScheme::kTest;
  std::string uri;       // as given
  std::string location;  // device path, sensor id, RTSP URL, file path or pattern (percent-
                         // decoded), synthetic view, or the launch description
  std::map<std::string, std::string> options;  // checked names and values

  // Typed access to a checked option, or `fallback` when it was not given.
  long long option_int(const std::string& key, long long fallback) const;
  double option_double(const std::string& key, double fallback) const;
  bool option_bool(const std::string& key, bool fallback) const;
  std::string option(const std::string& key, const std::string& fallback) const;

  // Live sources deliver at their own pace; a disconnect (end of stream) is a fault. Files and
  // image sequences are paced to the clock, and their end is the end of the recording.
  bool is_file() const { return scheme == SourceScheme::kFile || scheme == SourceScheme::kImages; }
};

// Throws SourceUriError naming the URI and the problem; an unknown scheme lists the known ones.
SourceUri parse_source_uri(const std::string& uri);

const char* scheme_name(SourceScheme scheme);
// "v4l2, csi, rtsp, file, images, test, synthetic, gst"
std::string known_schemes();

// The URI with any user:password@ of a network URL hidden, for logs.
std::string redact_uri(const std::string& uri);

}  // namespace stereod
