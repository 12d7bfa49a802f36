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

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace paddle_runtime {

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
  /// that nested waits cannot leave every worker blocked on queued work.
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
  bool stopping = false;
  std::vector<std::thread> workers;
};

} // namespace paddle_runtime

#endif // PADDLE_RUNTIME_THREAD_POOL_H
