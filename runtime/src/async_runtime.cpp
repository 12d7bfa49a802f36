//===- async_runtime.cpp - the async runtime ABI over our thread pool -----===//
//
// What compiled parallel loops call (see paddle_runtime/async.h): MLIR's
// `convert-async-to-llvm` emits calls to the upstream ABI
// (mlir/ExecutionEngine/AsyncRuntime.h), which symbols.cpp maps to these
// functions. The semantics follow upstream's AsyncRuntime.cpp so that the
// reference counting the compiler inserts (async-runtime-ref-counting) is
// balanced against this implementation; only the thread pool is ours.
//
//===----------------------------------------------------------------------===//

#include "paddle_runtime/async.h"
#include "paddle_runtime/runtime.h"
#include "thread_pool.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

using paddle_runtime::ThreadPool;

namespace {

[[noreturn]] void fatal(const char *message) {
  fprintf(stderr, "paddle async runtime error: %s\n", message);
  abort();
}

std::atomic<int64_t> liveObjects{0};

/// Base of tokens, values and groups: compiled code adds and drops
/// references through one entry point without knowing which kind it holds.
struct RefCounted {
  explicit RefCounted(int64_t count) : refCount(count) { ++liveObjects; }
  virtual ~RefCounted() { --liveObjects; }
  RefCounted(const RefCounted &) = delete;
  RefCounted &operator=(const RefCounted &) = delete;

  void addRef(int64_t count) { refCount.fetch_add(count); }
  void dropRef(int64_t count) {
    int64_t previous = refCount.fetch_sub(count);
    if (previous < count)
      fatal("reference count dropped below zero");
    if (previous == count)
      delete this;
  }

  std::atomic<int64_t> refCount;
};

enum class State { Unavailable, Available, Error };

std::shared_ptr<ThreadPool> sharedPool();

/// Waits until `ready()` holds under `lock`. A pool worker keeps running
/// queued tasks meanwhile: if it slept, the task it waits for could sit in
/// the queue behind other waiting workers forever (nested parallel loops).
template <typename Ready>
void waitUntil(std::unique_lock<std::mutex> &lock, std::condition_variable &cv,
               Ready ready) {
  ThreadPool *pool = ThreadPool::current();
  if (!pool) {
    if (ready())
      return;
    // The state the predicates read is atomic: poll without the lock.
    lock.unlock();
    // The caller of a parallel loop runs queued blocks as well, rather than
    // leave them all to workers that may first have to be woken up.
    if (std::shared_ptr<ThreadPool> shared = sharedPool())
      while (!ready() && shared->runOneTask()) {
      }
    paddle_runtime::spinUntil(ready);
    lock.lock();
    cv.wait(lock, ready);
    return;
  }
  while (!ready()) {
    lock.unlock();
    bool ran = pool->runOneTask();
    lock.lock();
    if (!ran)
      cv.wait_for(lock, std::chrono::milliseconds(1), ready);
  }
}

//===--- Thread count and the pool ----------------------------------------===//

constexpr int32_t kMaxThreads = 4096;

std::mutex configMutex;
int32_t numThreads = 0; // 0: not decided yet.
std::shared_ptr<ThreadPool> pool;

int32_t defaultNumThreads() {
  if (const char *env = getenv("PADDLE_NUM_THREADS")) {
    char *end = nullptr;
    long n = strtol(env, &end, 10);
    if (*env && !*end && n >= 1 && n <= kMaxThreads)
      return static_cast<int32_t>(n);
    fprintf(stderr,
            "paddle: ignoring PADDLE_NUM_THREADS='%s' (expected an integer "
            "from 1 to %d)\n",
            env, kMaxThreads);
  }
  unsigned hardware = std::thread::hardware_concurrency();
  return hardware ? static_cast<int32_t>(hardware) : 1;
}

int32_t numThreadsLocked() {
  if (numThreads == 0)
    numThreads = defaultNumThreads();
  return numThreads;
}

/// The pool, if one was started.
std::shared_ptr<ThreadPool> sharedPool() {
  std::lock_guard<std::mutex> lock(configMutex);
  return pool;
}

/// Runs `task` on the pool, or on this thread when there is one thread.
void run(std::function<void()> task) {
  {
    std::lock_guard<std::mutex> lock(configMutex);
    int32_t n = numThreadsLocked();
    if (n > 1) {
      // The calling thread runs the first block of every parallel loop,
      // then queued blocks while it waits (waitUntil): n threads of work
      // need n - 1 workers. With n workers, on 2 cores, the third thread
      // shared a core with a block after every oneDNN call, whose OpenMP
      // workers spin a while before they sleep (docs/architecture.md,
      // "Threads").
      if (!pool)
        pool = std::make_shared<ThreadPool>(n - 1);
      pool->submit(std::move(task));
      return;
    }
  }
  task();
}

} // namespace

