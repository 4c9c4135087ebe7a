// Exponential backoff for restarting a failed rig: initial, 2x initial, 4x ... up to max, and
// back to initial once the rig has been healthy for a while (RestartPolicy).
#pragma once

#include <chrono>

#include "ingest/camera_config.hpp"

namespace stereod {

class Backoff {
 public:
  explicit Backoff(const RestartPolicy& policy) : policy_(policy), next_(policy.initial) {}

  // The delay before the next restart; each call doubles the following one, up to the maximum.
  std::chrono::milliseconds next() {
    const std::chrono::milliseconds delay = next_;
    next_ = next_ * 2 > policy_.max ? policy_.max : next_ * 2;
    ++failures_;
    return delay;
  }
  void reset() {
    next_ = policy_.initial;
    failures_ = 0;
  }
  int failures() const { return failures_; }  // since the last reset

 private:
  RestartPolicy policy_;
  std::chrono::milliseconds next_;
  int failures_ = 0;
};

}  // namespace stereod
