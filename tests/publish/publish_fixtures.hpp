// Shared pieces of the publishing tests: unique endpoints (CTest runs tests in parallel), frames
// with a known pattern per sequence number, and receive loops with generous deadlines.
#pragma once

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "publish/published_frame.hpp"
#include "publish/publisher.hpp"
#include "stereod_client.hpp"

namespace stereod::test {

// ipc:///tmp/stereod-test-<pid>-<tag>-<n>.sock: unique per process and call.
inline std::string unique_ipc(const std::string& tag) {
  static std::atomic<int> counter{0};
  return "ipc:///tmp/stereod-test-" + std::to_string(::getpid()) + "-" + tag + "-" +
         std::to_string(counter++) + ".sock";
}

// A header with every field set to something other than its default.
inline publish::FrameInfo full_info(const std::string& pair, std::uint64_t sequence) {
  publish::FrameInfo f;
  f.pair = pair;
  f.sequence = sequence;
  f.capture_ns = 1700000000123456789 + static_cast<std::int64_t>(sequence);
  f.cameras = {{"cam_left", f.capture_ns}, {"cam_right", f.capture_ns + 250000}};
  f.complete_ns = f.capture_ns + 1000000;
  f.ready_ns = f.capture_ns + 9000000;
  f.latency = {
      {"sync", 1.0}, {"upload", 0.25}, {"compute", 7.5}, {"download", 0.125}, {"engine", 8.0}};
  f.calibration.focal_px = 700.5;
  f.calibration.baseline_m = 0.12;
  f.calibration.doffs_px = 1.25;
  f.calibration.fy_px = 701.25;
  f.calibration.cx_px = 17.5;
  f.calibration.cy_px = 10.25;
  f.min_disparity = 0;
  f.max_disparity = 64;
  f.background = true;
  f.config_generation = 7;
  f.engine = "cpu";
  f.levels = 3;
  return f;
}

// Disparity of frame `sequence`: a pattern that differs per pixel and per frame, with some
// invalid pixels.
inline std::uint16_t pattern_value(std::uint64_t sequence, int x, int y) {
  const std::uint64_t v =
      (sequence * 131 + static_cast<std::uint64_t>(x) * 7 + static_cast<std::uint64_t>(y) * 977) %
      1100;
  return v % 37 == 0 ? std::uint16_t{0xFFFF} : static_cast<std::uint16_t>(v);
}
inline std::uint8_t mask_value(std::uint64_t sequence, int x, int y) {
  return ((x + y + static_cast<int>(sequence)) % 3 == 0) ? 255 : 0;
}

// Pixels kept alive by a shared buffer, as an engine result's hold keeps its slot.
template <typename T>
struct SharedImage {
  std::shared_ptr<std::vector<T>> pixels;
  ImageView<const T> view;
};

inline SharedImage<std::uint16_t> pattern_disparity(std::uint64_t seq, int w, int h) {
  auto p = std::make_shared<std::vector<std::uint16_t>>(static_cast<std::size_t>(w) * h);
  for (int y = 0; y < h; ++y) {
    for (int x = 0; x < w; ++x)
      (*p)[static_cast<std::size_t>(y) * w + x] = pattern_value(seq, x, y);
  }
  return {p, ImageView<const std::uint16_t>(p->data(), w, h)};
}

inline SharedImage<std::uint8_t> pattern_mask(std::uint64_t seq, int w, int h) {
  auto p = std::make_shared<std::vector<std::uint8_t>>(static_cast<std::size_t>(w) * h);
  for (int y = 0; y < h; ++y) {
    for (int x = 0; x < w; ++x) (*p)[static_cast<std::size_t>(y) * w + x] = mask_value(seq, x, y);
  }
  return {p, ImageView<const std::uint8_t>(p->data(), w, h)};
}

inline publish::PublishedFrame pattern_frame(const std::string& pair, std::uint64_t seq, int w,
                                             int h) {
  publish::PublishedFrame f;
  f.info = full_info(pair, seq);
  auto d = pattern_disparity(seq, w, h);
  auto m = pattern_mask(seq, w, h);
  f.disparity = d.view;
  f.disparity_keep_alive = d.pixels;
  f.mask = m.view;
  f.mask_keep_alive = m.pixels;
  return f;
}

// Every optional payload on: mask, depth, confidence, the color left image, colored points.
inline publish::PublisherOutputs all_outputs() {
  publish::PublisherOutputs all;
  all.mask = all.depth = all.confidence = true;
  all.left = publish::LeftOutput::kColor;
  all.points = publish::PointsOutput::kXyzRgb;
  return all;
}

// A frame whose every optional input is set: confidence, gray and color left images.
struct RichFrame {
  std::shared_ptr<std::vector<std::uint8_t>> confidence, gray, color;
  publish::PublishedFrame frame;
};

inline RichFrame rich_frame(std::uint64_t seq, int w, int h,
                            const publish::PublisherOutputs& outputs) {
  RichFrame r;
  r.frame = pattern_frame("front", seq, w, h);
  r.frame.outputs = outputs;
  const auto n = static_cast<std::size_t>(w) * static_cast<std::size_t>(h);
  r.confidence = std::make_shared<std::vector<std::uint8_t>>(n);
  r.gray = std::make_shared<std::vector<std::uint8_t>>(n);
  r.color = std::make_shared<std::vector<std::uint8_t>>(3 * n);
  for (std::size_t i = 0; i < n; ++i) {
    (*r.confidence)[i] = static_cast<std::uint8_t>((i * 7 + seq) % 256);
    (*r.gray)[i] = static_cast<std::uint8_t>((i * 3) % 256);
    for (std::size_t c = 0; c < 3; ++c)
      (*r.color)[3 * i + c] = static_cast<std::uint8_t>((i + 40 * c) % 256);
  }
  r.frame.confidence = ImageView<const std::uint8_t>(r.confidence->data(), w, h);
  r.frame.confidence_keep_alive = r.confidence;
  r.frame.left_gray = ImageView<const std::uint8_t>(r.gray->data(), w, h);
  r.frame.left_color = ImageView<const std::uint8_t>(r.color->data(), 3 * w, h);
  r.frame.left_keep_alive = std::make_shared<std::vector<std::shared_ptr<void>>>(
      std::vector<std::shared_ptr<void>>{r.gray, r.color});
  return r;
}

template <typename T, typename Fn>
bool image_matches(ImageView<const T> v, Fn expected) {
  for (int y = 0; y < v.height; ++y) {
    for (int x = 0; x < v.width; ++x) {
      if (v(x, y) != expected(x, y)) return false;
    }
  }
  return true;
}

// The next frame (stats skipped) within `timeout`, or nothing.
inline std::optional<client::Frame> next_frame(client::Subscriber& sub,
                                               std::chrono::milliseconds timeout) {
  const auto end = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < end) {
    auto msg = sub.receive(std::chrono::milliseconds(20));
    if (msg && msg->frame) return std::move(msg->frame);
  }
  return std::nullopt;
}

