// A small fixed pool of worker threads for the CPU engine's row-parallel loops. parallel_for
// splits [0, n) into contiguous chunks and returns when all of them are done; work items must be
// independent, so results never depend on the thread count.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace stereod {

class ThreadPool {
 public:
  // threads = 0 picks the hardware concurrency; 1 runs everything on the caller.
  explicit ThreadPool(unsigned threads = 0);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  unsigned size() const { return static_cast<unsigned>(workers_.size()) + 1; }

  // Calls fn(begin, end) on disjoint chunks covering [0, n); the caller takes a share too.
  void parallel_for(int n, const std::function<void(int, int)>& fn);

 private:
  void worker_loop(unsigned index);

  std::vector<std::thread> workers_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::condition_variable done_;
  const std::function<void(int, int)>* job_ = nullptr;
  int job_n_ = 0;
  unsigned generation_ = 0;
  unsigned pending_ = 0;
  bool stopping_ = false;
};

}  // namespace stereod
