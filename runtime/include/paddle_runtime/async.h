/*===- async.h - the async runtime ABI compiled code calls --------*- C -*-===*
 *
 * Parallel loops in compiled code are split by MLIR's `async-parallel-for`
 * into blocks run as `async.execute` regions; `convert-async-to-llvm` turns
 * those into LLVM coroutines and calls to the functions below (upstream
 * names: mlirAsyncRuntimeCreateToken, ... in
 * mlir/ExecutionEngine/AsyncRuntime.h; runtime/src/symbols.cpp maps each
 * upstream name to the function here). Semantics follow upstream's
 * AsyncRuntime.cpp:
 *
 *  - Tokens, values and groups are reference counted. A token or value is
 *    created with two references: one for the caller and one that emplacing
 *    it (or setting its error) drops. A group starts with one.
 *  - A token/value is unavailable until emplaced or set to error; awaiting
 *    blocks until then. A group is ready once `size` tokens were added and
 *    all of them are ready; it is in error when any of them is.
 *  - `*_and_execute` resumes the coroutine when the awaited object is ready:
 *    at once on the calling thread if it already is, otherwise on the thread
 *    that makes it ready.
 *  - `paddle_async_execute` runs a coroutine on the thread pool, or on the
 *    calling thread when paddle_get_num_threads() == 1.
 *
 * All functions are thread-safe. Misuse that upstream asserts on (a
 * reference count below zero, more tokens than a group's size) prints a
 * message and aborts.
 *
 *===----------------------------------------------------------------------===*/

#ifndef PADDLE_RUNTIME_ASYNC_H
#define PADDLE_RUNTIME_ASYNC_H

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct paddle_async_token paddle_async_token_t;
typedef struct paddle_async_value paddle_async_value_t;
typedef struct paddle_async_group paddle_async_group_t;
/* A coroutine handle and the function that resumes it. */
typedef void (*paddle_coro_resume_t)(void *handle);

/* `object` is a token, value or group. */
void paddle_async_add_ref(void *object, int64_t count);
void paddle_async_drop_ref(void *object, int64_t count);

paddle_async_token_t *paddle_async_create_token(void);
/* A value with `size` bytes of storage. */
paddle_async_value_t *paddle_async_create_value(int64_t size);
/* A group that becomes ready after `size` tokens were added and are ready. */
paddle_async_group_t *paddle_async_create_group(int64_t size);
/* Returns the token's rank in the group (0, 1, ...). */
int64_t paddle_async_add_token_to_group(paddle_async_token_t *token,
                                        paddle_async_group_t *group);

void paddle_async_emplace_token(paddle_async_token_t *token);
void paddle_async_emplace_value(paddle_async_value_t *value);
void paddle_async_set_token_error(paddle_async_token_t *token);
void paddle_async_set_value_error(paddle_async_value_t *value);
bool paddle_async_is_token_error(paddle_async_token_t *token);
bool paddle_async_is_value_error(paddle_async_value_t *value);
bool paddle_async_is_group_error(paddle_async_group_t *group);

void paddle_async_await_token(paddle_async_token_t *token);
void paddle_async_await_value(paddle_async_value_t *value);
void paddle_async_await_all_in_group(paddle_async_group_t *group);

void *paddle_async_get_value_storage(paddle_async_value_t *value);

void paddle_async_execute(void *handle, paddle_coro_resume_t resume);
void paddle_async_await_token_and_execute(paddle_async_token_t *token,
                                          void *handle,
                                          paddle_coro_resume_t resume);
void paddle_async_await_value_and_execute(paddle_async_value_t *value,
                                          void *handle,
                                          paddle_coro_resume_t resume);
void paddle_async_await_all_in_group_and_execute(paddle_async_group_t *group,
                                                 void *handle,
                                                 paddle_coro_resume_t resume);

/* How many ways compiled code splits a parallel loop: the thread count. */
int64_t paddle_async_num_worker_threads(void);

/* Waits until every task on the thread pool has returned. A worker may
 * still be leaving a coroutine (freeing its frame) after it completed the
 * token the caller waited for: whoever unloads compiled code (the JIT's
 * JitModule, a dlclose) calls this first. Not on a worker thread. */
void paddle_async_wait_idle(void);

/* Tokens, values and groups alive now (for leak tests). */
int64_t paddle_async_live_objects(void);

#ifdef __cplusplus
}
#endif

#endif /* PADDLE_RUNTIME_ASYNC_H */
