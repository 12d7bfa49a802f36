/* Per-call cost of a compiled function reached three ways (built and run by
 * benchmarks/call_overhead.py against `paddle-compile --emit so tiny.mlir`):
 *   direct   the compiled code's C interface, no runtime (the floor)
 *   typed    the generated typed entry point (paddle_invoke: checks,
 *            descriptors, result adoption)
 *   session  paddle_session_run on an executable over the module's table
 * Every variant frees the result it gets, so all do the same allocation.
 * Prints one line per variant: median ns per call over REPEATS batches. */
#include "tiny.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

typedef struct {
  float *allocated, *aligned;
  int64_t offset, size, stride;
} memref1d;
extern void _mlir_ciface_paddle_impl_tiny(memref1d *result, memref1d *x);

enum { CALLS = 200000, REPEATS = 15 };

static double now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e9 + t.tv_nsec;
}

static int compare(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static float input = 3.0f;
static paddle_session_t session;

static void direct(void) {
  memref1d x = {&input, &input, 0, 1, 1}, r;
  _mlir_ciface_paddle_impl_tiny(&r, &x);
  free(r.allocated);
}

static void typed(void) {
  paddle_tensor_t x = {PADDLE_F32, 1, {1}, &input}, r;
  if (tiny(&x, &r))
    abort();
  paddle_tensor_free(&r);
}

static void via_session(void) {
  paddle_tensor_t x = {PADDLE_F32, 1, {1}, &input}, r;
  if (paddle_session_run(session, 0, &x, 1, &r, 1))
    abort();
  paddle_tensor_free(&r);
}

static double median_ns(void (*fn)(void)) {
  double per[REPEATS];
  for (int k = 0; k < REPEATS; ++k) {
    double t = now_ns();
    for (int i = 0; i < CALLS; ++i)
      fn();
    per[k] = (now_ns() - t) / CALLS;
  }
  qsort(per, REPEATS, sizeof per[0], compare);
  return per[REPEATS / 2];
}

int main(void) {
  paddle_executable_t exe;
  if (paddle_executable_create(paddle_module_functions,
                               paddle_module_function_count, NULL, 0, NULL,
                               NULL, &exe) ||
      paddle_session_create(exe, NULL, &session))
    return 1;
  /* Interleave the variants so drift hits all of them alike. */
  double d = 0, t = 0, s = 0;
  for (int round = 0; round < 3; ++round) {
    d += median_ns(direct);
    t += median_ns(typed);
    s += median_ns(via_session);
  }
  printf("direct %.1f\ntyped %.1f\nsession %.1f\n", d / 3, t / 3, s / 3);
  paddle_session_free(session);
  paddle_executable_free(exe);
  return 0;
}
