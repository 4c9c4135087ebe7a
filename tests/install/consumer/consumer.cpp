// Uses the installed stereod client: encodes a one-pixel frame with the protocol library,
// decodes it as a received message, and prints the depth under the pixel; makes a Subscriber
// too (connecting needs no daemon). Prints "depth 10.000 m, points xyz32f" on success.
#include <chrono>
#include <cstdio>
#include <cstring>

#include "publish/points.hpp"
#include "stereod_client.hpp"

int main() {
  using namespace stereod;
  publish::FrameHeader h;
  h.info.pair = "front";
  h.info.sequence = 1;
  h.info.calibration.focal_px = h.info.calibration.fy_px = 100;
  h.info.calibration.baseline_m = 0.5;
  h.info.calibration.doffs_px = 1;
  publish::PayloadLayout d;
  d.name = "disparity";
  d.encoding = "disp16q4";
  d.width = d.height = 1;
  d.stride = 2;
  d.invalid = 0xFFFF;
  h.payloads.push_back(d);
  const std::string header = publish::encode_header(h);
  const std::uint16_t disparity = 16 * 6;  // d - doffs = 5 px: 100 * 0.5 / 5 = 10 m
  std::vector<zmq::message_t> parts;
  parts.emplace_back(std::string("disparity.front"));
  parts.emplace_back(header.data(), header.size());
  parts.emplace_back(&disparity, sizeof disparity);
  const client::Frame frame = client::Frame::decode(std::move(parts));
  float xyz[3];
  publish::disparity_to_points(frame.disparity(), frame.header().info.calibration, {xyz, 3, 1}, 3);
  client::Subscriber sub("ipc:///tmp/stereod-consumer-nobody.sock");
  (void)sub.receive(std::chrono::milliseconds(1));
  std::printf("depth %.3f m, points %s\n", frame.depth_m(0, 0),
              xyz[2] == 10.0f ? "xyz32f" : "wrong");
  return frame.depth_m(0, 0) == 10.0 ? 0 : 1;
}
