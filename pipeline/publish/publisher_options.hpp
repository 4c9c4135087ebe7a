// The publisher's configuration (the `publish:` section; docs/PROTOCOL.md "Endpoints" and
// "CURVE"). Keys named in errors are the configuration's: publish.endpoint, publish.bind_all,
// publish.hwm, publish.queue, publish.stats_interval_ms,
// publish.outputs.{mask,depth,confidence,points,left,direction},
// publish.curve.{server_key,clients}.
#pragma once

#include <string>
#include <vector>

#include "publish/endpoint.hpp"

namespace stereod::publish {

// The optional payloads (docs/PROTOCOL.md "Payload encodings"); all off by default.
enum class PointsOutput { kNone, kXyz, kXyzRgb };  // points: none | xyz | xyzrgb
enum class LeftOutput { kNone, kGray, kColor };    // left: none | gray | color

struct PublisherOutputs {
  bool mask = false;   // send the foreground mask when the frame has one
  bool depth = false;  // compute and send depth in millimetres when the pair is calibrated
  // Since protocol 1.3:
  bool confidence = false;  // send the engine's matching confidence when it computes one
  PointsOutput points = PointsOutput::kNone;  // the point cloud (calibrated pairs)
  LeftOutput left = LeftOutput::kNone;        // the rectified left image
  bool direction = false;                     // trinocular pairs: send which pair won each pixel

  bool operator==(const PublisherOutputs& o) const {
    return mask == o.mask && depth == o.depth && confidence == o.confidence && points == o.points &&
           left == o.left && direction == o.direction;
  }
  bool operator!=(const PublisherOutputs& o) const { return !(*this == o); }
  // The left image is needed: for its own payload, or for the colors of the points.
  bool wants_left_image() const {
    return left != LeftOutput::kNone || points == PointsOutput::kXyzRgb;
  }
};

struct PublisherOptions {
  // ipc://PATH or tcp://HOST:PORT; empty = default_endpoint(). tcp://:PORT means 127.0.0.1, and
  // PORT 0 or * picks a free port (see Publisher::endpoint()).
  std::string endpoint;
  // tcp:// on every interface (tcp://*:PORT, tcp://0.0.0.0:PORT, tcp://[::]:PORT) is refused
  // unless this is set: a depth stream must not leave the board by accident.
  bool bind_all = false;
  // Frames per pair that ZeroMQ buffers for each subscriber before it drops that subscriber's
  // newest frames. The socket is shared by every pair, and rigs running at one rate finish their
  // frames together, so the socket's limit is hwm x pairs: a subscriber that keeps up on average
  // must not lose frames to the burst of one frame from each pair.
  int hwm = 4;
  // How many pairs share the socket (set by the daemon, not a configuration key).
  int pairs = 1;
  // Frames per pair waiting for the publisher thread (the queue holds queue x pairs); when full,
  // the oldest waiting frame is dropped.
  int queue = 16;
  // How often the stats topic is sent (0 = never).
  int stats_interval_ms = 1000;
  PublisherOutputs outputs;
  // CURVE (optional): the server's secret certificate file. Subscribers need its public key.
  std::string curve_server_key;
  // CURVE: a folder of allowed clients' public certificates (*.key); empty = any client that
  // knows the server's public key.
  std::string curve_clients;
};

// The endpoint the publisher binds: defaults applied (empty endpoint, tcp:// without a host).
// localhost becomes 127.0.0.1. Throws ParameterError (key "publish.endpoint") when it is
// malformed, has another scheme, names a port outside 0..65535, an ipc path longer than a socket
// path may be, or binds every interface without bind_all.
std::string resolve_endpoint(const PublisherOptions& options);

// What binding the endpoint needs from this host, checked without binding it: an ipc:// path's
// folder exists and nothing but a socket is at the path; a tcp:// host is an address of this
// host, one of its interface names, or every interface. Throws ParameterError
// ("publish.endpoint") saying what is missing. Whether someone else uses the endpoint now is
// endpoint_in_use's question: the running daemon's own endpoint is in use too.
void check_endpoint_on_this_host(const PublisherOptions& options);

// "" when the endpoint is free now; else who has it: an ipc:// socket another process serves
// (connecting to it succeeds), or a tcp:// port another socket holds.
std::string endpoint_in_use(const PublisherOptions& options);

// Every option checked; throws ParameterError naming the key and the value for the first problem.
// Key files are read by the Publisher (a missing or malformed file is reported there).
void validate_publisher_options(const PublisherOptions& options);

// Settings that are allowed but probably unwise (every interface without CURVE), one sentence each,
// for the daemon to log.
std::vector<std::string> publisher_warnings(const PublisherOptions& options);

}  // namespace stereod::publish
