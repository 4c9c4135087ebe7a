// Shared by the GStreamer rig tests: a collector of frame sets and events that a test can wait on.
// Waits have generous limits (the CI machine is small and busy); no test asserts on timing.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "ingest/camera_config.hpp"
#include "ingest/rig_source.hpp"

namespace stereod::test {

constexpr auto kPatience = std::chrono::seconds(30);

class Collector {
 public:
  RigSource::FrameSetCallback sets() {
    return [this](FrameSet&& set) {
      // Keep copies: the rig's frame buffers go back to its pool, as a real consumer's would.
      for (auto& f : set.frames) f = std::make_shared<const CameraFrame>(*f);
      std::lock_guard<std::mutex> lock(mutex_);
      sets_.push_back(std::move(set));
      cv_.notify_all();
    };
  }
  RigSource::EventCallback events() {
    return [this](const RigEvent& event) {
      std::lock_guard<std::mutex> lock(mutex_);
      events_.push_back(event);
      cv_.notify_all();
    };
  }

  // True once `done` holds (checked under the lock), false after `limit`.
  bool wait(const std::function<bool()>& done, std::chrono::milliseconds limit = kPatience) {
    std::unique_lock<std::mutex> lock(mutex_);
    return cv_.wait_for(lock, limit, done);
  }
  bool wait_sets(std::size_t n) {
    return wait([&] { return sets_.size() >= n; });
  }
  bool wait_event(RigEvent::Kind kind, std::size_t n = 1) {
    return wait([&] { return count(kind) >= n; });
  }

  std::size_t set_count() {
    std::lock_guard<std::mutex> lock(mutex_);
    return sets_.size();
  }
  std::vector<FrameSet> take_sets() {
    std::lock_guard<std::mutex> lock(mutex_);
    return std::move(sets_);
  }
  std::vector<RigEvent> events_so_far() {
    std::lock_guard<std::mutex> lock(mutex_);
    return events_;
  }

 private:
  std::size_t count(RigEvent::Kind kind) const {  // caller holds the lock
    std::size_t n = 0;
    for (const auto& e : events_) n += e.kind == kind ? 1 : 0;
    return n;
  }

  std::mutex mutex_;
  std::condition_variable cv_;
  std::vector<FrameSet> sets_;
  std::vector<RigEvent> events_;
};

// Polls `done` every 20 ms; false after `limit`.
inline bool poll_until(const std::function<bool()>& done,
                       std::chrono::milliseconds limit = kPatience) {
  const auto end = std::chrono::steady_clock::now() + limit;
  while (!done()) {
    if (std::chrono::steady_clock::now() > end) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return true;
}

inline CameraConfig small_camera(const std::string& name, const std::string& uri) {
  CameraConfig c;
  c.name = name;
  c.uri = uri;
  c.width = 64;
  c.height = 48;
  return c;
}

// Restarts quickly, so fault tests take seconds rather than the production backoff.
inline RigConfig rig_of(const std::string& name, std::vector<CameraConfig> cameras) {
  RigConfig rig;
  rig.name = name;
  rig.cameras = std::move(cameras);
  rig.restart.initial = std::chrono::milliseconds(200);
  rig.restart.max = std::chrono::milliseconds(800);
  rig.restart.stall_timeout = std::chrono::milliseconds(10000);
  return rig;
}

// Runs a rig until its first failure and returns that event (kind kEnded with an empty message
// when none came within the patience).
inline RigEvent first_failure(const RigConfig& config) {
  Collector got;
  RigSource rig(config, got.sets(), got.events());
  rig.start();
  const bool failed = got.wait_event(RigEvent::Kind::kFailed);
  rig.stop();
  for (const auto& e : got.events_so_far()) {
    if (failed && e.kind == RigEvent::Kind::kFailed) return e;
  }
  return {RigEvent::Kind::kEnded, config.name, "", "", {}};
}

inline bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// A fresh folder under /tmp for a test's files, and its removal.
inline std::string temp_dir() {
  char name[] = "/tmp/stereod_ingest_XXXXXX";
  const char* dir = mkdtemp(name);
  EXPECT_NE(dir, nullptr);
  return dir ? dir : "/tmp";
}
inline void remove_dir(const std::string& dir) {
  const std::string command = "rm -rf '" + dir + "'";
  EXPECT_EQ(std::system(command.c_str()), 0);
}

// A color frame's RGB, rows packed, as one vector (RgbImage::pixels' layout).
inline std::vector<std::uint8_t> rgb_of(const CameraFrame& f) {
  std::vector<std::uint8_t> out;
  for (int y = 0; y < f.color.height; ++y) {
    out.insert(out.end(), f.color.row(y), f.color.row(y) + 3 * f.color.width);
  }
  return out;
}

}  // namespace stereod::test