//===--- Tokens, values, groups -------------------------------------------===//

struct paddle_async_token : RefCounted {
  // Two references: the caller's, and the one emplacing drops, so the token
  // outlives its task even if the caller drops its reference first.
  paddle_async_token() : RefCounted(2) {}
  std::atomic<State> state{State::Unavailable};
  std::mutex mu;
  std::condition_variable cv;
  std::vector<std::function<void()>> awaiters;
};

struct paddle_async_value : RefCounted {
  explicit paddle_async_value(int64_t size)
      : RefCounted(2), storage(static_cast<size_t>(size)) {}
  std::atomic<State> state{State::Unavailable};
  std::vector<std::byte> storage;
  std::mutex mu;
  std::condition_variable cv;
  std::vector<std::function<void()>> awaiters;
};

struct paddle_async_group : RefCounted {
  explicit paddle_async_group(int64_t size)
      : RefCounted(1), size(size), pendingTokens(size) {}
  const int64_t size;
  std::atomic<int64_t> pendingTokens;
  std::atomic<int64_t> numErrors{0};
  std::atomic<int64_t> rank{0};
  std::mutex mu;
  std::condition_variable cv;
  std::vector<std::function<void()>> awaiters;
};

namespace {

/// Moves a token or value into a terminal state and runs its awaiters.
template <typename Object> void setState(Object *object, State state) {
  {
    std::lock_guard<std::mutex> lock(object->mu);
    if (object->state != State::Unavailable)
      fatal("an async token or value was completed twice");
    object->state = state;
    object->cv.notify_all();
    for (auto &awaiter : object->awaiters)
      awaiter();
    object->awaiters.clear();
  }
  // The reference the object was created with for its producer.
  object->dropRef(1);
}

template <typename Object> void awaitObject(Object *object) {
  std::unique_lock<std::mutex> lock(object->mu);
  waitUntil(lock, object->cv,
            [object] { return object->state != State::Unavailable; });
}

template <typename Object>
void awaitAndExecute(Object *object, void *handle,
                     paddle_coro_resume_t resume) {
  std::unique_lock<std::mutex> lock(object->mu);
  if (object->state != State::Unavailable) {
    lock.unlock();
    resume(handle);
    return;
  }
  object->awaiters.emplace_back([handle, resume] { resume(handle); });
}

} // namespace

extern "C" void paddle_async_add_ref(void *object, int64_t count) {
  static_cast<RefCounted *>(object)->addRef(count);
}

extern "C" void paddle_async_drop_ref(void *object, int64_t count) {
  static_cast<RefCounted *>(object)->dropRef(count);
}

extern "C" paddle_async_token_t *paddle_async_create_token(void) {
  return new paddle_async_token();
}

extern "C" paddle_async_value_t *paddle_async_create_value(int64_t size) {
  if (size < 0)
    fatal("async value with a negative size");
  return new paddle_async_value(size);
}

extern "C" paddle_async_group_t *paddle_async_create_group(int64_t size) {
  if (size < 0)
    fatal("async group with a negative size");
  return new paddle_async_group(size);
}

extern "C" int64_t
paddle_async_add_token_to_group(paddle_async_token_t *token,
                                paddle_async_group_t *group) {
  // Lock order everywhere: token, then group.
  std::lock_guard<std::mutex> lockToken(token->mu);
  std::lock_guard<std::mutex> lockGroup(group->mu);
  int64_t rank = group->rank.fetch_add(1);
  if (rank >= group->size)
    fatal("more tokens added to an async group than its size");

  // Runs with the group locked.
  auto onTokenReady = [group, token] {
    if (token->state == State::Error)
      group->numErrors.fetch_add(1);
    if (group->pendingTokens.fetch_sub(1) == 1) {
      group->cv.notify_all();
      for (auto &awaiter : group->awaiters)
        awaiter();
      group->awaiters.clear();
    }
  };

  if (token->state != State::Unavailable) {
    onTokenReady();
  } else {
    // The token completes later, maybe after the caller dropped the group:
    // keep the group alive until then.
    group->addRef(1);
    token->awaiters.emplace_back([group, onTokenReady] {
      {
        std::lock_guard<std::mutex> lock(group->mu);
        onTokenReady();
      }
      group->dropRef(1);
    });
  }
  return rank;
}

