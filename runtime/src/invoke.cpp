//===- invoke.cpp - calling compiled functions ----------------------------===//
//
// Flattens tensors into memref descriptors for the packed entry point and
// copies the results back out. See the calling convention in runtime.h.
//
//===----------------------------------------------------------------------===//

#include "paddle_runtime/runtime.h"
#include "tensor_check.h"
#include "thread_pool.h"
#include "workspace.h"

#include <algorithm>
#include <atomic>
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

/// True when sizes/strides describe a dense row-major layout.
bool isContiguous(int32_t rank, const int64_t *sizes, const int64_t *strides) {
  int64_t expect = 1;
  for (int32_t d = rank - 1; d >= 0; --d) {
    if (sizes[d] != 1 && strides[d] != expect)
      return false;
    expect *= sizes[d];
  }
  return true;
}

/// Copies a strided result into a dense row-major tensor.
void copyStrided(const char *src, char *dst, int32_t rank, const int64_t *sizes,
                 const int64_t *strides, size_t elementSize) {
  int64_t n = 1;
  for (int32_t d = 0; d < rank; ++d)
    n *= sizes[d];
  if (n == 0)
    return;
  if (isContiguous(rank, sizes, strides)) {
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

std::atomic<int64_t> copiedResults{0};

/// The innermost paddle_invoke on this thread, for run-time failures inside
/// compiled code. Compiled code is plain C-like code without destructors, so
/// leaving it with longjmp skips nothing but the frees of its live buffers.
thread_local std::jmp_buf *activeCall = nullptr;
thread_local paddle_status_code_t failedCode = PADDLE_OK;
thread_local std::string *failedMessage = nullptr;

/// Calls `fn`; returns the status of a failure inside it, or null.
paddle_status_t callGuarded(paddle_packed_fn_t fn, void **args,
                            const char *function) {
  // A failed call never releases its workspace frames: unwind them here.
  paddle::runtime::Workspace &workspace =
      paddle::runtime::currentThreadWorkspace();
  size_t depth = workspace.depth();
  std::jmp_buf here;
  std::jmp_buf *outer = activeCall;
  std::string message;
  std::string *outerMessage = failedMessage;
  activeCall = &here;
  failedMessage = &message;
  if (setjmp(here) != 0) {
    activeCall = outer;
    failedMessage = outerMessage;
    workspace.unwindTo(depth);
    return paddle_status_create(failedCode, "%s: %s", function,
                                message.c_str());
  }
  fn(args);
  activeCall = outer;
  failedMessage = outerMessage;
  return nullptr;
}

} // namespace

extern "C" void paddle_runtime_fail(paddle_status_code_t code,
                                    const char *message) {
  // A pool task (on a worker, or on a caller waiting for its loop) cannot
  // unwind to a paddle_invoke: the pool would lose track of it.
  if (!activeCall || paddle_runtime::ThreadPool::current()) {
    fprintf(stderr, "paddle runtime error: %s\n", message);
    abort();
  }
  failedCode = code;
  *failedMessage = message;
  std::longjmp(*activeCall, 1);
}

extern "C" void paddle_runtime_check_failed(const char *message) {
  paddle_runtime_fail(PADDLE_INVALID_ARGUMENT, message);
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
  if (numInputs > 0 && !inputs)
    return paddle_status_create(PADDLE_INVALID_ARGUMENT, "%s: null inputs",
                                sig->name);
  if (sig->num_outputs > 0 && !outputs)
    return paddle_status_create(PADDLE_INVALID_ARGUMENT,
                                "%s: null result pointer", sig->name);
  for (int32_t i = 0; i < numInputs; ++i) {
    std::string what = std::string(sig->name) + ": input " + std::to_string(i);
    if (paddle_status_t s =
            paddle::runtime::checkTensor(&inputs[i], what.c_str()))
      return s;
    if (paddle_status_t s = checkInput(sig, i, inputs[i]))
      return s;
  }

  // Compiled functions take dense row-major buffers: strided views that are
  // not dense already are packed into temporaries freed after the call.
  struct Packed {
    std::vector<void *> buffers;
    ~Packed() {
      for (void *p : buffers)
        free(p);
    }
  } packed;
  std::vector<const void *> data(numInputs);
  for (int32_t i = 0; i < numInputs; ++i) {
    const paddle_tensor_t &t = inputs[i];
    data[i] = t.data;
    if (!t.strides || isContiguous(t.rank, t.shape, t.strides))
      continue;
    size_t elementSize = paddle_dtype_size(t.dtype);
    size_t bytes = (size_t)paddle_tensor_num_elements(&t) * elementSize;
    void *dense = malloc(bytes ? bytes : 1);
    if (!dense)
      return paddle_status_create(PADDLE_OUT_OF_MEMORY,
                                  "%s: out of memory packing input %d "
                                  "(%zu bytes)",
                                  sig->name, i, bytes);
    packed.buffers.push_back(dense);
    copyStrided((const char *)t.data, (char *)dense, t.rank, t.shape, t.strides,
                elementSize);
    data[i] = dense;
  }

  // Input descriptors: dense row-major views.
  std::vector<Descriptor> descriptors(numInputs);
  std::vector<void *> args;
  for (int32_t i = 0; i < numInputs; ++i) {
    const paddle_tensor_t &t = inputs[i];
    std::vector<int64_t> &w = descriptors[i].words;
    w.resize(Descriptor::numWords(t.rank));
    w[0] = (int64_t)(uintptr_t)data[i];
    w[1] = (int64_t)(uintptr_t)data[i];
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

  if (paddle_status_t failure = callGuarded(fn, args.data(), sig->name))
    return failure;

  // Hand each result to the caller: a dense buffer that only this result
  // uses is adopted as is; any other result is copied out. Buffers not
  // adopted are freed afterwards (once each: results may share one).
  struct Result {
    void *allocated;
    const char *aligned;
    int64_t offset;
    const int64_t *sizes, *strides;
  };
  std::vector<Result> views;
  size_t at = 0;
  for (int32_t o = 0; o < sig->num_outputs; ++o) {
    const int64_t *w = results.data() + at;
    at += Descriptor::numWords(sig->outputs[o].rank);
    views.push_back({(void *)(uintptr_t)w[0], (const char *)(uintptr_t)w[1],
                     w[2], w + 3, w + 3 + sig->outputs[o].rank});
  }
  auto ownedByCall = [&](void *p) {
    if (!p || (uintptr_t)p == kGlobalAllocatedPointer)
      return false;
    for (int32_t i = 0; i < numInputs; ++i)
      if (p == inputs[i].data || p == data[i])
        return false;
    return true;
  };
  paddle_status_t status = nullptr;
  std::vector<void *> toFree;
  for (int32_t o = 0; o < sig->num_outputs; ++o) {
    const paddle_tensor_spec_t &spec = sig->outputs[o];
    const Result &r = views[o];
    int sharers = 0;
    for (const Result &other : views)
      sharers += other.allocated == r.allocated;
    bool adopt = !status && ownedByCall(r.allocated) && sharers == 1 &&
                 r.aligned == (const char *)r.allocated && r.offset == 0 &&
                 isContiguous(spec.rank, r.sizes, r.strides);
    if (adopt) {
      // Written whole: a caller's uninitialized struct must not keep stale
      // strides, which would make the result a strided view when it is
      // passed on as an input.
      memset(&outputs[o], 0, sizeof(outputs[o]));
      outputs[o].dtype = spec.dtype;
      outputs[o].rank = spec.rank;
      for (int32_t d = 0; d < spec.rank; ++d)
        outputs[o].shape[d] = r.sizes[d];
      outputs[o].data = r.allocated;
      continue;
    }
    if (ownedByCall(r.allocated) &&
        std::find(toFree.begin(), toFree.end(), r.allocated) == toFree.end())
      toFree.push_back(r.allocated);
    if (status)
      continue;
    status = paddle_tensor_alloc(&outputs[o], spec.dtype, spec.rank, r.sizes);
    if (status)
      continue;
    copiedResults.fetch_add(1, std::memory_order_relaxed);
    size_t elementSize = paddle_dtype_size(spec.dtype);
    copyStrided(r.aligned + r.offset * (int64_t)elementSize,
                (char *)outputs[o].data, spec.rank, r.sizes, r.strides,
                elementSize);
  }
  for (void *p : toFree)
    free(p);
  if (status)
    for (int32_t o = 0; o < sig->num_outputs; ++o)
      paddle_tensor_free(&outputs[o]);
  return status;
}

extern "C" int64_t paddle_invoke_copied_results(void) {
  return copiedResults.load(std::memory_order_relaxed);
}
