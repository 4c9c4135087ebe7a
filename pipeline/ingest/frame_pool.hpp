// A small per-camera pool of CameraFrames, so that steady-state ingest allocates nothing: a frame
// handed out keeps its pixel buffers when it comes back, and the next frame of the same size
// reuses them.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <vector>

#include "frame.hpp"

namespace stereod {

class FramePool {
 public:
  explicit FramePool(int capacity) : capacity_(capacity) {
    frames_.reserve(static_cast<std::size_t>(capacity));
  }

  // A frame nobody else holds (its previous contents still in it), or nullptr when `capacity`
  // frames are all held elsewhere: the consumers are too far behind and the caller drops the new
  // frame rather than grow without bound.
  std::shared_ptr<CameraFrame> acquire() {
    std::lock_guard<std::mutex> lock(mutex_);
    // The pool only ever hands out copies of these pointers, so a use count of 1 means free: no
    // one can gain a new reference to a frame except through here.
    for (auto& f : frames_) {
      if (f.use_count() == 1) {
        // use_count() is a relaxed load; the fence orders our writes to the frame after the last
        // holder's reads, which happened before its (release) decrement.
        std::atomic_thread_fence(std::memory_order_acquire);
        return f;
      }
    }
    if (static_cast<int>(frames_.size()) >= capacity_) return nullptr;
    frames_.push_back(std::make_shared<CameraFrame>());
    return frames_.back();
  }

  int capacity() const { return capacity_; }

 private:
  int capacity_;
  std::mutex mutex_;
  std::vector<std::shared_ptr<CameraFrame>> frames_;
};

}  // namespace stereod