// Publishes pattern frames of `pair` (sequence numbers from `seq` on, advancing it) until `sub`
// receives one, which it returns; nothing after `timeout`. Subscriptions take a moment to reach a
// PUB socket, so tests that need "a frame arrives" publish until it does rather than once.
inline std::optional<client::Frame> publish_until_received(
    publish::Publisher& pub, client::Subscriber& sub, const std::string& pair, std::uint64_t& seq,
    std::chrono::milliseconds timeout = std::chrono::seconds(10), int w = 16, int h = 8) {
  const auto end = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < end) {
    pub.publish(pattern_frame(pair, seq++, w, h));
    if (auto f = next_frame(sub, std::chrono::milliseconds(20))) return f;
  }
  return std::nullopt;
}

// Publishes pattern frames from `first_seq` on, one per `period`, until `done()` or `timeout`.
// Returns the next sequence number.
template <typename Done>
std::uint64_t publish_until(publish::Publisher& pub, const std::string& pair,
                            std::uint64_t first_seq, Done done,
                            std::chrono::milliseconds timeout = std::chrono::seconds(10),
                            std::chrono::milliseconds period = std::chrono::milliseconds(5),
                            int w = 16, int h = 8) {
  const auto end = std::chrono::steady_clock::now() + timeout;
  std::uint64_t seq = first_seq;
  while (!done() && std::chrono::steady_clock::now() < end) {
    pub.publish(pattern_frame(pair, seq++, w, h));
    std::this_thread::sleep_for(period);
  }
  return seq;
}

}  // namespace stereod::test
