// The shared thread pool: loops cover every index once, from any thread, nested inside tasks and
// loops, from several callers at once; errors come back to the caller; tasks run in order.
#include <gtest/gtest.h>

#include <atomic>
#include <future>
#include <set>
#include <stdexcept>

#include "thread_pool.hpp"

using namespace stereod;

TEST(ThreadPool, CoversEveryIndexOnce) {
  for (unsigned threads : {1u, 2u, 5u}) {
    ThreadPool pool(threads);
    for (int n : {0, 1, 3, 100, 1001}) {
      std::vector<int> hits(static_cast<std::size_t>(n), 0);
      pool.parallel_for(n, [&](int b, int e) {
        for (int i = b; i < e; ++i) ++hits[static_cast<std::size_t>(i)];
      });
      for (int h : hits) ASSERT_EQ(h, 1);
    }
  }
}

TEST(ThreadPool, LoopsRunOnSeveralThreads) {
  ThreadPool pool(3);
  std::mutex m;
  std::set<std::thread::id> seen;
  std::atomic<int> inside{0};
  pool.parallel_for(12, [&](int, int) {
    ++inside;
    // Hold each part until a second one has started, so one thread cannot take them all.
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(2);
    while (inside.load() < 2 && std::chrono::steady_clock::now() < until) std::this_thread::yield();
    std::lock_guard<std::mutex> lock(m);
    seen.insert(std::this_thread::get_id());
  });
  EXPECT_GE(seen.size(), 2u);
}

TEST(ThreadPool, NestedLoopsInsideTasksFinishEvenWhenEveryWorkerIsBusy) {
  // Two workers, four tasks, each running a loop whose parts run loops: nobody may wait for a
  // part that no thread will take.
  ThreadPool pool(2);
  std::atomic<long long> sum{0};
  std::vector<std::promise<void>> done(4);
  for (int t = 0; t < 4; ++t) {
    pool.post([&, t] {
      pool.parallel_for(8, [&](int b, int e) {
        for (int i = b; i < e; ++i) {
          pool.parallel_for(10, [&](int b2, int e2) {
            for (int j = b2; j < e2; ++j) sum += j;
          });
        }
      });
      done[t].set_value();
    });
  }
  for (auto& d : done) {
    ASSERT_EQ(d.get_future().wait_for(std::chrono::seconds(30)), std::future_status::ready);
  }
  EXPECT_EQ(sum.load(), 4 * 8 * 45);
}

TEST(ThreadPool, SeveralCallersAtOnce) {
  ThreadPool pool(2);
  std::vector<std::future<long long>> callers;
  for (int c = 0; c < 6; ++c) {
    callers.push_back(std::async(std::launch::async, [&pool, c] {
      std::atomic<long long> sum{0};
      pool.parallel_for(1000 + c, [&](int b, int e) {
        for (int i = b; i < e; ++i) sum += i;
      });
      return sum.load();
    }));
  }
  for (int c = 0; c < 6; ++c) {
    const long long n = 1000 + c;
    EXPECT_EQ(callers[static_cast<std::size_t>(c)].get(), n * (n - 1) / 2);
  }
}

TEST(ThreadPool, ErrorsReachTheCallerAfterEveryPartIsDone) {
  ThreadPool pool(2);
  std::atomic<int> finished{0};
  EXPECT_THROW(pool.parallel_for(8,
                                 [&](int b, int) {
                                   if (b == 0) throw std::runtime_error("part 0");
                                   ++finished;
                                 }),
               std::runtime_error);
  EXPECT_EQ(finished.load(), 7);
}

TEST(ThreadPool, TasksRunInOrderOnAOneThreadPool) {
  std::vector<int> order;
  {
    ThreadPool pool(1);
    for (int i = 0; i < 20; ++i) pool.post([&order, i] { order.push_back(i); });
  }  // the destructor runs what is queued
  ASSERT_EQ(order.size(), 20u);
  for (int i = 0; i < 20; ++i) EXPECT_EQ(order[static_cast<std::size_t>(i)], i);
}

TEST(ThreadPool, SharedPoolIsOneAndSizedToTheCores) {
  EXPECT_EQ(ThreadPool::shared().get(), ThreadPool::shared().get());
  EXPECT_EQ(ThreadPool::for_threads(0).get(), ThreadPool::shared().get());
  EXPECT_EQ(ThreadPool::shared()->size(), std::max(1u, std::thread::hardware_concurrency()));
  EXPECT_EQ(ThreadPool::for_threads(3)->size(), 3u);
}
