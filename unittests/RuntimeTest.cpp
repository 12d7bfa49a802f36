//===- RuntimeTest.cpp - tensors and the calling convention ---------------===//
//
// The packed functions here are written by hand to the ABI that compiled
// code follows (see runtime.h), so the runtime is tested without a compiler.
//
//===----------------------------------------------------------------------===//

#include "paddle_runtime/runtime.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <string>

namespace {

void *lastAllocation = nullptr;

/// f(x: tensor<?xf32>) -> tensor<?xf32> computing x + 1 into a malloc'd
/// buffer, returned with a non-trivial layout (stride 2 into a larger
/// buffer) to exercise the strided copy-out.
void addOnePacked(void **args) {
  float *aligned = *(float **)args[1];
  int64_t offset = *(int64_t *)args[2];
  int64_t size = *(int64_t *)args[3];
  int64_t stride = *(int64_t *)args[4];
  int64_t *result = (int64_t *)args[5];
  float *out = (float *)malloc(sizeof(float) * 2 * size + sizeof(float));
  for (int64_t i = 0; i < size; ++i)
    out[1 + 2 * i] = aligned[offset + i * stride] + 1;
  result[0] = (int64_t)(uintptr_t)out; // allocated
  result[1] = (int64_t)(uintptr_t)out; // aligned
  result[2] = 1;                       // offset
  result[3] = size;
  result[4] = 2;
  lastAllocation = out;
}

/// f(x: tensor<?xf32>) -> tensor<?xf32>: a dense x * 3.
void tripleDensePacked(void **args) {
  float *aligned = *(float **)args[1];
  int64_t size = *(int64_t *)args[3];
  int64_t *result = (int64_t *)args[5];
  float *out = (float *)malloc(sizeof(float) * size);
  for (int64_t i = 0; i < size; ++i)
    out[i] = 3 * aligned[i];
  result[0] = result[1] = (int64_t)(uintptr_t)out;
  result[2] = 0;
  result[3] = size;
  result[4] = 1;
  lastAllocation = out;
}

/// f(x: tensor<?xf32>) -> (tensor<?xf32>, tensor<?xf32>): 2 * x, returned
/// twice from one dense buffer (as `return %y, %y` does).
void doubleTwicePacked(void **args) {
  float *aligned = *(float **)args[1];
  int64_t size = *(int64_t *)args[3];
  int64_t *result = (int64_t *)args[5];
  float *out = (float *)malloc(sizeof(float) * size);
  for (int64_t i = 0; i < size; ++i)
    out[i] = 2 * aligned[i];
  for (int k = 0; k < 2; ++k) {
    int64_t *d = result + 5 * k;
    d[0] = d[1] = (int64_t)(uintptr_t)out;
    d[2] = 0;
    d[3] = size;
    d[4] = 1;
  }
  lastAllocation = out;
}

const paddle_tensor_spec_t kVectorF32 = {PADDLE_F32, 1, {PADDLE_DYNAMIC_DIM}};
const paddle_function_signature_t kAddOne = {"add_one", 1, &kVectorF32, 1,
                                             &kVectorF32};

paddle_tensor_t vector(float *data, int64_t n) {
  paddle_tensor_t t{};
  t.dtype = PADDLE_F32;
  t.rank = 1;
  t.shape[0] = n;
  t.data = data;
  return t;
}

std::string message(paddle_status_t s) {
  std::string m = paddle_status_message(s);
  paddle_status_free(s);
  return m;
}

TEST(Invoke, CallsAndCopiesStridedResult) {
  float x[4] = {1, 2, 3, 4};
  paddle_tensor_t in = vector(x, 4);
  paddle_tensor_t out{};
  int64_t copies = paddle_invoke_copied_results();
  paddle_status_t s = paddle_invoke(addOnePacked, &kAddOne, &in, 1, &out);
  ASSERT_EQ(s, nullptr) << message(s);
  EXPECT_EQ(paddle_invoke_copied_results() - copies, 1);
  ASSERT_EQ(out.rank, 1);
  ASSERT_EQ(out.shape[0], 4);
  for (int i = 0; i < 4; ++i)
    EXPECT_EQ(((float *)out.data)[i], x[i] + 1);
  paddle_tensor_free(&out);
}

TEST(Invoke, AdoptsADenseResultWithoutCopy) {
  float x[3] = {1, 2, 3};
  paddle_tensor_t in = vector(x, 3);
  paddle_tensor_t out{};
  int64_t copies = paddle_invoke_copied_results();
  paddle_status_t s = paddle_invoke(tripleDensePacked, &kAddOne, &in, 1, &out);
  ASSERT_EQ(s, nullptr) << message(s);
  EXPECT_EQ(out.data, lastAllocation);
  EXPECT_EQ(paddle_invoke_copied_results(), copies);
  EXPECT_EQ(((float *)out.data)[2], 9);
  paddle_tensor_free(&out);
}

TEST(Invoke, PacksStridedInputs) {
  // Every other element, backwards: data points at element 0 of the view,
  // as NumPy's does for a[::-2].
  float storage[9] = {0, 1, 2, 3, 4, 5, 6, 7, 8};
  const int64_t strides[1] = {-2};
  paddle_tensor_t in{PADDLE_F32, 1, {5}, &storage[8], strides};
  paddle_tensor_t out{};
  ASSERT_EQ(paddle_invoke(tripleDensePacked, &kAddOne, &in, 1, &out), nullptr);
  const float expect[5] = {24, 18, 12, 6, 0};
  for (int i = 0; i < 5; ++i)
    EXPECT_EQ(((float *)out.data)[i], expect[i]);
  EXPECT_EQ(out.strides, nullptr);
  paddle_tensor_free(&out);
  // A broadcast (stride 0) view of one element.
  const int64_t zero[1] = {0};
  paddle_tensor_t broadcast{PADDLE_F32, 1, {4}, &storage[3], zero};
  ASSERT_EQ(paddle_invoke(tripleDensePacked, &kAddOne, &broadcast, 1, &out),
            nullptr);
  for (int i = 0; i < 4; ++i)
    EXPECT_EQ(((float *)out.data)[i], 9);
  paddle_tensor_free(&out);
  // Dense strides are passed through as they are.
  const int64_t unit[1] = {1};
  paddle_tensor_t dense{PADDLE_F32, 1, {3}, &storage[1], unit};
  ASSERT_EQ(paddle_invoke(tripleDensePacked, &kAddOne, &dense, 1, &out),
            nullptr);
  EXPECT_EQ(((float *)out.data)[2], 9);
  paddle_tensor_free(&out);
}

TEST(Invoke, StridedTensorsAreNotWrittenToNpy) {
  float v[2] = {1, 2};
  const int64_t strides[1] = {1};
  paddle_tensor_t t{PADDLE_F32, 1, {2}, v, strides};
  paddle_status_t s = paddle_npy_write("/tmp/never-written.npy", &t);
  ASSERT_NE(s, nullptr);
  EXPECT_NE(std::string(paddle_status_message(s)).find("strided"),
            std::string::npos);
  paddle_status_free(s);
}

TEST(Invoke, CopiesResultsThatShareABuffer) {
  const paddle_tensor_spec_t outs[2] = {kVectorF32, kVectorF32};
  const paddle_function_signature_t sig = {"twice", 1, &kVectorF32, 2, outs};
  float x[2] = {1, -4};
  paddle_tensor_t in = vector(x, 2);
  paddle_tensor_t out[2] = {};
  int64_t copies = paddle_invoke_copied_results();
  paddle_status_t s = paddle_invoke(doubleTwicePacked, &sig, &in, 1, out);
  ASSERT_EQ(s, nullptr) << message(s);
  EXPECT_EQ(paddle_invoke_copied_results() - copies, 2);
  EXPECT_NE(out[0].data, out[1].data);
  EXPECT_NE(out[0].data, lastAllocation);
  EXPECT_EQ(((float *)out[1].data)[1], -8);
  paddle_tensor_free(&out[0]);
  paddle_tensor_free(&out[1]);
}

TEST(Invoke, RejectsWrongInputCount) {
  paddle_tensor_t out{};
  paddle_status_t s = paddle_invoke(addOnePacked, &kAddOne, nullptr, 0, &out);
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(paddle_status_code(s), PADDLE_INVALID_ARGUMENT);
  EXPECT_EQ(message(s), "add_one: expects 1 inputs, got 0");
}

TEST(Invoke, RejectsWrongDtypeAndShape) {
  int32_t xi[2] = {1, 2};
  paddle_tensor_t in{};
  in.dtype = PADDLE_I32;
  in.rank = 1;
  in.shape[0] = 2;
  in.data = xi;
  paddle_tensor_t out{};
  EXPECT_EQ(message(paddle_invoke(addOnePacked, &kAddOne, &in, 1, &out)),
            "add_one: input 0 has element type i32, expected f32");

  const paddle_tensor_spec_t fixed = {PADDLE_F32, 2, {2, 3}};
  const paddle_function_signature_t sig = {"g", 1, &fixed, 1, &fixed};
  float x[6] = {};
  paddle_tensor_t m{};
  m.dtype = PADDLE_F32;
  m.rank = 2;
  m.shape[0] = 3;
  m.shape[1] = 2;
  m.data = x;
  EXPECT_EQ(message(paddle_invoke(addOnePacked, &sig, &m, 1, &out)),
            "g: input 0 has shape [3, 2], expected [2, 3]");
  paddle_tensor_t v = vector(x, 6);
  EXPECT_EQ(message(paddle_invoke(addOnePacked, &sig, &v, 1, &out)),
            "g: input 0 has shape [6], expected [2, 3]");
  EXPECT_EQ(out.data, nullptr);
}

TEST(Tensor, EmptyWithHugeDimsHasZeroElements) {
  // Found by the .npy fuzzer: huge dims before a zero dim overflowed the
  // element count (undefined behaviour) instead of giving 0.
  paddle_tensor_t t{};
  t.dtype = PADDLE_I1;
  t.rank = 4;
  int64_t shape[4] = {4, 6666666666666666660, 5, 0};
  memcpy(t.shape, shape, sizeof(shape));
  EXPECT_EQ(paddle_tensor_num_elements(&t), 0);
}

TEST(Tensor, AllocValidates) {
  paddle_tensor_t t{};
  int64_t bad[1] = {-3};
  paddle_status_t s = paddle_tensor_alloc(&t, PADDLE_F32, 1, bad);
  ASSERT_NE(s, nullptr);
  EXPECT_NE(message(s).find("negative size"), std::string::npos);

  int64_t huge[2] = {INT64_MAX / 2, 16};
  s = paddle_tensor_alloc(&t, PADDLE_F64, 2, huge);
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(paddle_status_code(s), PADDLE_OUT_OF_MEMORY);
  paddle_status_free(s);

  s = paddle_tensor_alloc(&t, PADDLE_F32, PADDLE_MAX_RANK + 1, bad);
  ASSERT_NE(s, nullptr);
  paddle_status_free(s);

  int64_t empty[2] = {0, 5};
  ASSERT_EQ(paddle_tensor_alloc(&t, PADDLE_I8, 2, empty), nullptr);
  EXPECT_EQ(paddle_tensor_num_elements(&t), 0);
  paddle_tensor_free(&t);
}

TEST(Status, OkIsNull) {
  EXPECT_EQ(paddle_status_code(nullptr), PADDLE_OK);
  EXPECT_STREQ(paddle_status_message(nullptr), "ok");
  paddle_status_free(nullptr);
}

TEST(Dtype, SizesAndNames) {
  EXPECT_EQ(paddle_dtype_size(PADDLE_BF16), 2u);
  EXPECT_EQ(paddle_dtype_size(PADDLE_I1), 1u);
  EXPECT_EQ(paddle_dtype_size(PADDLE_DTYPE_INVALID), 0u);
  EXPECT_STREQ(paddle_dtype_name(PADDLE_I64), "i64");
}

} // namespace
