//===- memref_copy.cpp - strided copies for compiled code -----------------===//
//
// Bufferized code copies between strided views (a tensor.insert_slice into a
// buffer, a tensor.pad) by calling `memrefCopy`, which upstream keeps in an
// MLIR runtime library. The runtime provides it instead, so compiled modules
// depend on nothing but this library.
//
//===----------------------------------------------------------------------===//

#include "paddle_runtime/runtime.h"

#include <cstring>
#include <vector>

namespace {
/// MLIR's unranked memref: a rank and a pointer to a ranked descriptor
/// {allocated, aligned, offset, sizes[rank], strides[rank]}.
struct UnrankedMemRef {
  int64_t rank;
  void *descriptor;
};

struct View {
  char *data;
  const int64_t *sizes, *strides;
};

View viewOf(const UnrankedMemRef *m, int64_t elementSize) {
  auto *words = static_cast<int64_t *>(m->descriptor);
  char *aligned = reinterpret_cast<char *>(words[1]);
  return {aligned + words[2] * elementSize, words + 3, words + 3 + m->rank};
}
} // namespace

extern "C" void paddle_memref_copy(int64_t elementSize,
                                   const void *sourceMemRef,
                                   const void *targetMemRef) {
  auto *srcArg = static_cast<const UnrankedMemRef *>(sourceMemRef);
  auto *dstArg = static_cast<const UnrankedMemRef *>(targetMemRef);
  int64_t rank = srcArg->rank;
  View src = viewOf(srcArg, elementSize), dst = viewOf(dstArg, elementSize);
  for (int64_t d = 0; d < rank; ++d)
    if (src.sizes[d] == 0)
      return;
  if (rank == 0) {
    memcpy(dst.data, src.data, elementSize);
    return;
  }
  // Odometer over all but the innermost dim; the innermost run is one
  // memcpy when both sides are unit-stride there.
  int64_t inner = src.sizes[rank - 1];
  bool unitInner = src.strides[rank - 1] == 1 && dst.strides[rank - 1] == 1;
  std::vector<int64_t> index(rank, 0);
  while (true) {
    int64_t srcOffset = 0, dstOffset = 0;
    for (int64_t d = 0; d + 1 < rank; ++d) {
      srcOffset += index[d] * src.strides[d];
      dstOffset += index[d] * dst.strides[d];
    }
    if (unitInner) {
      memcpy(dst.data + dstOffset * elementSize,
             src.data + srcOffset * elementSize, inner * elementSize);
    } else {
      for (int64_t i = 0; i < inner; ++i)
        memcpy(dst.data + (dstOffset + i * dst.strides[rank - 1]) * elementSize,
               src.data + (srcOffset + i * src.strides[rank - 1]) * elementSize,
               elementSize);
    }
    int64_t d = rank - 2;
    for (; d >= 0; --d) {
      if (++index[d] < src.sizes[d])
        break;
      index[d] = 0;
    }
    if (d < 0)
      return;
  }
}
