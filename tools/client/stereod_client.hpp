// A small C++ client for stereod's stream (docs/PROTOCOL.md). Receives frames and stats, validates
// them, and hands out the decoded header with views of the payloads (no copy, except for a payload
// ZeroMQ delivered at an odd address, which is copied to aligned storage first).
//
//   stereod::client::Subscriber sub("ipc:///run/stereod/stereod.sock");
//   while (auto msg = sub.receive(std::chrono::seconds(1))) {
//     if (!msg->frame) continue;  // a stats message
//     const auto& h = msg->frame->header();
//     stereod::ImageView<const std::uint16_t> d = msg->frame->disparity();  // 16*d, 0xFFFF = none
//   }
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <zmq.hpp>

#include "image.hpp"
#include "publish/frame_decode.hpp"
#include "stats/stats.hpp"

namespace stereod::client {

using publish::FrameHeader;
using publish::ProtocolError;

struct SubscriberOptions {
  std::string endpoint;  // as the daemon binds it: ipc://PATH or tcp://HOST:PORT
  // Pair-name prefixes to receive; {""} = every pair, {} = no frames (e.g. stats only).
  std::vector<std::string> pairs = {""};
  bool stats = false;  // also receive the stats topic
  // CURVE: the server's certificate file (public, or its secret one). Empty: no CURVE.
  std::string server_key;
  // CURVE: this client's secret certificate, when the server admits only listed clients. Empty:
  // a fresh key pair for this connection.
  std::string client_key;
  int rcvhwm = 4;  // frames ZeroMQ buffers for this subscriber before it drops the newest
};

// One received frame. The views point into the message it arrived in, which this object owns;
// they stay valid while it lives (moving it keeps them valid).
class Frame {
 public:
  const FrameHeader& header() const { return storage_->decoded.header; }
  ImageView<const std::uint16_t> disparity() const { return storage_->decoded.disparity; }
  ImageView<const std::uint8_t> mask() const { return storage_->decoded.mask; }
  ImageView<const std::uint16_t> depth() const { return storage_->decoded.depth; }
  // Since protocol 1.3, each empty unless the pair sends it (docs/PROTOCOL.md "Payload encodings").
  ImageView<const std::uint8_t> confidence() const { return storage_->decoded.confidence; }
  // The rectified left image; left_channels() 1 (gray8) or 3 (rgb8: the view's width is 3 x the
  // image's), 0 when the frame has none.
  ImageView<const std::uint8_t> left() const { return storage_->decoded.left; }
  int left_channels() const { return storage_->decoded.left_channels; }
  // The point cloud, one point per pixel; points_channels() 3 (xyz32f: X Y Z) or 4 (xyzrgb32f: X
  // Y Z and the packed color, see point_color), 0 when the frame has none.
  ImageView<const float> points() const { return storage_->decoded.points; }
  int points_channels() const { return storage_->decoded.points_channels; }
  // Depth in metres at pixel (x, y) from the disparity and the header's camera model; NaN where
  // there is none (no disparity, no camera model, or x, y outside the image).
  double depth_m(int x, int y) const;
  // The header as it arrived (JSON text).
  std::string_view header_json() const;
  // Raw bytes of any payload the header names (also ones this client has no view for); empty
  // when the frame has none of that name.
  std::string_view payload(std::string_view name) const;

  // Decodes a received message (every part, topic first). Throws ProtocolError.
  static Frame decode(std::vector<zmq::message_t> parts);

 private:
  struct Storage {
    std::vector<zmq::message_t> parts;
    std::vector<std::vector<std::uint32_t>> realigned;  // copies of parts at odd addresses
    publish::DecodedFrame decoded;
  };
  std::unique_ptr<Storage> storage_;  // heap-held: views survive moves of the Frame
};

struct Received {
  std::string topic;
  std::optional<Frame> frame;                 // a disparity.<pair> message
  std::optional<stats::StatsSnapshot> stats;  // a stats message
};

class Subscriber {
 public:
  // Connects (ZeroMQ reconnects by itself when the daemon restarts). Throws std::runtime_error
  // for an unusable endpoint or key file, or CURVE missing from libzmq.
  explicit Subscriber(const SubscriberOptions& options);
  // Every pair, no stats, no CURVE.
  explicit Subscriber(const std::string& endpoint);

  // The next message, waiting at most `timeout`; nothing when none came. Throws ProtocolError for
  // a malformed message, after consuming all of it, so the next call reads the next message.
  std::optional<Received> receive(std::chrono::milliseconds timeout);

 private:
  zmq::context_t context_;
  zmq::socket_t socket_;
};

// Counts frames lost between the daemon and this subscriber from the sequence numbers of each
// pair. A sequence that goes backwards is a daemon restart, not a loss.
class SequenceTracker {
 public:
  struct Step {
    std::uint64_t lost = 0;  // frames missing just before this one
    bool restart = false;    // the sequence went backwards
    bool first = false;      // first frame of this pair
  };
  Step next(const std::string& pair, std::uint64_t sequence);
  std::uint64_t lost_total() const { return lost_total_; }

 private:
  std::map<std::string, std::uint64_t> last_;
  std::uint64_t lost_total_ = 0;
};

}  // namespace stereod::client