extern "C" void paddle_async_emplace_token(paddle_async_token_t *token) {
  setState(token, State::Available);
}

extern "C" void paddle_async_emplace_value(paddle_async_value_t *value) {
  setState(value, State::Available);
}

extern "C" void paddle_async_set_token_error(paddle_async_token_t *token) {
  setState(token, State::Error);
}

extern "C" void paddle_async_set_value_error(paddle_async_value_t *value) {
  setState(value, State::Error);
}

extern "C" bool paddle_async_is_token_error(paddle_async_token_t *token) {
  return token->state == State::Error;
}

extern "C" bool paddle_async_is_value_error(paddle_async_value_t *value) {
  return value->state == State::Error;
}

extern "C" bool paddle_async_is_group_error(paddle_async_group_t *group) {
  return group->numErrors.load() > 0;
}

extern "C" void paddle_async_await_token(paddle_async_token_t *token) {
  awaitObject(token);
}

extern "C" void paddle_async_await_value(paddle_async_value_t *value) {
  awaitObject(value);
}

extern "C" void paddle_async_await_all_in_group(paddle_async_group_t *group) {
  std::unique_lock<std::mutex> lock(group->mu);
  waitUntil(lock, group->cv, [group] { return group->pendingTokens == 0; });
}

extern "C" void *paddle_async_get_value_storage(paddle_async_value_t *value) {
  return value->storage.data();
}

extern "C" void paddle_async_execute(void *handle,
                                     paddle_coro_resume_t resume) {
  run([handle, resume] { resume(handle); });
}

extern "C" void
paddle_async_await_token_and_execute(paddle_async_token_t *token, void *handle,
                                     paddle_coro_resume_t resume) {
  awaitAndExecute(token, handle, resume);
}

extern "C" void
paddle_async_await_value_and_execute(paddle_async_value_t *value, void *handle,
                                     paddle_coro_resume_t resume) {
  awaitAndExecute(value, handle, resume);
}

extern "C" void paddle_async_await_all_in_group_and_execute(
    paddle_async_group_t *group, void *handle, paddle_coro_resume_t resume) {
  std::unique_lock<std::mutex> lock(group->mu);
  if (group->pendingTokens == 0) {
    lock.unlock();
    resume(handle);
    return;
  }
  group->awaiters.emplace_back([handle, resume] { resume(handle); });
}

extern "C" int64_t paddle_async_num_worker_threads(void) {
  return paddle_get_num_threads();
}

extern "C" void paddle_async_wait_idle(void) {
  if (ThreadPool::current())
    fatal("paddle_async_wait_idle called from a worker thread");
  if (std::shared_ptr<ThreadPool> current = sharedPool())
    current->waitIdle();
}

extern "C" int64_t paddle_async_live_objects(void) {
  return liveObjects.load();
}

//===--- Thread count (runtime.h) -----------------------------------------===//

extern "C" paddle_status_t paddle_set_num_threads(int32_t n) {
  if (n < 1 || n > kMaxThreads)
    return paddle_status_create(
        PADDLE_INVALID_ARGUMENT,
        "the number of threads must be from 1 to %d, got %d", kMaxThreads, n);
  if (ThreadPool::current())
    return paddle_status_create(
        PADDLE_INVALID_ARGUMENT,
        "paddle_set_num_threads called from a worker thread");
  std::shared_ptr<ThreadPool> old;
  {
    std::lock_guard<std::mutex> lock(configMutex);
    numThreads = n;
    if (pool && pool->numWorkers() != n - 1)
      old = std::move(pool);
  }
  // Outside the lock: the old pool finishes its queued tasks, which may
  // submit more (to the new pool).
  old.reset();
  return nullptr;
}

extern "C" int32_t paddle_get_num_threads(void) {
  std::lock_guard<std::mutex> lock(configMutex);
  return numThreadsLocked();
}
