//===- tensor.cpp - runtime tensors
//----------------------------------------===//

#include "paddle_runtime/runtime.h"
#include "tensor_check.h"

#include <cstdlib>
#include <cstring>
#include <limits>

extern "C" size_t paddle_dtype_size(paddle_dtype_t dtype) {
  switch (dtype) {
  case PADDLE_F32:
  case PADDLE_I32:
    return 4;
  case PADDLE_F16:
  case PADDLE_BF16:
    return 2;
  case PADDLE_F64:
  case PADDLE_I64:
    return 8;
  case PADDLE_I1:
  case PADDLE_I8:
    return 1;
  default:
    return 0;
  }
}

extern "C" const char *paddle_dtype_name(paddle_dtype_t dtype) {
  switch (dtype) {
  case PADDLE_F32:
    return "f32";
  case PADDLE_F16:
    return "f16";
  case PADDLE_BF16:
    return "bf16";
  case PADDLE_F64:
    return "f64";
  case PADDLE_I1:
    return "i1";
  case PADDLE_I8:
    return "i8";
  case PADDLE_I32:
    return "i32";
  case PADDLE_I64:
    return "i64";
  default:
    return "invalid";
  }
}

extern "C" int64_t paddle_tensor_num_elements(const paddle_tensor_t *tensor) {
  if (!tensor || tensor->rank < 0 || tensor->rank > PADDLE_MAX_RANK)
    return 0;
  // A zero dim makes the tensor empty whatever the other dims are; checking
  // first keeps huge dims next to a zero (which paddle_tensor_alloc accepts)
  // from overflowing the product.
  for (int32_t i = 0; i < tensor->rank; ++i)
    if (tensor->shape[i] == 0)
      return 0;
  int64_t n = 1;
  for (int32_t i = 0; i < tensor->rank; ++i)
    n *= tensor->shape[i];
  return n;
}

extern "C" paddle_status_t paddle_tensor_alloc(paddle_tensor_t *tensor,
                                               paddle_dtype_t dtype,
                                               int32_t rank,
                                               const int64_t *shape) {
  if (!tensor)
    return paddle_status_create(PADDLE_INVALID_ARGUMENT,
                                "paddle_tensor_alloc: null tensor");
  memset(tensor, 0, sizeof(*tensor));
  size_t elementSize = paddle_dtype_size(dtype);
  if (!elementSize)
    return paddle_status_create(PADDLE_INVALID_ARGUMENT, "invalid dtype %d",
                                (int)dtype);
  if (rank < 0 || rank > PADDLE_MAX_RANK)
    return paddle_status_create(PADDLE_INVALID_ARGUMENT,
                                "rank %d is outside [0, %d]", rank,
                                PADDLE_MAX_RANK);
  if (rank > 0 && !shape)
    return paddle_status_create(PADDLE_INVALID_ARGUMENT,
                                "paddle_tensor_alloc: null shape");
  uint64_t bytes = elementSize;
  for (int32_t i = 0; i < rank; ++i) {
    if (shape[i] < 0)
      return paddle_status_create(PADDLE_INVALID_ARGUMENT,
                                  "negative size %lld in dim %d",
                                  (long long)shape[i], i);
    if (shape[i] &&
        bytes > std::numeric_limits<uint64_t>::max() / (uint64_t)shape[i])
      return paddle_status_create(PADDLE_OUT_OF_MEMORY,
                                  "tensor size overflows 64 bits");
    bytes *= (uint64_t)shape[i];
  }
  // One byte at least, so that a zero-size tensor still has a distinct
  // pointer that free() accepts.
  void *data = std::malloc(bytes ? bytes : 1);
  if (!data)
    return paddle_status_create(PADDLE_OUT_OF_MEMORY,
                                "cannot allocate %llu bytes",
                                (unsigned long long)bytes);
  tensor->dtype = dtype;
  tensor->rank = rank;
  for (int32_t i = 0; i < rank; ++i)
    tensor->shape[i] = shape[i];
  tensor->data = data;
  return nullptr;
}

extern "C" void paddle_tensor_free(paddle_tensor_t *tensor) {
  if (!tensor)
    return;
  std::free(tensor->data);
  tensor->data = nullptr;
}

paddle_status_t paddle::runtime::checkTensor(const paddle_tensor_t *t,
                                             const char *what) {
  if (!t)
    return paddle_status_create(PADDLE_INVALID_ARGUMENT, "%s: null tensor",
                                what);
  // A caller may store any int in the enum: read it as one (loading an
  // enum outside its values is undefined behaviour).
  int dtype = 0;
  static_assert(sizeof(dtype) == sizeof(t->dtype), "enum is not int-sized");
  memcpy(&dtype, &t->dtype, sizeof dtype);
  if (dtype <= PADDLE_DTYPE_INVALID || dtype > PADDLE_I64)
    return paddle_status_create(PADDLE_INVALID_ARGUMENT,
                                "%s: invalid element type %d", what, dtype);
  size_t elementSize = paddle_dtype_size(t->dtype);
  if (t->rank < 0 || t->rank > PADDLE_MAX_RANK)
    return paddle_status_create(PADDLE_INVALID_ARGUMENT,
                                "%s: rank %d is outside [0, %d]", what, t->rank,
                                PADDLE_MAX_RANK);
  unsigned __int128 bytes = elementSize;
  bool empty = false;
  for (int32_t d = 0; d < t->rank; ++d) {
    if (t->shape[d] < 0)
      return paddle_status_create(PADDLE_INVALID_ARGUMENT,
                                  "%s: dim %d is negative (%lld)", what, d,
                                  (long long)t->shape[d]);
    empty = empty || t->shape[d] == 0;
    if (!empty) {
      bytes *= (unsigned __int128)t->shape[d];
      if (bytes > (unsigned __int128)INT64_MAX)
        return paddle_status_create(
            PADDLE_INVALID_ARGUMENT,
            "%s: its size overflows 64 bits (dims up to %d multiply past "
            "2^63 bytes)",
            what, d);
    }
  }
  if (!t->data && !empty)
    return paddle_status_create(PADDLE_INVALID_ARGUMENT, "%s: has no data",
                                what);
  return nullptr;
}
