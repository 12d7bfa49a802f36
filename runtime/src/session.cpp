//===- session.cpp - load once, run many times, from many threads ---------===//
//
// A session owns the per-call state of an executable: one CallContext per
// concurrent call (memory accounting, trace buffer, and the memory compiled
// code reuses between calls), kept in a free list so that sequential calls
// reuse the same one and concurrent calls never share.
//
//===----------------------------------------------------------------------===//

#include "context.h"
#include "device.h"
#include "executable.h"
#include "workspace.h"

#include <nlohmann/json.hpp>

#include <atomic>
#include <cstdio>
#include <fstream>
#include <memory>
#include <mutex>
#include <new>
#include <unistd.h>

using namespace paddle::runtime;

namespace {
/// A small, stable number per OS thread for trace lanes.
int32_t threadIndex() {
  static std::atomic<int32_t> next{1};
  thread_local int32_t index = next++;
  return index;
}
} // namespace

struct paddle_session_s {
  paddle_executable_t executable = nullptr;
  paddle_session_options_t options{};
  Device *device = nullptr;
  Clock::time_point epoch = Clock::now();

  std::mutex mutex; // guards everything below
  std::vector<std::unique_ptr<CallContext>> contexts;
  std::vector<std::unique_ptr<Workspace>> workspaces; // one per context
  std::vector<CallContext *> idle;
  std::vector<TraceEvent> events;
  std::vector<int32_t> eventThreads;
  int64_t peak = 0;

  CallContext *acquire() {
    std::lock_guard<std::mutex> lock(mutex);
    if (!idle.empty()) {
      CallContext *c = idle.back();
      idle.pop_back();
      return c;
    }
    contexts.push_back(std::make_unique<CallContext>());
    workspaces.push_back(
        std::make_unique<Workspace>((size_t)options.memory_limit_bytes));
    CallContext *c = contexts.back().get();
    c->workspace = workspaces.back().get();
    c->limit = options.memory_limit_bytes;
    c->tracing = options.enable_trace != 0;
    c->epoch = epoch;
    return c;
  }

  void release(CallContext *c) {
    std::lock_guard<std::mutex> lock(mutex);
    if (c->peak > peak)
      peak = c->peak;
    for (const TraceEvent &e : c->events) {
      events.push_back(e);
      eventThreads.push_back(c->threadIndex);
    }
    c->events.clear();
    idle.push_back(c);
  }
};

extern "C" paddle_status_t
paddle_session_create(paddle_executable_t executable,
                      const paddle_session_options_t *options,
                      paddle_session_t *out) {
  if (!out || !executable)
    return paddle_status_create(PADDLE_INVALID_ARGUMENT,
                                "paddle_session_create: null argument");
  *out = nullptr;
  paddle_session_options_t opts{};
  if (options)
    opts = *options;
  if (opts.memory_limit_bytes < 0)
    return paddle_status_create(PADDLE_INVALID_ARGUMENT,
                                "memory limit must be >= 0 bytes (0: none), "
                                "got %lld",
                                (long long)opts.memory_limit_bytes);
  Device *device = opts.device ? opts.device->device : &cpuDevice();
  if (device->kind() != PADDLE_DEVICE_CPU)
    return paddle_status_create(PADDLE_UNSUPPORTED,
                                "%s: compiled modules run on the CPU only",
                                device->name().c_str());
  auto *session = new (std::nothrow) paddle_session_s();
  if (!session)
    return paddle_status_create(PADDLE_OUT_OF_MEMORY,
                                "out of memory creating a session");
  session->executable = executable;
  session->options = opts;
  session->device = device;
  *out = session;
  return nullptr;
}

