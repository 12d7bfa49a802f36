//===- reduce.cpp - elementwise reductions shared by the backends ---------===//

#include "collectives/communicator.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>

namespace paddle::collectives {

const char *kindName(Kind kind) {
  switch (kind) {
  case Kind::AllReduce:
    return "all_reduce";
  case Kind::AllGather:
    return "all_gather";
  case Kind::ReduceScatter:
    return "reduce_scatter";
  case Kind::AllToAll:
    return "all_to_all";
  case Kind::Broadcast:
    return "broadcast";
  case Kind::Barrier:
    return "barrier";
  }
  return "?";
}

static bool reduces(Kind kind) {
  return kind == Kind::AllReduce || kind == Kind::ReduceScatter;
}

bool Request::operator==(const Request &other) const {
  if (kind != other.kind)
    return false;
  if (kind == Kind::Barrier)
    return true;
  return count == other.count && dtype == other.dtype &&
         (!reduces(kind) || op == other.op) &&
         (kind != Kind::Broadcast || root == other.root);
}

std::string Request::str() const {
  if (kind == Kind::Barrier)
    return "barrier";
  char buffer[160];
  int n = snprintf(buffer, sizeof(buffer), "%s of %zu x %s", kindName(kind),
                   count, paddle_dtype_name(dtype));
  if (reduces(kind))
    snprintf(buffer + n, sizeof(buffer) - n, " (%s)",
             paddle_reduce_op_name(op));
  else if (kind == Kind::Broadcast)
    snprintf(buffer + n, sizeof(buffer) - n, " from rank %d", root);
  return buffer;
}

namespace {

float bf16ToFloat(uint16_t h) {
  uint32_t bits = static_cast<uint32_t>(h) << 16;
  float f;
  memcpy(&f, &bits, 4);
  return f;
}

uint16_t floatToBf16(float f) {
  uint32_t bits;
  memcpy(&bits, &f, 4);
  if ((bits & 0x7fffffffu) > 0x7f800000u) // NaN stays a (quiet) NaN
    return static_cast<uint16_t>((bits >> 16) | 0x40);
  bits += 0x7fffu + ((bits >> 16) & 1); // round to nearest even
  return static_cast<uint16_t>(bits >> 16);
}

template <typename T> T apply(T a, T b, paddle_reduce_op_t op) {
  switch (op) {
  case PADDLE_REDUCE_SUM:
    return a + b;
  case PADDLE_REDUCE_PROD:
    return a * b;
  case PADDLE_REDUCE_MAX:
    return std::max(a, b);
  case PADDLE_REDUCE_MIN:
    return std::min(a, b);
  }
  return a;
}

template <typename T>
void reduceTyped(void *acc, const void *src, size_t n, paddle_reduce_op_t op) {
  T *a = static_cast<T *>(acc);
  const T *s = static_cast<const T *>(src);
  // One loop per op, so that each vectorizes.
  switch (op) {
  case PADDLE_REDUCE_SUM:
    for (size_t i = 0; i < n; ++i)
      a[i] = a[i] + s[i];
    return;
  case PADDLE_REDUCE_PROD:
    for (size_t i = 0; i < n; ++i)
      a[i] = a[i] * s[i];
    return;
  case PADDLE_REDUCE_MAX:
    for (size_t i = 0; i < n; ++i)
      a[i] = std::max(a[i], s[i]);
    return;
  case PADDLE_REDUCE_MIN:
    for (size_t i = 0; i < n; ++i)
      a[i] = std::min(a[i], s[i]);
    return;
  }
}

} // namespace

bool isReducible(paddle_dtype_t dtype) {
  switch (dtype) {
  case PADDLE_F32:
  case PADDLE_F64:
  case PADDLE_F16:
  case PADDLE_BF16:
  case PADDLE_I1:
  case PADDLE_I8:
  case PADDLE_I32:
  case PADDLE_I64:
    return true;
  default:
    return false;
  }
}

void reduceInto(void *acc, const void *src, size_t n, paddle_dtype_t dtype,
                paddle_reduce_op_t op) {
  switch (dtype) {
  case PADDLE_F32:
    return reduceTyped<float>(acc, src, n, op);
  case PADDLE_F64:
    return reduceTyped<double>(acc, src, n, op);
  case PADDLE_I8:
    return reduceTyped<int8_t>(acc, src, n, op);
  case PADDLE_I32:
    return reduceTyped<int32_t>(acc, src, n, op);
  case PADDLE_I64:
    return reduceTyped<int64_t>(acc, src, n, op);
  case PADDLE_I1: {
    bool any = op == PADDLE_REDUCE_SUM || op == PADDLE_REDUCE_MAX;
    uint8_t *a = static_cast<uint8_t *>(acc);
    const uint8_t *s = static_cast<const uint8_t *>(src);
    for (size_t i = 0; i < n; ++i)
      a[i] = any ? (a[i] | s[i]) != 0 : (a[i] & s[i]) != 0;
    return;
  }
  case PADDLE_F16: {
    _Float16 *a = static_cast<_Float16 *>(acc);
    const _Float16 *s = static_cast<const _Float16 *>(src);
    for (size_t i = 0; i < n; ++i)
      a[i] = static_cast<_Float16>(apply<float>(a[i], s[i], op));
    return;
  }
  case PADDLE_BF16: {
    uint16_t *a = static_cast<uint16_t *>(acc);
    const uint16_t *s = static_cast<const uint16_t *>(src);
    for (size_t i = 0; i < n; ++i)
      a[i] = floatToBf16(apply(bf16ToFloat(a[i]), bf16ToFloat(s[i]), op));
    return;
  }
  default:
    return;
  }
}

} // namespace paddle::collectives
