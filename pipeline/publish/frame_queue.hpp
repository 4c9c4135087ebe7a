// The bounded hand-over between the daemon's threads and the publisher thread. push() never waits:
// when the queue is full it drops the OLDEST waiting item and hands it back, because for live
// depth the newest frame is the valuable one, and dropping the oldest also returns the oldest
// engine slot first.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <mutex>
#include <optional>

namespace stereod::publish {

template <typename T>
class DropOldestQueue {
 public:
  explicit DropOldestQueue(std::size_t capacity) : capacity_(capacity) {}

  // Adds `item`. Returns the item that did not stay: the oldest one, displaced because the queue
  // was full, or `item` itself once the queue is closed. The caller destroys it outside the lock
  // (a frame's keep-alive may run engine code).
  std::optional<T> push(T item) {
    std::optional<T> dropped;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (closed_) return item;
      if (items_.size() >= capacity_) {  // (after a shrink it stays over the limit until drained)
        dropped = std::move(items_.front());
        items_.pop_front();
      }
      items_.push_back(std::move(item));
    }
    ready_.notify_one();
    return dropped;
  }

  // The oldest item, waiting until `deadline` for one; nothing on timeout or once closed and empty.
  template <typename Clock, typename Duration>
  std::optional<T> pop_until(const std::chrono::time_point<Clock, Duration>& deadline) {
    std::unique_lock<std::mutex> lock(mutex_);
    ready_.wait_until(lock, deadline, [&] { return !items_.empty() || closed_; });
    if (items_.empty()) return std::nullopt;
    T item = std::move(items_.front());
    items_.pop_front();
    return item;
  }

  // Refuses new items and wakes the consumer; items already queued can still be popped.
  void close() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      closed_ = true;
    }
    ready_.notify_all();
  }

  bool closed() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return closed_;
  }

  std::size_t size() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return items_.size();
  }
  std::size_t capacity() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return capacity_;
  }

  // A new limit for later pushes. Items already waiting stay: after a shrink each push drops one
  // and adds one until the consumer has brought the queue under the limit.
  void set_capacity(std::size_t capacity) {
    std::lock_guard<std::mutex> lock(mutex_);
    capacity_ = capacity;
  }

 private:
  std::size_t capacity_;
  mutable std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<T> items_;
  bool closed_ = false;
};

}  // namespace stereod::publish
