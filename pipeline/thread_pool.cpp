#include "thread_pool.hpp"

#include <algorithm>

namespace stereod {

struct ThreadPool::Loop {
  const std::function<void(int, int)>* fn = nullptr;
  int n = 0;
  int parts = 0;
  int claimed = 0;  // parts handed out (under the pool's lock)
  int done = 0;     // parts finished (under the pool's lock)
  std::exception_ptr error;
};

ThreadPool::ThreadPool(unsigned threads) {
  if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
  for (unsigned i = 0; i < threads; ++i) workers_.emplace_back([this] { worker_loop(); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  for (auto& t : workers_) t.join();
}

std::shared_ptr<ThreadPool> ThreadPool::shared() {
  static const std::shared_ptr<ThreadPool> pool = std::make_shared<ThreadPool>(0);
  return pool;
}

std::shared_ptr<ThreadPool> ThreadPool::for_threads(unsigned threads) {
  return threads == 0 ? shared() : std::make_shared<ThreadPool>(threads);
}

void ThreadPool::run_part(Loop& loop, std::unique_lock<std::mutex>& lock) {
  const int part = loop.claimed++;
  if (loop.claimed == loop.parts) loops_.erase(std::find(loops_.begin(), loops_.end(), &loop));
  lock.unlock();
  const int begin = static_cast<int>(static_cast<long long>(loop.n) * part / loop.parts);
  const int end = static_cast<int>(static_cast<long long>(loop.n) * (part + 1) / loop.parts);
  std::exception_ptr error;
  try {
    (*loop.fn)(begin, end);
  } catch (...) {
    error = std::current_exception();
  }
  lock.lock();
  if (error && !loop.error) loop.error = error;
  if (++loop.done == loop.parts) done_.notify_all();
}

void ThreadPool::parallel_for(int n, const std::function<void(int, int)>& fn) {
  if (n <= 0) return;
  const int parts = static_cast<int>(std::min<long long>(n, 4ll * size()));
  if (size() == 1 || parts == 1) {
    fn(0, n);
    return;
  }
  Loop loop;
  loop.fn = &fn;
  loop.n = n;
  loop.parts = parts;
  std::unique_lock<std::mutex> lock(mutex_);
  loops_.push_back(&loop);
  wake_.notify_all();
  while (loop.claimed < loop.parts) run_part(loop, lock);
  done_.wait(lock, [&] { return loop.done == loop.parts; });
  if (loop.error) std::rethrow_exception(loop.error);
}

void ThreadPool::post(std::function<void()> task) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    tasks_.push_back(std::move(task));
  }
  wake_.notify_one();
}

void ThreadPool::worker_loop() {
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    wake_.wait(lock, [&] { return stopping_ || !loops_.empty() || !tasks_.empty(); });
    if (!loops_.empty()) {
      run_part(*loops_.front(), lock);
    } else if (!tasks_.empty()) {
      std::function<void()> task = std::move(tasks_.front());
      tasks_.pop_front();
      lock.unlock();
      task();
      lock.lock();
    } else {
      return;  // stopping, nothing left
    }
  }
}

}  // namespace stereod
