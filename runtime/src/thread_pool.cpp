//===- thread_pool.cpp - worker threads for parallel compiled code --------===//

#include "thread_pool.h"

#include <cstdio>
#include <cstdlib>

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
