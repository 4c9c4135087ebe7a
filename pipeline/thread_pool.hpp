// The CPU engine's worker threads: one long-lived pool for the whole process, sized once to the
// cores, shared by every camera pair (ThreadPool::shared()). Two kinds of work run on it:
//  - tasks (post): a CPU engine's frames, one at a time per engine, in the order they were posted;
//  - loops (parallel_for): a stage's rows split into parts that idle workers and the caller take.
// parallel_for may be called from any thread, from several at once, and from inside a task or
// another loop (a frame's stages are loops inside the frame's task): the caller runs parts of its
// own loop too, so it never waits for work that no thread will pick up, and the machine never
// runs more stage threads than the pool has workers plus the callers. Loop parts must be
// independent, so results never depend on how many threads took part.
#pragma once

#include <condition_variable>
#include <deque>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace stereod {

class ThreadPool {
 public:
  // threads = 0 picks one per core. A pool of 1 runs every loop on its caller.
  explicit ThreadPool(unsigned threads = 0);
  // Runs the tasks still queued, then joins the workers.
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  // The process's pool, one thread per core, created on first use.
  static std::shared_ptr<ThreadPool> shared();
  // The shared pool for threads = 0, else a pool of its own with that many threads (tests and
  // benchmarks that need a given count).
  static std::shared_ptr<ThreadPool> for_threads(unsigned threads);

  unsigned size() const { return static_cast<unsigned>(workers_.size()); }

  // Calls fn(begin, end) on disjoint, contiguous parts covering [0, n) and returns when all are
  // done. There are up to 4 parts per worker, so a worker that is busy elsewhere does not hold the
  // loop up. An exception thrown by a part is rethrown here once every part has finished.
  void parallel_for(int n, const std::function<void(int, int)>& fn);

  // Queues a task for a worker. Loops waiting for threads are served before tasks.
  void post(std::function<void()> task);

 private:
  struct Loop;
  void worker_loop();
  // With the lock held: claims the next part of `loop`, dropping the loop from the queue when it
  // was the last one; runs it unlocked; counts it done.
  void run_part(Loop& loop, std::unique_lock<std::mutex>& lock);

  std::vector<std::thread> workers_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::condition_variable done_;
  std::deque<Loop*> loops_;  // loops with parts nobody has claimed yet
  std::deque<std::function<void()>> tasks_;
  bool stopping_ = false;
};

// A stage's rows on the pool, or all on the caller when there is none.
inline void for_rows(ThreadPool* pool, int rows, const std::function<void(int, int)>& fn) {
  if (pool) {
    pool->parallel_for(rows, fn);
  } else if (rows > 0) {
    fn(0, rows);
  }
}

}  // namespace stereod
