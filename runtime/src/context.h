//===- context.h - the state of one running call (internal) ---------------===//
//
// A session runs each call with a CallContext installed on the calling
// thread. The runtime functions that compiled code calls (allocation, trace
// events) find it there: compiled code itself knows nothing about sessions.
// Without a context (paddle_invoke called directly, an AOT entry point used
// on its own) they fall back to plain, unlimited behaviour.
//
//===----------------------------------------------------------------------===//

#ifndef PADDLE_RUNTIME_CONTEXT_H
#define PADDLE_RUNTIME_CONTEXT_H

#include "paddle_runtime/runtime.h"

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

namespace paddle::runtime {

/// One recorded interval, in nanoseconds of the session's clock.
struct TraceEvent {
  int64_t begin, end;
  int32_t function; ///< Function index (calls) or -1.
  int64_t kernel;   ///< Kernel id (kernels) or -1.
};

using Clock = std::chrono::steady_clock;

class Workspace;

struct CallContext {
  /// The workspace of planned buffers this call uses (kept between calls).
  Workspace *workspace = nullptr;
  /// Limit on the bytes this call holds at once (0: none): its workspace
  /// plus dynamically sized buffers. The bytes of dynamically sized buffers
  /// it holds now, and the most it held (workspace included).
  int64_t limit = 0;
  int64_t inUse = 0;
  int64_t peak = 0;
  /// Trace recording, when enabled: events of calls on this context, and
  /// the kernels begun but not ended (instrumented code nests them).
  bool tracing = false;
  Clock::time_point epoch;
  int32_t threadIndex = 0;
  std::vector<TraceEvent> events;
  std::vector<std::pair<int64_t, int64_t>> openKernels;
};

/// The context of the call running on this thread, or null.
CallContext *currentContext();
/// Installs `context` on this thread; returns the previous one.
CallContext *exchangeContext(CallContext *context);

} // namespace paddle::runtime

#endif // PADDLE_RUNTIME_CONTEXT_H