extern "C" paddle_status_t
paddle_session_run(paddle_session_t session, int32_t index,
                   const paddle_tensor_t *inputs, int32_t numInputs,
                   paddle_tensor_t *outputs, int32_t numOutputs) {
  if (!session)
    return paddle_status_create(PADDLE_INVALID_ARGUMENT,
                                "paddle_session_run: null session");
  const paddle_function_signature_t *sig =
      paddle_executable_function(session->executable, index);
  if (!sig)
    return paddle_status_create(
        PADDLE_NOT_FOUND,
        "paddle_session_run: no function %d (the "
        "executable has %d)",
        index, paddle_executable_function_count(session->executable));
  if (numOutputs != sig->num_outputs)
    return paddle_status_create(PADDLE_INVALID_ARGUMENT,
                                "%s: returns %d results, room for %d given",
                                sig->name, sig->num_outputs, numOutputs);
  if (numInputs > 0 && !inputs)
    return paddle_status_create(PADDLE_INVALID_ARGUMENT, "%s: null inputs",
                                sig->name);

  CallContext *context = session->acquire();
  context->inUse = 0;
  context->peak = 0;
  context->openKernels.clear();
  context->threadIndex = threadIndex();
  CallContext *previous = exchangeContext(context);
  Workspace *previousWorkspace = exchangeThreadWorkspace(context->workspace);
  Clock::time_point begin = Clock::now();
  paddle_status_t status =
      paddle_invoke(session->executable->functions[index].entry, sig, inputs,
                    numInputs, outputs);
  if (context->tracing) {
    auto ns = [&](Clock::time_point t) {
      return std::chrono::duration_cast<std::chrono::nanoseconds>(
                 t - context->epoch)
          .count();
    };
    context->events.push_back({ns(begin), ns(Clock::now()), index, -1});
  }
  exchangeThreadWorkspace(previousWorkspace);
  exchangeContext(previous);
  session->release(context);
  return status;
}

extern "C" void paddle_trace_kernel_begin(int64_t kernel) {
  CallContext *c = currentContext();
  if (!c || !c->tracing)
    return;
  c->openKernels.emplace_back(
      kernel, std::chrono::duration_cast<std::chrono::nanoseconds>(
                  Clock::now() - c->epoch)
                  .count());
}

extern "C" void paddle_trace_kernel_end(int64_t kernel) {
  CallContext *c = currentContext();
  if (!c || !c->tracing || c->openKernels.empty() ||
      c->openKernels.back().first != kernel)
    return;
  int64_t now = std::chrono::duration_cast<std::chrono::nanoseconds>(
                    Clock::now() - c->epoch)
                    .count();
  c->events.push_back({c->openKernels.back().second, now, -1, kernel});
  c->openKernels.pop_back();
}

extern "C" paddle_status_t paddle_session_write_trace(paddle_session_t session,
                                                      const char *path) {
  if (!session || !path)
    return paddle_status_create(PADDLE_INVALID_ARGUMENT,
                                "paddle_session_write_trace: null argument");
  if (!session->options.enable_trace)
    return paddle_status_create(PADDLE_INVALID_ARGUMENT,
                                "the session was created without tracing "
                                "(paddle_session_options_t.enable_trace)");
  const auto &exe = *session->executable;
  nlohmann::json events = nlohmann::json::array();
  events.push_back({{"name", "process_name"},
                    {"ph", "M"},
                    {"pid", 1},
                    {"args", {{"name", "paddle session"}}}});
  {
    std::lock_guard<std::mutex> lock(session->mutex);
    for (size_t i = 0; i < session->events.size(); ++i) {
      const TraceEvent &e = session->events[i];
      bool isCall = e.kernel < 0;
      std::string name = isCall ? exe.functions[e.function].signature->name
                         : e.kernel < (int64_t)exe.kernelNames.size()
                             ? exe.kernelNames[e.kernel]
                             : "kernel " + std::to_string(e.kernel);
      nlohmann::json event = {{"name", name},
                              {"cat", isCall ? "call" : "kernel"},
                              {"ph", "X"},
                              {"pid", 1},
                              {"tid", session->eventThreads[i]},
                              {"ts", e.begin / 1000.0},
                              {"dur", (e.end - e.begin) / 1000.0}};
      // The kernel's id is the one paddle-instrument-kernels passed to
      // paddle_trace_kernel_begin: it finds the kernel in the IR.
      if (!isCall)
        event["args"] = {{"kernel", e.kernel}};
      events.push_back(std::move(event));
    }
  }
  nlohmann::json trace = {{"traceEvents", events}, {"displayTimeUnit", "ms"}};
  std::string text = trace.dump(1);
  return paddle_write_file(path, text.data(), text.size());
}

extern "C" void paddle_session_memory_stats(paddle_session_t session,
                                            int64_t *peakCallBytes,
                                            int64_t *reservedBytes) {
  if (!session)
    return;
  std::lock_guard<std::mutex> lock(session->mutex);
  if (peakCallBytes)
    *peakCallBytes = session->peak;
  if (reservedBytes) {
    int64_t reserved = 0;
    for (const auto &w : session->workspaces)
      reserved += (int64_t)w->capacity();
    *reservedBytes = reserved;
  }
}

extern "C" void paddle_session_free(paddle_session_t session) {
  delete session;
}

extern "C" paddle_executable_t
paddle_session_executable(paddle_session_t session) {
  return session ? session->executable : nullptr;
}
