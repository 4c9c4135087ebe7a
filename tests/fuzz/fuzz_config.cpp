// Fuzz target: the daemon's configuration loader (config/), on any text. Properties:
//  - it returns a configuration or throws ConfigError with at least one issue, each with a message,
//    at most 101 issues (never crashes, never throws anything else);
//  - what it accepts, the daemon can run (issue 15: "anything --check accepts, the daemon runs"):
//    every rig passes the ingest checks the RigSource makes, every pair's stereo parameters fit its
//    cameras, the publisher options validate, and a frame header of every pair, with its cameras'
//    names, is one the publisher sends.
#include <string>

#include "daemon_config.hpp"
#include "fuzz_target.hpp"
#include "ingest/camera_config.hpp"
#include "publish/protocol.hpp"
#include "publish/publisher_options.hpp"
#include "stereo/params.hpp"

using namespace stereod;
using fuzz::require;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  DaemonConfig c;
  try {
    // Relative calibration files resolve in the examples folder, where one exists.
    c = parse_daemon_config(text, "fuzz.yaml", STEREOD_CONFIG_DIR "/examples");
  } catch (const ConfigError& e) {
    require(!e.issues().empty(), "a ConfigError lists its issues");
    require(e.issues().size() <= 101, "at most 100 issues and a count of the rest");
    for (const auto& issue : e.issues()) require(!issue.message.empty(), "an issue says what");
    return 0;
  }
  require(!c.pairs.empty() && !c.rigs.empty(), "an accepted configuration has pairs and rigs");
  for (const auto& rig : c.rigs) require(validate_rig(rig).empty(), "its rigs can start");
  try {
    publish::validate_publisher_options(c.publish);
  } catch (const std::exception&) {
    require(false, "its publisher options are valid");
  }
  for (const auto& p : c.pairs) {
    const CameraConfig* left = c.camera(p.left);
    const CameraConfig* right = c.camera(p.right);
    require(left && right, "a pair's cameras exist");
    try {
      validate_for_images(p.stereo, left->width, left->height, right->width, right->height);
    } catch (const std::exception&) {
      require(false, "a pair's stereo parameters fit its cameras");
    }
    publish::FrameInfo info;
    info.pair = p.name;
    info.cameras = {{left->name, 1}, {right->name, 2}};
    info.max_disparity = p.stereo.max_disparity;
    try {
      publish::check_frame_info(info);
    } catch (const std::exception&) {
      require(false, "a pair's frames can be published");
    }
  }
  return 0;
}
