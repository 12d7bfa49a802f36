//===- thread_pool.cpp - worker threads for parallel compiled code --------===//

#include "thread_pool.h"
#include "paddle_runtime/runtime.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

using namespace paddle_runtime;

namespace {
thread_local ThreadPool *currentPool = nullptr;
} // namespace

ThreadPool::ThreadPool(int32_t numWorkers) {
  workers.reserve(numWorkers > 0 ? numWorkers : 1);
  for (int32_t i = 0; i < (numWorkers > 0 ? numWorkers : 1); ++i)
    workers.emplace_back([this] { workerLoop(); });
}

ThreadPool::~ThreadPool() {
  if (currentPool == this) {
    // Joining itself would hang forever; this is a bug in the caller.
    fprintf(stderr, "paddle runtime error: a thread pool was destroyed by "
                    "one of its own workers\n");
    abort();
  }
  {
    std::lock_guard<std::mutex> lock(mutex);
    stopping = true;
  }
  // Spinning workers see `stopping` only once they sleep: wake them all.
  wakeUp.notify_all();
  for (std::thread &worker : workers)
    worker.join();
}

ThreadPool *ThreadPool::current() { return currentPool; }

void ThreadPool::submit(std::function<void()> task) {
  {
    std::lock_guard<std::mutex> lock(mutex);
    queue.push_back(std::move(task));
    ++queued;
    ++unfinished;
    if (sleeping == 0)
      return; // Every worker is busy or spinning and will find it.
  }
  wakeUp.notify_one();
}

void ThreadPool::finished() {
  std::lock_guard<std::mutex> lock(mutex);
  if (--unfinished == 0)
    idle.notify_all();
}

void ThreadPool::waitIdle() {
  if (currentPool == this) {
    fprintf(stderr, "paddle runtime error: a thread pool worker waited for "
                    "its own pool to be idle\n");
    abort();
  }
  std::unique_lock<std::mutex> lock(mutex);
  idle.wait(lock, [this] { return unfinished == 0; });
}

bool ThreadPool::runOneTask() {
  std::function<void()> task;
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (queue.empty())
      return false;
    task = std::move(queue.front());
    queue.pop_front();
    --queued;
  }
  // A thread that is not a worker (a caller waiting for its loop) counts as
  // one while it runs the task: the task may not reconfigure or wait for
  // the pool, and a run-time failure in it aborts (invoke.cpp).
  ThreadPool *outer = currentPool;
  currentPool = this;
  task();
  currentPool = outer;
  task = nullptr;
  finished();
  return true;
}

void ThreadPool::workerLoop() {
  currentPool = this;
  for (;;) {
    std::function<void()> task;
    // Parallel loops come in bursts (one per op): look for the next task a
    // little while before sleeping, which saves a futex wake-up and a
    // context switch per task.
    spinUntil([this] { return queued.load(std::memory_order_relaxed) > 0; });
    {
      std::unique_lock<std::mutex> lock(mutex);
      // Stop only once the queue is drained: a queued task may be the one
      // that completes a token somebody waits for.
      ++sleeping;
      wakeUp.wait(lock, [this] { return stopping || !queue.empty(); });
      --sleeping;
      if (queue.empty())
        return;
      task = std::move(queue.front());
      queue.pop_front();
      --queued;
    }
    task();
    task = nullptr;
    finished();
  }
}

extern "C" paddle_status_t paddle_measure_fork_join(int32_t threads,
                                                    int32_t repetitions,
                                                    double *median_seconds) {
  if (!median_seconds)
    return paddle_status_create(PADDLE_INVALID_ARGUMENT,
                                "paddle_measure_fork_join: null argument");
  if (threads < 1 || threads > 4096 || repetitions < 1 || repetitions > 1000000)
    return paddle_status_create(
        PADDLE_INVALID_ARGUMENT,
        "paddle_measure_fork_join: threads must be 1 to 4096 and "
        "repetitions 1 to 1000000");
  using Clock = std::chrono::steady_clock;
  ThreadPool pool(threads);
  std::vector<double> times;
  times.reserve(repetitions);
  for (int32_t r = 0; r < repetitions + 10; ++r) {
    auto start = Clock::now();
    for (int32_t t = 0; t < threads; ++t)
      pool.submit([] {});
    pool.waitIdle();
    if (r >= 10) // the first rounds wake sleeping workers
      times.push_back(
          std::chrono::duration<double>(Clock::now() - start).count());
  }
  std::nth_element(times.begin(), times.begin() + times.size() / 2,
                   times.end());
  *median_seconds = times[times.size() / 2];
  return nullptr;
}
