//===- invoke.cpp - calling compiled functions ----------------------------===//
//
// Flattens tensors into memref descriptors for the packed entry point and
// copies the results back out. See the calling convention in runtime.h.
//
//===----------------------------------------------------------------------===//

#include "paddle_runtime/runtime.h"

#include <csetjmp>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

/// Descriptor words of a rank-R memref: allocated, aligned, offset, sizes,
/// strides. Pointers are stored as 64-bit words (x86-64/AArch64 only).
struct Descriptor {
  std::vector<int64_t> words;
  static size_t numWords(int32_t rank) { return 3 + 2 * (size_t)rank; }
};

std::string shapeString(int32_t rank, const int64_t *shape) {
  std::string s = "[";
  for (int32_t i = 0; i < rank; ++i) {
    if (i)
      s += ", ";
    s += shape[i] == PADDLE_DYNAMIC_DIM ? "?" : std::to_string(shape[i]);
  }
  return s + "]";
}

paddle_status_t checkInput(const paddle_function_signature_t *sig, int32_t i,
                           const paddle_tensor_t &t) {
  const paddle_tensor_spec_t &spec = sig->inputs[i];
  if (t.dtype != spec.dtype)
    return paddle_status_create(PADDLE_INVALID_ARGUMENT,
                                "%s: input %d has element type %s, expected %s",
                                sig->name, i, paddle_dtype_name(t.dtype),
                                paddle_dtype_name(spec.dtype));
  bool ok = t.rank == spec.rank;
  for (int32_t d = 0; ok && d < t.rank; ++d)
    ok = spec.shape[d] == PADDLE_DYNAMIC_DIM || spec.shape[d] == t.shape[d];
  if (!ok)
    return paddle_status_create(
        PADDLE_INVALID_ARGUMENT, "%s: input %d has shape %s, expected %s",
        sig->name, i, shapeString(t.rank, t.shape).c_str(),
        shapeString(spec.rank, spec.shape).c_str());
  if (!t.data && paddle_tensor_num_elements(&t) != 0)
    return paddle_status_create(PADDLE_INVALID_ARGUMENT,
                                "%s: input %d has no data", sig->name, i);
  return nullptr;
}

/// Copies a strided result into a dense row-major tensor.
void copyStrided(const char *src, char *dst, int32_t rank, const int64_t *sizes,
                 const int64_t *strides, size_t elementSize) {
  int64_t n = 1;
  for (int32_t d = 0; d < rank; ++d)
    n *= sizes[d];
  if (n == 0)
    return;
  // Contiguous fast path.
  bool contiguous = true;
  int64_t expect = 1;
  for (int32_t d = rank - 1; d >= 0; --d) {
    if (sizes[d] != 1 && strides[d] != expect)
      contiguous = false;
    expect *= sizes[d];
  }
  if (contiguous) {
    memcpy(dst, src, (size_t)n * elementSize);
    return;
  }
  std::vector<int64_t> index(rank, 0);
  for (int64_t k = 0; k < n; ++k) {
    int64_t offset = 0;
    for (int32_t d = 0; d < rank; ++d)
      offset += index[d] * strides[d];
    memcpy(dst + k * elementSize, src + offset * (int64_t)elementSize,
           elementSize);
    for (int32_t d = rank - 1; d >= 0; --d) {
      if (++index[d] < sizes[d])
        break;
      index[d] = 0;
    }
  }
}

/// Sentinel the MLIR memref lowering uses as the allocated pointer of a
/// global (constant) buffer; it must never be freed.
constexpr uintptr_t kGlobalAllocatedPointer = 0xdeadbeef;

/// The innermost paddle_invoke on this thread, for run-time check failures.
/// Compiled code is plain C-like code without destructors, so leaving it
/// with longjmp skips nothing but the frees of its live buffers.
thread_local std::jmp_buf *activeCall = nullptr;
thread_local const char *failedCheck = nullptr;

/// Calls `fn`; returns the message of a failed run-time check, or null.
const char *callGuarded(paddle_packed_fn_t fn, void **args) {
  std::jmp_buf here;
  std::jmp_buf *outer = activeCall;
  activeCall = &here;
  if (setjmp(here) != 0) {
    activeCall = outer;
    return failedCheck;
  }
  fn(args);
  activeCall = outer;
  return nullptr;
}

} // namespace

