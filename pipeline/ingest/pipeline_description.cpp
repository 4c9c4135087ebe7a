#include "ingest/pipeline_description.hpp"

#include <cctype>

namespace stereod {
namespace {

std::string appsink(const char* name) {
  // sync=false: deliver as soon as a frame exists; max-buffers=2 drop=true: a slow consumer
  // loses the oldest frames instead of stalling capture; no last-sample: no buffer held back.
  return std::string("appsink name=") + name +
         " sync=false max-buffers=2 drop=true enable-last-sample=false qos=false";
}

bool paced(const SourceUri& uri) {
  return uri.scheme == SourceScheme::kFile || uri.scheme == SourceScheme::kGst ||
         (uri.scheme == SourceScheme::kTest && !uri.option_bool("live", true));
}

std::string lower_extension(const std::string& path) {
  const std::size_t dot = path.rfind('.');
  std::string ext = dot == std::string::npos ? "" : path.substr(dot + 1);
  for (char& c : ext) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return ext;
}

std::string v4l2_source(const CameraConfig& cam, const SourceUri& uri) {
  std::string s = "v4l2src device=" + quote_gst_value(uri.location);
  const std::string size_rate = ",width=" + std::to_string(cam.width) +
                                ",height=" + std::to_string(cam.height) +
                                ",framerate=" + cam.fps.to_string();
  if (cam.source_format == "MJPG" || cam.source_format == "JPEG") {
    s += " ! image/jpeg" + size_rate + " ! jpegdec";
  } else if (!cam.source_format.empty()) {
    s += " ! video/x-raw,format=" + cam.source_format + size_rate;
  }
  return s;
}

std::string csi_source(const CameraConfig& cam, const SourceUri& uri) {
  std::string s = "nvarguscamerasrc sensor-id=" + uri.location;
  const long long mode = uri.option_int("sensor_mode", -1);
  if (mode >= 0) s += " sensor-mode=" + std::to_string(mode);
  // The ISP delivers NVMM (device) memory; nvvidconv scales on the VIC and brings the frame to
  // system memory, already gray when no color is wanted.
  s += " ! video/x-raw(memory:NVMM),width=" + std::to_string(cam.width) +
       ",height=" + std::to_string(cam.height) + ",framerate=" + cam.fps.to_string();
  s += " ! nvvidconv flip-method=" + std::to_string(uri.option_int("flip", 0));
  s += std::string(" ! video/x-raw,format=") + (cam.color ? "RGBA" : "GRAY8");
  return s;
}

}  // namespace

std::string quote_gst_value(const std::string& value) {
  std::string q = "\"";
  for (char c : value) {
    if (c == '"' || c == '\\') q += '\\';
    q += c;
  }
  return q + "\"";
}

std::string raw_caps(const char* format, const CameraConfig& cam) {
  return std::string("video/x-raw,format=") + format + ",width=" + std::to_string(cam.width) +
         ",height=" + std::to_string(cam.height) + ",framerate=" + cam.fps.to_string();
}

std::string source_fragment(const CameraConfig& cam, const SourceUri& uri) {
  switch (uri.scheme) {
    case SourceScheme::kV4l2:
      return v4l2_source(cam, uri);
    case SourceScheme::kCsi:
      return csi_source(cam, uri);
    case SourceScheme::kRtsp: {
      std::string s = "rtspsrc location=" + quote_gst_value(uri.location) +
                      " latency=" + std::to_string(uri.option_int("latency", 200));
      if (!uri.option("protocols", "").empty()) s += " protocols=" + uri.option("protocols", "");
      return s + " ! decodebin";
    }
    case SourceScheme::kFile:
      return "filesrc location=" + quote_gst_value(uri.location) + " ! decodebin";
    case SourceScheme::kImages: {
      // The rig's ImageFeeder pushes the files, timestamped, in lockstep for every camera.
      const bool png = lower_extension(uri.location) == "png";
      return std::string("appsrc name=") + kImageSrcName +
             " is-live=true format=time do-timestamp=false caps=" +
             quote_gst_value(std::string(png ? "image/png" : "image/jpeg") +
                             ",framerate=(fraction)" + cam.fps.to_string()) +
             (png ? " ! pngdec" : " ! jpegdec");
    }
    case SourceScheme::kTest: {
      std::string s = "videotestsrc is-live=";
      s += uri.option_bool("live", true) ? "true" : "false";
      s += " pattern=" + uri.option("pattern", "smpte");
      if (uri.options.count("num_buffers")) {
        s += " num-buffers=" + std::to_string(uri.option_int("num_buffers", 0));
      }
      if (uri.options.count("horizontal_speed")) {
        s += " horizontal-speed=" + std::to_string(uri.option_int("horizontal_speed", 0));
      }
      return s;
    }
    case SourceScheme::kGst:
      return uri.location;
    case SourceScheme::kSynthetic:
      break;
  }
  return "";
}

std::string camera_branch_description(const CameraConfig& cam, const SourceUri& uri) {
  // A raw format (UYVY, NV12) is what the engine converts: videoconvert passes such frames
  // through untouched when the source delivers that format already.
  const char* format = !cam.raw_format.empty() ? cam.raw_format.c_str()
                       : cam.color             ? "RGB"
                                               : "GRAY8";
  const std::string sink = appsink(cam.color ? kColorSinkName : kGraySinkName);
  const bool replay =
      (uri.scheme == SourceScheme::kSynthetic || uri.scheme == SourceScheme::kImages) &&
      uri.option_int("replay", 0) > 0;
  if (uri.scheme == SourceScheme::kSynthetic || replay) {
    // Frames come ready-made at the configured size, rate and format, timestamped by the feeder:
    // no conversion, so they reach the appsink bit for bit as made.
    return std::string("appsrc name=") + kRawSrcName +
           " is-live=true format=time do-timestamp=false caps=" +
           quote_gst_value(raw_caps(format, cam)) + " ! " + sink;
  }
  // A live source's extra frames are dropped, never invented. A recording is resampled onto
  // the configured rate's exact time grid: drop-only would also drop frames whose timestamps
  // were rounded a nanosecond early (multifilesrc adds up rounded durations).
  // Image files come from the rig's feeder at the configured rate already.
  const bool fed = uri.scheme == SourceScheme::kImages;
  const char* rate = fed ? "" : uri.is_file() ? " ! videorate" : " ! videorate drop-only=true";
  std::string s =
      source_fragment(cam, uri) + rate + " ! videoscale ! videoconvert ! " + raw_caps(format, cam);
  if (paced(uri)) s += std::string(" ! identity name=") + kPaceName + " sync=true";
  return s + " ! " + sink;
}

}  // namespace stereod
