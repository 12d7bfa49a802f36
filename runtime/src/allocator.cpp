//===- allocator.cpp - allocation functions of compiled code --------------===//
//
// The CPU pipeline lowers memref.alloc/dealloc to MLIR's generic allocation
// functions, bound to these: aligned_alloc (the pipeline's use-aligned-alloc;
// paddle_alloc, plain malloc, serves code compiled without it) and free,
// counted against the running call's memory limit. This is the bounded
// allocator behind dynamically shaped buffers (static ones live in the planned
// workspace); going over the limit or running out of memory ends the call with
// PADDLE_OUT_OF_MEMORY instead of crashing on a null pointer.
//
//===----------------------------------------------------------------------===//

#include "context.h"
#include "workspace.h"

#include <cstdio>
#include <cstdlib>
#include <malloc.h>

using namespace paddle::runtime;

namespace {
[[noreturn]] void outOfMemory(size_t size, const CallContext *context) {
  // A fixed buffer: paddle_runtime_fail leaves this frame with longjmp, which
  // would skip a std::string's destructor.
  char message[256];
  if (context && context->limit > 0)
    snprintf(message, sizeof message,
             "out of memory: cannot allocate a buffer of %zu bytes (the call "
             "holds %lld bytes; the session's memory limit is %lld bytes)",
             size,
             (long long)(context->inUse +
                         (context->workspace
                              ? (int64_t)context->workspace->capacity()
                              : 0)),
             (long long)context->limit);
  else
    snprintf(message, sizeof message,
             "out of memory: cannot allocate a buffer of %zu bytes", size);
  paddle_runtime_fail(PADDLE_OUT_OF_MEMORY, message);
  abort(); // paddle_runtime_fail does not return.
}

/// Counts `pointer` (from malloc) against the call; frees it and fails
/// when that would go over the limit.
void *account(void *pointer, size_t size) {
  CallContext *context = currentContext();
  if (!pointer)
    outOfMemory(size, context);
  if (!context)
    return pointer;
  auto bytes = static_cast<int64_t>(malloc_usable_size(pointer));
  int64_t workspace =
      context->workspace ? (int64_t)context->workspace->capacity() : 0;
  if (context->limit > 0 &&
      context->inUse + workspace + bytes > context->limit) {
    free(pointer);
    outOfMemory(size, context);
  }
  context->inUse += bytes;
  if (context->inUse + workspace > context->peak)
    context->peak = context->inUse + workspace;
  return pointer;
}
} // namespace

extern "C" void *paddle_alloc(size_t size) {
  return account(malloc(size ? size : 1), size);
}

extern "C" void *paddle_aligned_alloc(size_t alignment, size_t size) {
  // aligned_alloc wants a size that is a multiple of the alignment.
  size_t rounded = (size + alignment - 1) / alignment * alignment;
  return account(aligned_alloc(alignment, rounded ? rounded : alignment), size);
}

extern "C" void paddle_free(void *pointer) {
  if (!pointer)
    return;
  if (CallContext *context = currentContext()) {
    context->inUse -= static_cast<int64_t>(malloc_usable_size(pointer));
    if (context->inUse < 0) // freed a buffer from before this call
      context->inUse = 0;
  }
  free(pointer);
}
