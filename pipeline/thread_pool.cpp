#include "thread_pool.hpp"

#include <algorithm>

namespace stereod {
namespace {

void chunk(int n, unsigned parts, unsigned index, int& begin, int& end) {
  const long long lo = static_cast<long long>(n) * index / parts;
  const long long hi = static_cast<long long>(n) * (index + 1) / parts;
  begin = static_cast<int>(lo);
  end = static_cast<int>(hi);
}

}  // namespace

ThreadPool::ThreadPool(unsigned threads) {
  if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
  for (unsigned i = 1; i < threads; ++i) workers_.emplace_back([this, i] { worker_loop(i); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  for (auto& t : workers_) t.join();
}

void ThreadPool::parallel_for(int n, const std::function<void(int, int)>& fn) {
  if (n <= 0) return;
  const unsigned parts = size();
  if (parts == 1 || n == 1) {
    fn(0, n);
    return;
  }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    job_ = &fn;
    job_n_ = n;
    pending_ = parts - 1;
    ++generation_;
  }
  wake_.notify_all();
  int begin, end;
  chunk(n, parts, 0, begin, end);
  if (begin < end) fn(begin, end);
  std::unique_lock<std::mutex> lock(mutex_);
  done_.wait(lock, [this] { return pending_ == 0; });
  job_ = nullptr;
}

void ThreadPool::worker_loop(unsigned index) {
  unsigned seen = 0;
  for (;;) {
    const std::function<void(int, int)>* job;
    int n;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [&] { return stopping_ || generation_ != seen; });
      if (stopping_) return;
      seen = generation_;
      job = job_;
      n = job_n_;
    }
    int begin, end;
    chunk(n, size(), index, begin, end);
    if (begin < end) (*job)(begin, end);
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (--pending_ == 0) done_.notify_one();
    }
  }
}

}  // namespace stereod
