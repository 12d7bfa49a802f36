//===- CApiTest.cpp - hostile arguments at the runtime's C API ------------===//
//
// Tensors and pointers from callers are checked at the boundary: a rank of
// 100000, dims whose product wraps to 0, a negative dim, a null tensor,
// null inputs or results are error statuses naming what was wrong, and the
// compiled function is never called with them.
//
//===----------------------------------------------------------------------===//

#include "paddle_runtime/runtime.h"

#include <gtest/gtest.h>

#include <string>

namespace {

int calls = 0;
void countingEntry(void **) { ++calls; }

const paddle_tensor_spec_t kDynamic2d[] = {
    {PADDLE_F32, 2, {PADDLE_DYNAMIC_DIM, PADDLE_DYNAMIC_DIM}}};
const paddle_function_signature_t kSignature = {"f", 1, kDynamic2d, 1,
                                                kDynamic2d};

std::string takeMessage(paddle_status_t s) {
  std::string m = s ? paddle_status_message(s) : "";
  paddle_status_free(s);
  return m;
}

TEST(CApi, InvokeRejectsMalformedTensorsWithoutCalling) {
  float one = 1;
  struct Case {
    paddle_tensor_t tensor;
    std::string message;
  } cases[] = {
      {{PADDLE_F32, 100000, {1, 1}, &one, nullptr},
       "f: input 0: rank 100000 is outside [0, 16]"},
      {{PADDLE_F32, -1, {1, 1}, &one, nullptr},
       "f: input 0: rank -1 is outside [0, 16]"},
      {{PADDLE_F32, 2, {-3, 1}, &one, nullptr},
       "f: input 0: dim 0 is negative (-3)"},
      // 2^32 * 2^32 elements wrap to 0 in 64 bits: not an empty tensor.
      {{PADDLE_F32, 2, {1ll << 32, 1ll << 32}, nullptr, nullptr},
       "f: input 0: its size overflows 64 bits (dims up to 1 multiply past "
       "2^63 bytes)"},
      {{PADDLE_F32, 2, {2, 2}, nullptr, nullptr}, "f: input 0: has no data"},
      {{(paddle_dtype_t)99, 2, {1, 1}, &one, nullptr},
       "f: input 0: invalid element type 99"},
  };
  for (const Case &c : cases) {
    paddle_tensor_t out{};
    EXPECT_EQ(takeMessage(paddle_invoke(countingEntry, &kSignature, &c.tensor,
                                        1, &out)),
              c.message);
    EXPECT_EQ(out.data, nullptr);
  }
  EXPECT_EQ(calls, 0);
}

TEST(CApi, NullPointersAreErrors) {
  float one = 1;
  paddle_tensor_t in = {PADDLE_F32, 2, {1, 1}, &one, nullptr}, out{};
  EXPECT_EQ(
      takeMessage(paddle_invoke(countingEntry, &kSignature, nullptr, 1, &out)),
      "f: null inputs");
  EXPECT_EQ(
      takeMessage(paddle_invoke(countingEntry, &kSignature, &in, 1, nullptr)),
      "f: null result pointer");
  EXPECT_EQ(calls, 0);

  paddle_exported_function_t fn = {&kSignature, countingEntry};
  paddle_executable_t exe = nullptr;
  ASSERT_EQ(
      paddle_executable_create(&fn, 1, nullptr, 0, nullptr, nullptr, &exe),
      nullptr);
  paddle_session_t session = nullptr;
  ASSERT_EQ(paddle_session_create(exe, nullptr, &session), nullptr);
  EXPECT_EQ(takeMessage(paddle_session_run(session, 0, &in, 1, nullptr, 1)),
            "f: null result pointer");
  paddle_tensor_t huge = {PADDLE_F32, 100000, {0}, &one, nullptr};
  EXPECT_EQ(takeMessage(paddle_session_run(session, 0, &huge, 1, &out, 1)),
            "f: input 0: rank 100000 is outside [0, 16]");
  EXPECT_EQ(takeMessage(paddle_session_run(nullptr, 0, &in, 1, &out, 1)),
            "paddle_session_run: null session");
  int32_t index = 0;
  EXPECT_EQ(takeMessage(paddle_executable_find(exe, "f", nullptr)),
            "paddle_executable_find: null argument");
  EXPECT_EQ(takeMessage(paddle_executable_find(nullptr, "f", &index)),
            "paddle_executable_find: null argument");
  EXPECT_EQ(paddle_executable_function_count(nullptr), 0);
  paddle_session_memory_stats(nullptr, nullptr, nullptr);
  paddle_session_free(session);
  paddle_executable_free(exe);
  EXPECT_EQ(calls, 0);

  EXPECT_EQ(takeMessage(paddle_tensor_alloc(nullptr, PADDLE_F32, 1, nullptr)),
            "paddle_tensor_alloc: null tensor");
  paddle_tensor_t t{};
  EXPECT_EQ(takeMessage(paddle_tensor_alloc(&t, PADDLE_F32, 2, nullptr)),
            "paddle_tensor_alloc: null shape");
  EXPECT_EQ(paddle_tensor_num_elements(nullptr), 0);
  paddle_tensor_free(nullptr);
}

TEST(CApi, NpyWriteChecksTheTensor) {
  paddle_tensor_t wrapping = {
      PADDLE_F32, 2, {1ll << 32, 1ll << 32}, nullptr, nullptr};
  std::string m = takeMessage(paddle_npy_write("unused.npy", &wrapping));
  EXPECT_EQ(m, "writing 'unused.npy': its size overflows 64 bits (dims up to "
               "1 multiply past 2^63 bytes)");
  m = takeMessage(paddle_npy_write("unused.npy", nullptr));
  EXPECT_EQ(m, "writing 'unused.npy': null tensor");
}

} // namespace

TEST(CApi, ForkJoinMeasurementChecksItsArguments) {
  double median = -1;
  const std::string range = "paddle_measure_fork_join: threads must be 1 to "
                            "4096 and repetitions 1 to 1000000";
  EXPECT_EQ(takeMessage(paddle_measure_fork_join(0, 10, &median)), range);
  EXPECT_EQ(takeMessage(paddle_measure_fork_join(5000, 10, &median)), range);
  EXPECT_EQ(takeMessage(paddle_measure_fork_join(2, 0, &median)), range);
  EXPECT_EQ(takeMessage(paddle_measure_fork_join(2, 10, nullptr)),
            "paddle_measure_fork_join: null argument");
  EXPECT_EQ(median, -1);
  // A real pool: the rounds ran and took time.
  EXPECT_EQ(takeMessage(paddle_measure_fork_join(2, 50, &median)), "");
  EXPECT_GT(median, 0);
}
