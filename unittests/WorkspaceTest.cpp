//===- WorkspaceTest.cpp - per-call arenas for planned buffers ------------===//

#include "workspace.h"

#include "paddle_runtime/runtime.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <thread>

using paddle::runtime::currentThreadWorkspace;
using paddle::runtime::exchangeThreadWorkspace;
using paddle::runtime::Workspace;

namespace {

bool aligned(const void *p) {
  return reinterpret_cast<uintptr_t>(p) % Workspace::kAlignment == 0;
}

TEST(Workspace, ReusesItsMemoryAcrossCalls) {
  Workspace ws;
  void *first = ws.acquire(1000);
  ASSERT_NE(first, nullptr);
  EXPECT_TRUE(aligned(first));
  memset(first, 1, 1000);
  EXPECT_EQ(ws.depth(), 1u);
  EXPECT_TRUE(ws.release(first));
  size_t held = ws.capacity();
  EXPECT_GE(held, 1000u);
  for (int call = 0; call < 5; ++call) {
    void *again = ws.acquire(1000);
    EXPECT_EQ(again, first);
    EXPECT_TRUE(ws.release(again));
  }
  // A smaller request fits in what is held, too.
  void *small = ws.acquire(10);
  EXPECT_EQ(small, first);
  EXPECT_TRUE(ws.release(small));
  EXPECT_EQ(ws.capacity(), held);
  EXPECT_EQ(ws.numChunks(), 1u);
}

TEST(Workspace, NestedFramesDoNotOverlapAndPopInOrder) {
  Workspace ws;
  auto *outer = static_cast<unsigned char *>(ws.acquire(100));
  auto *inner = static_cast<unsigned char *>(ws.acquire(300));
  ASSERT_NE(outer, nullptr);
  ASSERT_NE(inner, nullptr);
  EXPECT_TRUE(aligned(outer));
  EXPECT_TRUE(aligned(inner));
  EXPECT_EQ(ws.depth(), 2u);
  memset(outer, 0xAA, 100);
  memset(inner, 0x55, 300);
  for (int i = 0; i < 100; ++i)
    ASSERT_EQ(outer[i], 0xAA) << "inner frame overwrote byte " << i;
  // Out of order: refused, nothing changes.
  EXPECT_FALSE(ws.release(outer));
  EXPECT_EQ(ws.depth(), 2u);
  EXPECT_TRUE(ws.release(inner));
  EXPECT_TRUE(ws.release(outer));
  EXPECT_FALSE(ws.release(outer));
  EXPECT_EQ(ws.depth(), 0u);
}

TEST(Workspace, GrowsByAChunkAndMergesWhenIdle) {
  Workspace ws;
  auto *outer = static_cast<unsigned char *>(ws.acquire(128));
  ASSERT_NE(outer, nullptr);
  EXPECT_EQ(ws.numChunks(), 1u);
  memset(outer, 7, 128);
  // Does not fit in the first chunk: a second one is added, the first
  // frame stays where it is.
  auto *inner = static_cast<unsigned char *>(ws.acquire(4096));
  ASSERT_NE(inner, nullptr);
  EXPECT_TRUE(aligned(inner));
  EXPECT_EQ(ws.numChunks(), 2u);
  memset(inner, 9, 4096);
  for (int i = 0; i < 128; ++i)
    ASSERT_EQ(outer[i], 7);
  size_t held = ws.capacity();
  EXPECT_GE(held, 128u + 4096u);
  EXPECT_TRUE(ws.release(inner));
  EXPECT_TRUE(ws.release(outer));
  // The next call finds one chunk holding everything, and the same nested
  // requests then fit without growing.
  void *a = ws.acquire(128);
  EXPECT_EQ(ws.numChunks(), 1u);
  EXPECT_EQ(ws.capacity(), held);
  void *b = ws.acquire(4096);
  EXPECT_EQ(ws.numChunks(), 1u);
  EXPECT_EQ(ws.capacity(), held);
  EXPECT_EQ(static_cast<char *>(b) - static_cast<char *>(a), 128);
  EXPECT_TRUE(ws.release(b));
  EXPECT_TRUE(ws.release(a));
}

TEST(Workspace, GrowthIsGeometric) {
  Workspace ws;
  // Frames of 64 bytes, each nested in the previous: the number of chunks
  // stays logarithmic in the number of frames.
  for (int i = 0; i < 1024; ++i)
    ASSERT_NE(ws.acquire(64), nullptr);
  EXPECT_LE(ws.numChunks(), 12u);
  ws.unwindTo(0);
  EXPECT_EQ(ws.depth(), 0u);
}

TEST(Workspace, LimitRefusesLargerRequestsAndChangesNothing) {
  Workspace ws(1024);
  EXPECT_EQ(ws.limit(), 1024u);
  std::string error;
  EXPECT_EQ(ws.acquire(2000, &error), nullptr);
  EXPECT_NE(error.find("2000 bytes"), std::string::npos) << error;
  EXPECT_NE(error.find("limit 1024 bytes"), std::string::npos) << error;
  EXPECT_EQ(ws.capacity(), 0u);
  EXPECT_EQ(ws.depth(), 0u);

  void *outer = ws.acquire(512);
  ASSERT_NE(outer, nullptr);
  // 512 + 600 do not fit under 1024 while the outer frame is live.
  error.clear();
  EXPECT_EQ(ws.acquire(600, &error), nullptr);
  EXPECT_NE(error.find("600 bytes"), std::string::npos) << error;
  EXPECT_EQ(ws.depth(), 1u);
  // Exactly up to the limit is fine.
  void *inner = ws.acquire(512);
  ASSERT_NE(inner, nullptr);
  EXPECT_LE(ws.capacity(), 1024u);
  EXPECT_TRUE(ws.release(inner));
  EXPECT_TRUE(ws.release(outer));
  // Alone, 1024 bytes fit (the chunks merge into one of 1024 bytes).
  void *whole = ws.acquire(1024);
  ASSERT_NE(whole, nullptr);
  EXPECT_LE(ws.capacity(), 1024u);
  EXPECT_TRUE(ws.release(whole));
}

TEST(Workspace, UnwindAfterAFailedCallAndTrim) {
  Workspace ws;
  void *a = ws.acquire(64);
  ASSERT_NE(a, nullptr);
  size_t mark = ws.depth();
  void *b = ws.acquire(64);
  ASSERT_NE(b, nullptr);
  ASSERT_NE(ws.acquire(64), nullptr);
  // A call left with longjmp never released its two frames.
  EXPECT_FALSE(ws.trim());
  ws.unwindTo(mark);
  EXPECT_EQ(ws.depth(), 1u);
  // The unwound frames' memory is free again.
  void *next = ws.acquire(64);
  EXPECT_EQ(next, b);
  EXPECT_EQ(ws.depth(), 2u);
  EXPECT_TRUE(ws.release(next));
  EXPECT_TRUE(ws.release(a));
  EXPECT_TRUE(ws.trim());
  EXPECT_EQ(ws.capacity(), 0u);
  EXPECT_EQ(ws.numChunks(), 0u);
}

TEST(Workspace, ZeroBytesStillGetsAFrame) {
  Workspace ws;
  void *a = ws.acquire(0);
  void *b = ws.acquire(0);
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  EXPECT_NE(a, b);
  EXPECT_TRUE(ws.release(b));
  EXPECT_TRUE(ws.release(a));
}

TEST(ThreadWorkspace, DefaultPerThreadAndInstallable) {
  Workspace *defaultWs = &currentThreadWorkspace();
  Workspace *otherThreads = nullptr;
  std::thread([&] { otherThreads = &currentThreadWorkspace(); }).join();
  EXPECT_NE(defaultWs, otherThreads);

  Workspace mine(4096);
  // One chunk of 1024 bytes: the frames below are then adjacent.
  ASSERT_TRUE(mine.release(mine.acquire(1024)));
  EXPECT_EQ(exchangeThreadWorkspace(&mine), nullptr);
  EXPECT_EQ(&currentThreadWorkspace(), &mine);

  // Compiled code reaches the installed workspace through the C interface.
  paddle_workspace_memref_t outer, inner;
  _mlir_ciface_paddle_workspace_acquire(&outer, 256);
  _mlir_ciface_paddle_workspace_acquire(&inner, 512);
  EXPECT_EQ(mine.depth(), 2u);
  EXPECT_EQ(outer.allocated, outer.aligned);
  EXPECT_EQ(outer.offset, 0);
  EXPECT_EQ(outer.size, 256);
  EXPECT_EQ(outer.stride, 1);
  EXPECT_EQ(inner.aligned - outer.aligned, 256);
  _mlir_ciface_paddle_workspace_release(&inner);
  _mlir_ciface_paddle_workspace_release(&outer);
  EXPECT_EQ(mine.depth(), 0u);

  EXPECT_EQ(exchangeThreadWorkspace(nullptr), &mine);
  EXPECT_EQ(&currentThreadWorkspace(), defaultWs);
}

/// A packed function with no arguments that acquires more than the
/// installed workspace allows, as planned compiled code would.
void acquireTooMuchPacked(void **) {
  paddle_workspace_memref_t ws;
  _mlir_ciface_paddle_workspace_acquire(&ws, 1 << 20);
  ADD_FAILURE() << "acquire over the limit returned";
}

TEST(ThreadWorkspace, OverLimitEndsTheCallWithOutOfMemory) {
  Workspace small(1024);
  Workspace *previous = exchangeThreadWorkspace(&small);
  paddle_function_signature_t sig = {"planned", 0, nullptr, 0, nullptr};
  paddle_status_t status =
      paddle_invoke(acquireTooMuchPacked, &sig, nullptr, 0, nullptr);
  exchangeThreadWorkspace(previous);
  ASSERT_NE(status, nullptr);
  EXPECT_EQ(paddle_status_code(status), PADDLE_OUT_OF_MEMORY);
  std::string message = paddle_status_message(status);
  EXPECT_NE(message.find("planned: cannot allocate a workspace of 1048576 "
                         "bytes"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("limit 1024 bytes"), std::string::npos) << message;
  paddle_status_free(status);
  EXPECT_EQ(small.depth(), 0u);
}

} // namespace
