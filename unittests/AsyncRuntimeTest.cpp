//===- AsyncRuntimeTest.cpp - the async ABI of parallel compiled code -----===//
//
// Calls the functions compiled parallel loops call (paddle_runtime/async.h)
// the way the lowered coroutines do: a "coroutine" here is a handle plus a
// resume function, which is all the runtime sees of one.
//
//===----------------------------------------------------------------------===//

#include "paddle_runtime/async.h"
#include "paddle_runtime/runtime.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <functional>
#include <string>
#include <thread>
#include <vector>

namespace {

/// A resumable piece of work: what a coroutine frame is to the runtime.
struct Task {
  std::function<void()> body;
  static void resume(void *handle) {
    Task *task = static_cast<Task *>(handle);
    task->body();
    delete task;
  }
};

void execute(std::function<void()> body) {
  paddle_async_execute(new Task{std::move(body)}, &Task::resume);
}

void setThreads(int32_t n) {
  paddle_status_t s = paddle_set_num_threads(n);
  ASSERT_EQ(s, nullptr) << paddle_status_message(s);
}

/// Every test must release every object it creates.
class AsyncRuntime : public ::testing::TestWithParam<int32_t> {
protected:
  void SetUp() override {
    setThreads(GetParam());
    baseline = paddle_async_live_objects();
  }
  void TearDown() override {
    // Workers may still be dropping their last references.
    for (int i = 0; i < 1000 && paddle_async_live_objects() != baseline; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    EXPECT_EQ(paddle_async_live_objects(), baseline) << "leaked objects";
  }
  int64_t baseline = 0;
};

TEST_P(AsyncRuntime, TokenCompletedByATask) {
  paddle_async_token_t *token = paddle_async_create_token();
  std::atomic<bool> ran{false};
  execute([&] {
    ran = true;
    paddle_async_emplace_token(token); // drops the producer's reference
  });
  paddle_async_await_token(token);
  EXPECT_TRUE(ran.load());
  EXPECT_FALSE(paddle_async_is_token_error(token));
  paddle_async_drop_ref(token, 1);
}

TEST_P(AsyncRuntime, TokenError) {
  paddle_async_token_t *token = paddle_async_create_token();
  execute([&] { paddle_async_set_token_error(token); });
  paddle_async_await_token(token);
  EXPECT_TRUE(paddle_async_is_token_error(token));
  paddle_async_drop_ref(token, 1);
}

TEST_P(AsyncRuntime, ValueStorageAndError) {
  paddle_async_value_t *value = paddle_async_create_value(sizeof(int64_t));
  execute([&] {
    int64_t answer = 42;
    memcpy(paddle_async_get_value_storage(value), &answer, sizeof(answer));
    paddle_async_emplace_value(value);
  });
  paddle_async_await_value(value);
  EXPECT_FALSE(paddle_async_is_value_error(value));
  int64_t got = 0;
  memcpy(&got, paddle_async_get_value_storage(value), sizeof(got));
  EXPECT_EQ(got, 42);
  paddle_async_drop_ref(value, 1);

  paddle_async_value_t *failed = paddle_async_create_value(8);
  execute([&] { paddle_async_set_value_error(failed); });
  paddle_async_await_value(failed);
  EXPECT_TRUE(paddle_async_is_value_error(failed));
  paddle_async_drop_ref(failed, 1);
}

TEST_P(AsyncRuntime, GroupWaitsForEveryTokenAndCountsErrors) {
  constexpr int kTokens = 64;
  for (int errorAt : {-1, 17}) {
    paddle_async_group_t *group = paddle_async_create_group(kTokens);
    std::atomic<int> done{0};
    std::vector<int64_t> ranks;
    for (int i = 0; i < kTokens; ++i) {
      paddle_async_token_t *token = paddle_async_create_token();
      execute([&, token, i] {
        std::this_thread::sleep_for(std::chrono::microseconds(i % 7));
        ++done;
        if (i == errorAt)
          paddle_async_set_token_error(token);
        else
          paddle_async_emplace_token(token);
      });
      ranks.push_back(paddle_async_add_token_to_group(token, group));
      paddle_async_drop_ref(token, 1); // the group keeps what it needs
    }
    paddle_async_await_all_in_group(group);
    EXPECT_EQ(done.load(), kTokens);
    for (int i = 0; i < kTokens; ++i)
      EXPECT_EQ(ranks[i], i);
    EXPECT_EQ(paddle_async_is_group_error(group), errorAt >= 0);
    paddle_async_drop_ref(group, 1);
  }
}

TEST_P(AsyncRuntime, EmptyGroupIsReady) {
  paddle_async_group_t *group = paddle_async_create_group(0);
  paddle_async_await_all_in_group(group);
  EXPECT_FALSE(paddle_async_is_group_error(group));
  paddle_async_drop_ref(group, 1);
}

TEST_P(AsyncRuntime, AwaitAndExecuteResumesWhenReady) {
  // Already available: resumes at once on this thread.
  paddle_async_token_t *ready = paddle_async_create_token();
  paddle_async_emplace_token(ready);
  std::thread::id resumedOn;
  paddle_async_await_token_and_execute(
      ready, new Task{[&] { resumedOn = std::this_thread::get_id(); }},
      &Task::resume);
  EXPECT_EQ(resumedOn, std::this_thread::get_id());
  paddle_async_drop_ref(ready, 1);

  // Not yet available: resumes on the thread that emplaces it.
  paddle_async_token_t *later = paddle_async_create_token();
  paddle_async_value_t *value = paddle_async_create_value(1);
  paddle_async_group_t *group = paddle_async_create_group(1);
  std::atomic<int> resumed{0};
  std::thread::id producer;
  paddle_async_await_token_and_execute(later, new Task{[&] {
                                         resumedOn = std::this_thread::get_id();
                                         ++resumed;
                                       }},
                                       &Task::resume);
  paddle_async_await_value_and_execute(value, new Task{[&] { ++resumed; }},
                                       &Task::resume);
  paddle_async_await_all_in_group_and_execute(
      group, new Task{[&] { ++resumed; }}, &Task::resume);
  EXPECT_EQ(resumed.load(), 0);
  paddle_async_token_t *member = paddle_async_create_token();
  paddle_async_add_token_to_group(member, group);
  std::thread thread([&] {
    producer = std::this_thread::get_id();
    paddle_async_emplace_token(later);
    paddle_async_emplace_value(value);
    paddle_async_emplace_token(member);
  });
  thread.join();
  EXPECT_EQ(resumed.load(), 3);
  EXPECT_EQ(resumedOn, producer);
  for (void *object :
       {(void *)later, (void *)value, (void *)group, (void *)member})
    paddle_async_drop_ref(object, 1);
}

TEST_P(AsyncRuntime, ManyThreadsAwaitOneToken) {
  paddle_async_token_t *token = paddle_async_create_token();
  paddle_async_add_ref(token, 8); // one per waiter
  std::atomic<int> woke{0};
  std::vector<std::thread> waiters;
  for (int i = 0; i < 8; ++i)
    waiters.emplace_back([&] {
      paddle_async_await_token(token);
      ++woke;
      paddle_async_drop_ref(token, 1);
    });
  std::this_thread::sleep_for(std::chrono::milliseconds(5));
  EXPECT_EQ(woke.load(), 0);
  paddle_async_emplace_token(token);
  for (std::thread &t : waiters)
    t.join();
  EXPECT_EQ(woke.load(), 8);
  paddle_async_drop_ref(token, 1);
}

TEST_P(AsyncRuntime, CallerDropsBeforeTheTaskCompletes) {
  // The caller lets go of the token and of the group before the task runs:
  // the producer's reference keeps the token, the pending token the group.
  std::atomic<bool> go{false}, finished{false};
  paddle_async_token_t *token = paddle_async_create_token();
  paddle_async_group_t *group = paddle_async_create_group(1);
  paddle_async_add_token_to_group(token, group);
  std::thread producer([&] {
    while (!go)
      std::this_thread::yield();
    paddle_async_emplace_token(token);
    finished = true;
  });
  paddle_async_drop_ref(token, 1);
  paddle_async_drop_ref(group, 1);
  EXPECT_GE(paddle_async_live_objects(), baseline + 2);
  go = true;
  producer.join();
  EXPECT_TRUE(finished.load());
}

TEST_P(AsyncRuntime, NestedWaitsOnWorkersDoNotDeadlock) {
  // Every task waits for a subtask queued behind it (nested parallel
  // loops); waiting workers run queued tasks meanwhile.
  constexpr int kOuter = 16;
  paddle_async_group_t *outer = paddle_async_create_group(kOuter);
  std::atomic<int> inner{0};
  for (int i = 0; i < kOuter; ++i) {
    paddle_async_token_t *token = paddle_async_create_token();
    execute([&, token] {
      paddle_async_token_t *sub = paddle_async_create_token();
      execute([&, sub] {
        ++inner;
        paddle_async_emplace_token(sub);
      });
      paddle_async_await_token(sub);
      paddle_async_drop_ref(sub, 1);
      paddle_async_emplace_token(token);
    });
    paddle_async_add_token_to_group(token, outer);
    paddle_async_drop_ref(token, 1);
  }
  paddle_async_await_all_in_group(outer);
  EXPECT_EQ(inner.load(), kOuter);
  paddle_async_drop_ref(outer, 1);
}

TEST_P(AsyncRuntime, ExecuteRunsInlineOnlyWithOneThread) {
  // With more threads the task is queued: a worker runs it, or the caller
  // once it awaits the token, never execute() itself.
  std::atomic<bool> inExecute{true};
  bool ranInline = false;
  std::thread::id caller = std::this_thread::get_id();
  paddle_async_token_t *token = paddle_async_create_token();
  execute([&] {
    ranInline = std::this_thread::get_id() == caller && inExecute.load();
    paddle_async_emplace_token(token);
  });
  inExecute = false;
  paddle_async_await_token(token);
  paddle_async_drop_ref(token, 1);
  EXPECT_EQ(ranInline, GetParam() == 1);
  EXPECT_EQ(paddle_async_num_worker_threads(), GetParam());
}

TEST_P(AsyncRuntime, WaitIdleWaitsForTasksPastTheirToken) {
  // A coroutine goes on (frees its frame, returns) after completing the
  // token its caller awaits; code must not be unloaded before it returns.
  std::atomic<bool> returned{false};
  paddle_async_token_t *token = paddle_async_create_token();
  execute([&, token] {
    paddle_async_emplace_token(token);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    returned = true;
  });
  paddle_async_await_token(token);
  paddle_async_drop_ref(token, 1);
  paddle_async_wait_idle();
  EXPECT_TRUE(returned.load());
}

INSTANTIATE_TEST_SUITE_P(Threads, AsyncRuntime, ::testing::Values(1, 2, 4),
                         [](const auto &info) {
                           return std::to_string(info.param);
                         });

TEST(Threads, AwaitingCallerRunsQueuedTasks) {
  // Two threads: the caller and one worker. With the worker held by a task,
  // the caller awaiting a second task's token runs that task itself instead
  // of sleeping until the worker is free.
  setThreads(2);
  std::atomic<bool> release{false}, holding{false};
  paddle_async_token_t *held = paddle_async_create_token();
  execute([&] {
    holding = true;
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (!release && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    paddle_async_emplace_token(held);
  });
  while (!holding)
    std::this_thread::yield();
  std::thread::id ranOn;
  paddle_async_token_t *token = paddle_async_create_token();
  execute([&] {
    ranOn = std::this_thread::get_id();
    paddle_async_emplace_token(token);
  });
  paddle_async_await_token(token);
  EXPECT_FALSE(release.load());
  EXPECT_EQ(ranOn, std::this_thread::get_id());
  release = true;
  paddle_async_await_token(held);
  paddle_async_drop_ref(token, 1);
  paddle_async_drop_ref(held, 1);
  paddle_async_wait_idle();
  setThreads(1);
}

TEST(Threads, SetAndGet) {
  setThreads(3);
  EXPECT_EQ(paddle_get_num_threads(), 3);
  setThreads(1);
  EXPECT_EQ(paddle_get_num_threads(), 1);
  for (int32_t bad : {0, -2, 100000}) {
    paddle_status_t s = paddle_set_num_threads(bad);
    ASSERT_NE(s, nullptr);
    EXPECT_EQ(paddle_status_code(s), PADDLE_INVALID_ARGUMENT);
    EXPECT_NE(std::string(paddle_status_message(s)).find("from 1 to"),
              std::string::npos);
    paddle_status_free(s);
  }
  EXPECT_EQ(paddle_get_num_threads(), 1);
}

TEST(Threads, SetFromAWorkerIsAnError) {
  setThreads(2);
  paddle_async_token_t *token = paddle_async_create_token();
  paddle_status_code_t code = PADDLE_OK;
  execute([&] {
    paddle_status_t s = paddle_set_num_threads(4);
    code = paddle_status_code(s);
    paddle_status_free(s);
    paddle_async_emplace_token(token);
  });
  paddle_async_await_token(token);
  paddle_async_drop_ref(token, 1);
  EXPECT_EQ(code, PADDLE_INVALID_ARGUMENT);
  EXPECT_EQ(paddle_get_num_threads(), 2);
}

/// A packed function whose run-time check fails on a worker thread: it must
/// abort there, never longjmp into paddle_invoke on the caller's thread.
void failOnWorkerPacked(void **) {
  paddle_async_token_t *token = paddle_async_create_token();
  execute([token] {
    paddle_runtime_fail(PADDLE_INVALID_ARGUMENT, "check failed on a worker");
    paddle_async_emplace_token(token);
  });
  paddle_async_await_token(token);
}

void invokeFailOnWorker() {
  setThreads(2);
  paddle_function_signature_t sig = {"fails", 0, nullptr, 0, nullptr};
  paddle_status_t s =
      paddle_invoke(&failOnWorkerPacked, &sig, nullptr, 0, nullptr);
  paddle_status_free(s);
}

TEST(ThreadsDeathTest, RuntimeFailOnAWorkerAborts) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(invokeFailOnWorker(),
               "paddle runtime error: check failed on a worker");
}

TEST(ThreadsDeathTest, MisuseAborts) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(
      {
        paddle_async_group_t *group = paddle_async_create_group(1);
        paddle_async_drop_ref(group, 2);
      },
      "reference count dropped below zero");
  EXPECT_DEATH(
      {
        paddle_async_group_t *group = paddle_async_create_group(1);
        paddle_async_token_t *a = paddle_async_create_token();
        paddle_async_token_t *b = paddle_async_create_token();
        paddle_async_add_token_to_group(a, group);
        paddle_async_add_token_to_group(b, group);
      },
      "more tokens added to an async group than its size");
  EXPECT_DEATH(
      {
        paddle_async_token_t *token = paddle_async_create_token();
        paddle_async_emplace_token(token);
        paddle_async_emplace_token(token);
      },
      "completed twice");
}

} // namespace