extern "C" void paddle_runtime_check_failed(const char *message) {
  if (!activeCall) {
    fprintf(stderr, "paddle runtime check failed: %s\n", message);
    abort();
  }
  failedCheck = message;
  std::longjmp(*activeCall, 1);
}

extern "C" paddle_status_t paddle_invoke(paddle_packed_fn_t fn,
                                         const paddle_function_signature_t *sig,
                                         const paddle_tensor_t *inputs,
                                         int32_t numInputs,
                                         paddle_tensor_t *outputs) {
  if (!fn || !sig)
    return paddle_status_create(PADDLE_INVALID_ARGUMENT,
                                "paddle_invoke: null function or signature");
  if (numInputs != sig->num_inputs)
    return paddle_status_create(PADDLE_INVALID_ARGUMENT,
                                "%s: expects %d inputs, got %d", sig->name,
                                sig->num_inputs, numInputs);
  for (int32_t i = 0; i < numInputs; ++i)
    if (paddle_status_t s = checkInput(sig, i, inputs[i]))
      return s;

  // Input descriptors: dense row-major views of the caller's data.
  std::vector<Descriptor> descriptors(numInputs);
  std::vector<void *> args;
  for (int32_t i = 0; i < numInputs; ++i) {
    const paddle_tensor_t &t = inputs[i];
    std::vector<int64_t> &w = descriptors[i].words;
    w.resize(Descriptor::numWords(t.rank));
    w[0] = (int64_t)(uintptr_t)t.data;
    w[1] = (int64_t)(uintptr_t)t.data;
    w[2] = 0;
    int64_t stride = 1;
    for (int32_t d = t.rank - 1; d >= 0; --d) {
      w[3 + d] = t.shape[d];
      w[3 + t.rank + d] = stride;
      stride *= t.shape[d];
    }
  }
  for (auto &desc : descriptors)
    for (int64_t &word : desc.words)
      args.push_back(&word);

  size_t resultWords = 0;
  for (int32_t o = 0; o < sig->num_outputs; ++o)
    resultWords += Descriptor::numWords(sig->outputs[o].rank);
  std::vector<int64_t> results(resultWords, 0);
  if (sig->num_outputs > 0)
    args.push_back(results.data());

  if (const char *failure = callGuarded(fn, args.data()))
    return paddle_status_create(PADDLE_INVALID_ARGUMENT, "%s: %s", sig->name,
                                failure);

  // Copy each result out, then free the buffers the compiled code allocated
  // (once each: two results may share one buffer).
  paddle_status_t status = nullptr;
  std::vector<void *> toFree;
  size_t at = 0;
  for (int32_t o = 0; o < sig->num_outputs; ++o) {
    const paddle_tensor_spec_t &spec = sig->outputs[o];
    const int64_t *w = results.data() + at;
    at += Descriptor::numWords(spec.rank);
    void *allocated = (void *)(uintptr_t)w[0];
    const char *aligned = (const char *)(uintptr_t)w[1];
    const int64_t *sizes = w + 3, *strides = w + 3 + spec.rank;
    bool isInput = false;
    for (int32_t i = 0; i < numInputs; ++i)
      isInput |= allocated == inputs[i].data;
    if (allocated && !isInput &&
        (uintptr_t)allocated != kGlobalAllocatedPointer) {
      bool seen = false;
      for (void *p : toFree)
        seen |= p == allocated;
      if (!seen)
        toFree.push_back(allocated);
    }
    if (status)
      continue;
    status = paddle_tensor_alloc(&outputs[o], spec.dtype, spec.rank, sizes);
    if (status)
      continue;
    size_t elementSize = paddle_dtype_size(spec.dtype);
    copyStrided(aligned + w[2] * (int64_t)elementSize, (char *)outputs[o].data,
                spec.rank, sizes, strides, elementSize);
  }
  for (void *p : toFree)
    free(p);
  if (status)
    for (int32_t o = 0; o < sig->num_outputs; ++o)
      paddle_tensor_free(&outputs[o]);
  return status;
}
