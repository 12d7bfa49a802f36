//===- workspace.cpp - per-call arenas for planned buffers ----------------===//
//
// See workspace.h. The two _mlir_ciface_ functions at the end are what code
// compiled with paddle-plan-memory calls (listed in symbols.cpp).
//
//===----------------------------------------------------------------------===//

#include "workspace.h"

#include "paddle_runtime/runtime.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

using paddle::runtime::Workspace;

namespace {
size_t alignUp(size_t n, size_t alignment) {
  return (n + alignment - 1) / alignment * alignment;
}
} // namespace

Workspace::~Workspace() {
  for (Chunk &c : chunks)
    free(c.data);
}

size_t Workspace::capacity() const {
  size_t total = 0;
  for (const Chunk &c : chunks)
    total += c.size;
  return total;
}

bool Workspace::addChunk(size_t size, std::string *error, size_t request) {
  size_t held = capacity();
  if (limitBytes != 0 && held + size > limitBytes) {
    if (error)
      *error = "cannot allocate a workspace of " + std::to_string(request) +
               " bytes for the planned buffers of a compiled function "
               "(limit " +
               std::to_string(limitBytes) + " bytes, " + std::to_string(held) +
               " held)";
    return false;
  }
  void *data = nullptr;
  if (posix_memalign(&data, kAlignment, size) != 0 || !data) {
    if (error)
      *error = "cannot allocate a workspace of " + std::to_string(request) +
               " bytes for the planned buffers of a compiled function "
               "(out of memory; limit " +
               std::to_string(limitBytes) + " bytes)";
    return false;
  }
  chunks.push_back({static_cast<char *>(data), size, 0});
  return true;
}

void *Workspace::acquire(size_t bytes, std::string *error) {
  // Every frame takes at least one aligned unit, so each has its own base
  // and release can check that frames come back in order.
  size_t size = alignUp(bytes == 0 ? 1 : bytes, kAlignment);
  if (size < bytes) { // wrapped around
    if (error)
      *error = "cannot allocate a workspace of " + std::to_string(bytes) +
               " bytes for the planned buffers of a compiled function";
    return nullptr;
  }
  mergeIfIdle();
  // Frames fill chunks in order; chunks above the innermost frame's are
  // empty.
  size_t first = frames.empty() ? 0 : frames.back().chunk;
  size_t chosen = chunks.size();
  for (size_t c = first; c < chunks.size(); ++c) {
    if (chunks[c].size - chunks[c].used >= size) {
      chosen = c;
      break;
    }
  }
  if (chosen == chunks.size()) {
    // The empty chunks above `first` are all too small: replace them by one
    // that holds the request and at least doubles what the workspace holds
    // (within the limit).
    size_t keep = frames.empty() ? 0 : first + 1;
    size_t dropped = 0;
    for (size_t c = keep; c < chunks.size(); ++c)
      dropped += chunks[c].size;
    size_t kept = capacity() - dropped;
    size_t grown = std::max(size, kept);
    if (limitBytes != 0 && kept + grown > limitBytes)
      grown = size;
    // Check the limit before dropping anything, so a failure changes nothing.
    if (limitBytes != 0 && kept + grown > limitBytes) {
      if (error)
        *error = "cannot allocate a workspace of " + std::to_string(bytes) +
                 " bytes for the planned buffers of a compiled function "
                 "(limit " +
                 std::to_string(limitBytes) + " bytes, " +
                 std::to_string(kept) + " held by live frames)";
      return nullptr;
    }
    std::vector<Chunk> droppedChunks(chunks.begin() + keep, chunks.end());
    chunks.resize(keep);
    if (!addChunk(grown, error, bytes) &&
        (grown == size || !addChunk(size, error, bytes))) {
      // Out of memory: put the dropped chunks back.
      chunks.insert(chunks.end(), droppedChunks.begin(), droppedChunks.end());
      return nullptr;
    }
    for (Chunk &c : droppedChunks)
      free(c.data);
    chosen = chunks.size() - 1;
  }
  Chunk &chunk = chunks[chosen];
  frames.push_back({chosen, chunk.used});
  void *base = chunk.data + chunk.used;
  chunk.used += size;
  return base;
}

bool Workspace::release(const void *base) {
  if (frames.empty())
    return false;
  const Frame &top = frames.back();
  Chunk &chunk = chunks[top.chunk];
  if (chunk.data + top.previousUsed != base)
    return false;
  chunk.used = top.previousUsed;
  frames.pop_back();
  return true;
}

void Workspace::unwindTo(size_t newDepth) {
  while (frames.size() > newDepth) {
    const Frame &top = frames.back();
    chunks[top.chunk].used = top.previousUsed;
    frames.pop_back();
  }
}

void Workspace::mergeIfIdle() {
  // Several chunks mean an earlier call outgrew the workspace; with no frame
  // live they can become one chunk of the same total, so the next calls fit
  // in one block. If that malloc fails, the chunks stay as they are.
  if (!frames.empty() || chunks.size() < 2)
    return;
  size_t total = capacity();
  void *data = nullptr;
  if (posix_memalign(&data, kAlignment, total) != 0 || !data)
    return;
  for (Chunk &c : chunks)
    free(c.data);
  chunks.assign(1, {static_cast<char *>(data), total, 0});
}

bool Workspace::trim() {
  if (!frames.empty())
    return false;
  for (Chunk &c : chunks)
    free(c.data);
  chunks.clear();
  return true;
}

namespace {
thread_local Workspace *installedWorkspace = nullptr;
} // namespace

Workspace *paddle::runtime::exchangeThreadWorkspace(Workspace *workspace) {
  Workspace *previous = installedWorkspace;
  installedWorkspace = workspace;
  return previous;
}

Workspace &paddle::runtime::currentThreadWorkspace() {
  if (installedWorkspace)
    return *installedWorkspace;
  // Constructed on first use on each thread, freed when the thread ends.
  thread_local Workspace defaultWorkspace;
  return defaultWorkspace;
}

//===----------------------------------------------------------------------===//
// Entry points for compiled code
//===----------------------------------------------------------------------===//

extern "C" void
_mlir_ciface_paddle_workspace_acquire(paddle_workspace_memref_t *result,
                                      int64_t bytes) {
  Workspace &workspace = paddle::runtime::currentThreadWorkspace();
  std::string error;
  void *base = bytes < 0
                   ? nullptr
                   : workspace.acquire(static_cast<size_t>(bytes), &error);
  if (!base) {
    if (bytes < 0)
      error =
          "invalid workspace request of " + std::to_string(bytes) + " bytes";
    paddle_runtime_fail(PADDLE_OUT_OF_MEMORY, error.c_str());
    return; // Only reached when paddle_runtime_fail returns (it does not).
  }
  result->allocated = static_cast<int8_t *>(base);
  result->aligned = static_cast<int8_t *>(base);
  result->offset = 0;
  result->size = bytes;
  result->stride = 1;
}

extern "C" void
_mlir_ciface_paddle_workspace_release(const paddle_workspace_memref_t *ws) {
  Workspace &workspace = paddle::runtime::currentThreadWorkspace();
  if (!workspace.release(ws->aligned))
    paddle_runtime_fail(PADDLE_INTERNAL,
                        "compiled code released a workspace that is not the "
                        "innermost one of this thread");
}
