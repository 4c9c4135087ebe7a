// The GStreamer launch description of one camera's branch: its source (per URI scheme), then
// conversion to the configured size, rate and format inside GStreamer, ending in one appsink that
// never blocks capture. Pure string building, so every scheme's pipeline can be checked without
// the hardware.
//
//   <source> ! videorate [drop-only=true] ! videoscale ! videoconvert
//            ! video/x-raw,format=GRAY8,width=W,height=H,framerate=F [! identity sync=true]
//            ! appsink name=stereod_gray sync=false max-buffers=2 drop=true
//
// A color camera delivers RGB only (format=RGB, appsink stereod_rgb): the engines derive the gray
// they match from it (BT.601 luma), so GStreamer converts each frame once. A color camera with a
// raw_format (UYVY, NV12) delivers that format to the same appsink instead: its engine converts
// it (on the GPU with the CUDA engine), and videoconvert only acts when the source delivers
// another format. Video files (file://),
// test://?live=false and gst:// descriptions pass through `identity sync=true`, which paces them
// to the pipeline clock at their own timestamps. images:// cameras are an appsrc and a decoder:
// the rig's ImageFeeder pushes their files, paced and in lockstep (image_feeder.hpp). A gst://
// description whose sources all turn out to be live is not paced (the rig switches the identity's
// sync off): it would only add the source's latency. synthetic:// cameras and replays
// (replay_source.hpp) are an appsrc of raw frames straight into the appsink.
#pragma once

#include <string>

#include "ingest/camera_config.hpp"
#include "ingest/source_uri.hpp"

namespace stereod {

// Element names inside a camera's bin.
constexpr const char* kGraySinkName = "stereod_gray";       // gray cameras
constexpr const char* kColorSinkName = "stereod_rgb";       // color cameras
constexpr const char* kPaceName = "stereod_pace";           // identity sync=true
constexpr const char* kRawSrcName = "stereod_src_raw";      // synthetic:// and replays: raw frames
constexpr const char* kImageSrcName = "stereod_src_image";  // images:// (encoded files)

// The source elements, ending where raw video (any format, size and rate) comes out; not for
// synthetic:// and replays, whose appsrc is part of camera_branch_description.
std::string source_fragment(const CameraConfig& camera, const SourceUri& uri);

// The whole branch, for gst_parse_bin_from_description.
std::string camera_branch_description(const CameraConfig& camera, const SourceUri& uri);

// Caps of what the appsinks deliver: "video/x-raw,format=GRAY8,width=640,height=480,
// framerate=30/1".
std::string raw_caps(const char* format, const CameraConfig& camera);

// A property value quoted for a launch description (spaces, quotes and backslashes survive).
std::string quote_gst_value(const std::string& value);

}  // namespace stereod
