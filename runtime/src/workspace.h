//===- workspace.h - per-call arenas for planned buffers --------*- C++ -*-===//
//
// Compiled functions whose temporary buffers were planned at compile time
// (paddle-plan-memory) ask the runtime for one block of memory at entry,
// `_mlir_ciface_paddle_workspace_acquire(bytes)`, carve every planned buffer
// out of it at a static offset, and hand it back before they return,
// `_mlir_ciface_paddle_workspace_release(ws)`. A Workspace serves those
// requests on one thread: a bump arena with a stack discipline that keeps its
// memory between calls, so a session that owns one allocates once and reuses
// the memory on every call.
//
// Internal to the runtime (not part of the C API).
//
//===----------------------------------------------------------------------===//

#ifndef PADDLE_RUNTIME_WORKSPACE_H
#define PADDLE_RUNTIME_WORKSPACE_H

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace paddle::runtime {

/// A stack of frames carved out of a few malloc'ed chunks.
///
/// - acquire(n) pushes a frame of n bytes, 64-byte aligned; release(base)
///   pops it. Frames nest: a planned function calling another planned
///   function pushes a second frame above the first.
/// - Memory is kept when frames are released. When a frame does not fit,
///   the workspace adds a chunk (at least as large as everything it already
///   holds, so growth is geometric); once no frame is live, the chunks are
///   merged into one, so a steady workload runs out of a single chunk.
/// - `limit` caps the bytes held in chunks (0: unlimited). An acquire that
///   would exceed it, or a failed malloc, fails and changes nothing.
///
/// Not thread-safe: one Workspace serves one call at a time.
class Workspace {
public:
  /// Alignment of every frame (and of every chunk).
  static constexpr size_t kAlignment = 64;

  explicit Workspace(size_t limitBytes = 0) : limitBytes(limitBytes) {}
  ~Workspace();
  Workspace(const Workspace &) = delete;
  Workspace &operator=(const Workspace &) = delete;

  /// Pushes a frame of `bytes` and returns its base, aligned to kAlignment.
  /// On failure returns null and, if `error` is given, sets it to a message
  /// that names the request, the limit and what is held.
  void *acquire(size_t bytes, std::string *error = nullptr);
  /// Pops the innermost frame, which must start at `base`. Returns false
  /// (and changes nothing) when `base` is not the innermost frame.
  bool release(const void *base);

  /// Number of live frames.
  size_t depth() const { return frames.size(); }
  /// Pops frames until `depth()` is at most `newDepth`. A call that ended
  /// with paddle_runtime_fail (a longjmp) never released its frames: whoever
  /// catches the failure records depth() before the call and unwinds to it.
  void unwindTo(size_t newDepth);

  /// Bytes held in chunks (what the workspace costs while idle).
  size_t capacity() const;
  /// Number of chunks (1 in the steady state).
  size_t numChunks() const { return chunks.size(); }
  /// The byte limit given at construction (0: unlimited).
  size_t limit() const { return limitBytes; }
  /// Frees all chunks. Only allowed with no live frame; returns false
  /// otherwise.
  bool trim();

private:
  struct Chunk {
    char *data;
    size_t size;
    size_t used;
  };
  struct Frame {
    size_t chunk;
    size_t previousUsed;
  };
  bool addChunk(size_t size, std::string *error, size_t request);
  void mergeIfIdle();

  size_t limitBytes;
  std::vector<Chunk> chunks;
  std::vector<Frame> frames;
};

/// Installs `workspace` as the one compiled code on this thread uses and
/// returns the previously installed one (null: the default). With none
/// installed, a thread-local default Workspace without limit serves the
/// calls, so plain paddle_invoke calls and AOT entry points work unchanged.
Workspace *exchangeThreadWorkspace(Workspace *workspace);

/// The workspace compiled code on this thread uses now.
Workspace &currentThreadWorkspace();

} // namespace paddle::runtime

/// MLIR's descriptor of a `memref<?xi8>`, as compiled code passes it to the
/// C interface (`llvm.emit_c_interface`) of the two functions below.
struct paddle_workspace_memref_t {
  int8_t *allocated;
  int8_t *aligned;
  int64_t offset;
  int64_t size;
  int64_t stride;
};

extern "C" {
/// `func.call @paddle_workspace_acquire(%bytes) : (i64) -> memref<?xi8>`:
/// pushes a frame of `bytes` on this thread's workspace. A request the
/// workspace cannot serve ends the call with PADDLE_OUT_OF_MEMORY.
void _mlir_ciface_paddle_workspace_acquire(paddle_workspace_memref_t *result,
                                           int64_t bytes);
/// `func.call @paddle_workspace_release(%ws) : (memref<?xi8>) -> ()`: pops
/// the frame `ws`, which must be the innermost one.
void _mlir_ciface_paddle_workspace_release(const paddle_workspace_memref_t *ws);
}

#endif // PADDLE_RUNTIME_WORKSPACE_H
