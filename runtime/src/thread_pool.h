//===- thread_pool.h - worker threads for parallel compiled code -*- C++
//-*-===//
//
// A fixed set of plain C++ threads that run tasks from one FIFO queue. The
// async runtime (async_runtime.cpp) runs the blocks of parallel loops on it.
// No LLVM/MLIR dependency.
//
//===----------------------------------------------------------------------===//

#ifndef PADDLE_RUNTIME_THREAD_POOL_H
#define PADDLE_RUNTIME_THREAD_POOL_H

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace paddle_runtime {

/// Polls `ready` for up to about 50 microseconds, yielding the core between
/// polls; returns whether it became true. Waiting threads call it before
/// they block: a parallel loop's blocks end within microseconds of each
/// other, and a futex sleep and wake-up costs more than that.
template <typename Ready> bool spinUntil(Ready ready) {
  auto deadline =
      std::chrono::steady_clock::now() + std::chrono::microseconds(50);
  do {
    if (ready())
      return true;
    std::this_thread::yield();
  } while (std::chrono::steady_clock::now() < deadline);
  return ready();
}

class ThreadPool {
public:
  /// Starts `numWorkers` (>= 1) threads.
  explicit ThreadPool(int32_t numWorkers);
  /// Runs every task still queued (tasks may submit more), then joins the
  /// workers. Must not run on one of this pool's workers.
  ~ThreadPool();

  ThreadPool(const ThreadPool &) = delete;
  ThreadPool &operator=(const ThreadPool &) = delete;

  /// Queues `task`; some worker runs it later. Thread-safe.
  void submit(std::function<void()> task);

  /// Runs one queued task on the calling thread if there is one; returns
  /// whether it did. A worker that must wait for other tasks calls this so
  /// that nested waits cannot leave every worker blocked on queued work,
  /// and so does a caller waiting for its loop's blocks. While the task
  /// runs, current() is this pool on any thread.
  bool runOneTask();

  /// Waits until every submitted task has returned (including tasks those
  /// submit). Must not run on one of this pool's workers.
  void waitIdle();

  int32_t numWorkers() const { return static_cast<int32_t>(workers.size()); }

  /// The pool whose worker is the calling thread, or null.
  static ThreadPool *current();

private:
  void workerLoop();
  void finished();

  std::mutex mutex;
  std::condition_variable wakeUp;
  std::condition_variable idle;
  std::deque<std::function<void()>> queue;
  /// Tasks submitted and not yet returned (queued or running).
  int64_t unfinished = 0;
  /// Tasks in `queue`, readable without the lock (for spinning workers).
  std::atomic<int64_t> queued{0};
  /// Workers blocked on `wakeUp` (only they need a notification).
  int32_t sleeping = 0;
  bool stopping = false;
  std::vector<std::thread> workers;
};

} // namespace paddle_runtime

#endif // PADDLE_RUNTIME_THREAD_POOL_H
