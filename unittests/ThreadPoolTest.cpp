//===- ThreadPoolTest.cpp - the runtime's worker threads ------------------===//

#include "thread_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <set>
#include <thread>

using paddle_runtime::ThreadPool;

namespace {

TEST(ThreadPool, RunsEveryTaskOnItsWorkers) {
  std::atomic<int> count{0};
  std::mutex mu;
  std::set<std::thread::id> ids;
  {
    ThreadPool pool(3);
    EXPECT_EQ(pool.numWorkers(), 3);
    for (int i = 0; i < 1000; ++i)
      pool.submit([&] {
        EXPECT_EQ(ThreadPool::current(), &pool);
        std::lock_guard<std::mutex> lock(mu);
        ids.insert(std::this_thread::get_id());
        ++count;
      });
  } // The destructor drains the queue.
  EXPECT_EQ(count.load(), 1000);
  EXPECT_LE(ids.size(), 3u);
  EXPECT_EQ(ids.count(std::this_thread::get_id()), 0u);
  EXPECT_EQ(ThreadPool::current(), nullptr);
}

TEST(ThreadPool, DestructorRunsTasksSubmittedByTasks) {
  std::atomic<int> count{0};
  ThreadPool *target = nullptr;
  // Each task submits two more, down to depth 8: 2^9 - 1 tasks in all.
  std::function<void(int)> spawn = [&](int depth) {
    ++count;
    if (depth < 8) {
      target->submit([&, depth] { spawn(depth + 1); });
      target->submit([&, depth] { spawn(depth + 1); });
    }
  };
  {
    ThreadPool pool(2);
    target = &pool;
    pool.submit([&] { spawn(0); });
  }
  EXPECT_EQ(count.load(), 511);
}

TEST(ThreadPool, RunOneTaskRunsQueuedWorkOnTheCaller) {
  // Declared before the pool, which its tasks use until it is destroyed.
  std::mutex mu;
  std::condition_variable cv;
  bool workerBusy = false, release = false;
  ThreadPool pool(1);
  // Block the only worker so that the next task stays queued.
  pool.submit([&] {
    std::unique_lock<std::mutex> lock(mu);
    workerBusy = true;
    cv.notify_all();
    cv.wait(lock, [&] { return release; });
  });
  {
    std::unique_lock<std::mutex> lock(mu);
    cv.wait(lock, [&] { return workerBusy; });
  }
  std::thread::id ranOn;
  pool.submit([&] { ranOn = std::this_thread::get_id(); });
  EXPECT_TRUE(pool.runOneTask());
  EXPECT_EQ(ranOn, std::this_thread::get_id());
  EXPECT_FALSE(pool.runOneTask());
  {
    std::lock_guard<std::mutex> lock(mu);
    release = true;
  }
  cv.notify_all();
}

TEST(ThreadPoolDeathTest, DestroyedByItsOwnWorkerAborts) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(
      {
        auto *pool = new ThreadPool(1);
        pool->submit([pool] { delete pool; });
        std::this_thread::sleep_for(std::chrono::seconds(10));
      },
      "destroyed by one of its own workers");
}

} // namespace
