//===- SessionTest.cpp - sessions, executables, devices -------------------===//
//
// Packed functions written by hand to the compiled-code ABI (runtime.h):
// they allocate through paddle_alloc and emit kernel events like compiled
// code does, so sessions are tested without a compiler.
//
//===----------------------------------------------------------------------===//

#include "paddle_runtime/runtime.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <atomic>
#include <cstdio>
#include <cstring>
#include <elf.h>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

namespace {

/// f(x: tensor<?xf32>) -> tensor<?xf32>: y = 2x + 1, with a scratch buffer
/// of the same size (so each call holds 2n floats at its peak) and one
/// traced kernel (id 0).
void twoXPlusOnePacked(void **args) {
  const float *x = *(float **)args[1];
  int64_t n = *(int64_t *)args[3];
  int64_t *result = (int64_t *)args[5];
  paddle_trace_kernel_begin(0);
  auto *scratch = (float *)paddle_alloc(sizeof(float) * n);
  auto *y = (float *)paddle_alloc(sizeof(float) * n);
  for (int64_t i = 0; i < n; ++i)
    scratch[i] = 2 * x[i];
  for (int64_t i = 0; i < n; ++i)
    y[i] = scratch[i] + 1;
  paddle_free(scratch);
  paddle_trace_kernel_end(0);
  result[0] = result[1] = (int64_t)(uintptr_t)y;
  result[2] = 0;
  result[3] = n;
  result[4] = 1;
}

const paddle_tensor_spec_t kVector[] = {{PADDLE_F32, 1, {PADDLE_DYNAMIC_DIM}}};
const paddle_function_signature_t kSignature = {"two_x_plus_one", 1, kVector, 1,
                                                kVector};
const paddle_exported_function_t kFunctions[] = {
    {&kSignature, twoXPlusOnePacked}};
const char *const kKernels[] = {"linalg.generic model.mlir:3:5"};

std::string takeMessage(paddle_status_t s) {
  std::string m = s ? paddle_status_message(s) : "";
  paddle_status_free(s);
  return m;
}

struct Fixture : ::testing::Test {
  paddle_executable_t exe = nullptr;
  paddle_session_t session = nullptr;
  void SetUp() override {
    ASSERT_EQ(paddle_executable_create(kFunctions, 1, kKernels, 1, nullptr,
                                       nullptr, &exe),
              nullptr);
  }
  void open(paddle_session_options_t options) {
    ASSERT_EQ(paddle_session_create(exe, &options, &session), nullptr);
  }
  void TearDown() override {
    paddle_session_free(session);
    paddle_executable_free(exe);
  }
  /// Runs on `n` elements x[i] = i + seed; returns the status message.
  std::string run(int64_t n, float seed, std::vector<float> *out = nullptr) {
    paddle_tensor_t in{}, result{};
    EXPECT_EQ(paddle_tensor_alloc(&in, PADDLE_F32, 1, &n), nullptr);
    for (int64_t i = 0; i < n; ++i)
      ((float *)in.data)[i] = (float)i + seed;
    std::string message =
        takeMessage(paddle_session_run(session, 0, &in, 1, &result, 1));
    if (message.empty() && out)
      out->assign((float *)result.data, (float *)result.data + n);
    paddle_tensor_free(&in);
    paddle_tensor_free(&result);
    return message;
  }
};

TEST_F(Fixture, RunsManyTimes) {
  open({});
  for (int k = 0; k < 3; ++k) {
    std::vector<float> y;
    ASSERT_EQ(run(5, (float)k, &y), "");
    for (int i = 0; i < 5; ++i)
      EXPECT_EQ(y[i], 2 * (i + k) + 1);
  }
}

TEST_F(Fixture, ConcurrentRunsFromManyThreads) {
  open({});
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&, t] {
      for (int k = 0; k < 200; ++k) {
        std::vector<float> y;
        int64_t n = 1 + (t * 37 + k) % 300;
        if (!run(n, (float)t, &y).empty()) {
          ++wrong;
          continue;
        }
        for (int64_t i = 0; i < n; ++i)
          if (y[i] != 2 * ((float)i + t) + 1)
            ++wrong;
      }
    });
  for (auto &t : threads)
    t.join();
  EXPECT_EQ(wrong.load(), 0);
}

TEST_F(Fixture, MemoryLimitEndsTheCallAndTheSessionRecovers) {
  paddle_session_options_t options{};
  options.memory_limit_bytes = 64 * 1024;
  open(options);
  // 100k floats need 800 KB at the peak: over the limit.
  paddle_tensor_t in{}, result{};
  int64_t n = 100000;
  ASSERT_EQ(paddle_tensor_alloc(&in, PADDLE_F32, 1, &n), nullptr);
  memset(in.data, 0, sizeof(float) * n);
  paddle_status_t s = paddle_session_run(session, 0, &in, 1, &result, 1);
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(paddle_status_code(s), PADDLE_OUT_OF_MEMORY);
  std::string message = takeMessage(s);
  EXPECT_NE(message.find("two_x_plus_one: out of memory"), std::string::npos)
      << message;
  EXPECT_NE(message.find("limit is 65536 bytes"), std::string::npos) << message;
  EXPECT_EQ(result.data, nullptr);
  paddle_tensor_free(&in);
  // Small calls still fit; the peak is what one call held.
  std::vector<float> y;
  EXPECT_EQ(run(1000, 0, &y), "");
  int64_t peak = 0, reserved = -1;
  paddle_session_memory_stats(session, &peak, &reserved);
  EXPECT_GE(peak, (int64_t)(2 * 1000 * sizeof(float)));
  EXPECT_LE(peak, 64 * 1024);
}

TEST_F(Fixture, NegativeLimitIsRejected) {
  paddle_session_options_t options{};
  options.memory_limit_bytes = -1;
  EXPECT_NE(takeMessage(paddle_session_create(exe, &options, &session))
                .find("memory limit must be >= 0"),
            std::string::npos);
}

TEST_F(Fixture, WrongInputsAndIndices) {
  open({});
  paddle_tensor_t in{}, result{};
  int64_t shape[2] = {2, 2};
  ASSERT_EQ(paddle_tensor_alloc(&in, PADDLE_F32, 2, shape), nullptr);
  EXPECT_NE(takeMessage(paddle_session_run(session, 0, &in, 1, &result, 1))
                .find("input 0 has shape [2, 2], expected [?]"),
            std::string::npos);
  EXPECT_NE(takeMessage(paddle_session_run(session, 3, &in, 1, &result, 1))
                .find("no function 3"),
            std::string::npos);
  EXPECT_NE(takeMessage(paddle_session_run(session, 0, &in, 1, &result, 2))
                .find("returns 1 results, room for 2"),
            std::string::npos);
  paddle_tensor_free(&in);
}

TEST_F(Fixture, TraceHasCallsAndKernels) {
  paddle_session_options_t options{};
  options.enable_trace = 1;
  open(options);
  ASSERT_EQ(run(10, 0), "");
  ASSERT_EQ(run(10, 1), "");
  std::string path = ::testing::TempDir() + "/paddle-session-trace.json";
  ASSERT_EQ(paddle_session_write_trace(session, path.c_str()), nullptr);
  std::ifstream file(path);
  nlohmann::json trace = nlohmann::json::parse(file);
  int calls = 0, kernels = 0;
  for (const auto &e : trace["traceEvents"]) {
    if (e["ph"] != "X")
      continue;
    EXPECT_GE(e["dur"].get<double>(), 0.0);
    if (e["cat"] == "call") {
      ++calls;
      EXPECT_EQ(e["name"], "two_x_plus_one");
      EXPECT_FALSE(e.contains("args"));
    } else {
      ++kernels;
      EXPECT_EQ(e["name"], "linalg.generic model.mlir:3:5");
      // The id the module passed to paddle_trace_kernel_begin.
      EXPECT_EQ(e["args"]["kernel"], 0);
    }
  }
  EXPECT_EQ(calls, 2);
  EXPECT_EQ(kernels, 2);
  std::remove(path.c_str());
}

TEST_F(Fixture, TraceNeedsTracing) {
  open({});
  EXPECT_NE(takeMessage(paddle_session_write_trace(session, "/tmp/x.json"))
                .find("without tracing"),
            std::string::npos);
}

TEST(Executable, FindFunctions) {
  paddle_executable_t exe = nullptr;
  ASSERT_EQ(paddle_executable_create(kFunctions, 1, nullptr, 0, nullptr,
                                     nullptr, &exe),
            nullptr);
  int32_t index = -1;
  EXPECT_EQ(paddle_executable_find(exe, nullptr, &index), nullptr);
  EXPECT_EQ(index, 0);
  EXPECT_EQ(paddle_executable_find(exe, "two_x_plus_one", &index), nullptr);
  EXPECT_EQ(takeMessage(paddle_executable_find(exe, "nope", &index)),
            "no public function 'nope' in the module (it has: "
            "two_x_plus_one)");
  paddle_executable_free(exe);
}

TEST(Executable, ReleaseIsCalled) {
  int released = 0;
  paddle_executable_t exe = nullptr;
  ASSERT_EQ(paddle_executable_create(
                kFunctions, 1, nullptr, 0,
                [](void *p) { ++*static_cast<int *>(p); }, &released, &exe),
            nullptr);
  paddle_executable_free(exe);
  EXPECT_EQ(released, 1);
}

TEST(Executable, LoadErrors) {
  paddle_executable_t exe = nullptr;
  paddle_status_t s = paddle_executable_load("/nonexistent/model.so", &exe);
  EXPECT_EQ(paddle_status_code(s), PADDLE_IO_ERROR);
  EXPECT_NE(takeMessage(s).find("cannot load '/nonexistent/model.so'"),
            std::string::npos);
  // A file that is not a shared object at all.
  std::string path = ::testing::TempDir() + "/paddle-not-elf.so";
  {
    std::ofstream f(path);
    f << "not a library";
  }
  EXPECT_NE(takeMessage(paddle_executable_load(path.c_str(), &exe))
                .find("is not a usable shared object: the file is shorter "
                      "than an ELF header"),
            std::string::npos);
  EXPECT_EQ(exe, nullptr);
  std::remove(path.c_str());
}

TEST(Executable, SharedObjectChecks) {
  // A minimal ELF64 header of a shared object for this machine, then
  // damaged one field at a time.
  Elf64_Ehdr h{};
  memcpy(h.e_ident, ELFMAG, SELFMAG);
  h.e_ident[EI_CLASS] = ELFCLASS64;
  h.e_ident[EI_DATA] = ELFDATA2LSB;
  h.e_type = ET_DYN;
#if defined(__x86_64__)
  h.e_machine = EM_X86_64;
#else
  h.e_machine = EM_AARCH64;
#endif
  h.e_phentsize = sizeof(Elf64_Phdr);
  h.e_phnum = 1;
  h.e_phoff = sizeof h;
  std::vector<unsigned char> file(sizeof h + sizeof(Elf64_Phdr) + 64);
  Elf64_Phdr ph{};
  ph.p_type = PT_LOAD;
  ph.p_offset = 0;
  ph.p_filesz = ph.p_memsz = file.size();
  auto check = [&](const Elf64_Ehdr &header, const Elf64_Phdr &segment) {
    memcpy(file.data(), &header, sizeof header);
    memcpy(file.data() + sizeof header, &segment, sizeof segment);
    return takeMessage(
        paddle_check_shared_object(file.data(), file.size(), "m.so"));
  };
  EXPECT_EQ(check(h, ph), "");
  Elf64_Ehdr bad = h;
  bad.e_type = ET_EXEC;
  EXPECT_NE(check(bad, ph).find("not a shared object"), std::string::npos);
  bad = h;
  bad.e_machine = 0x1234;
  EXPECT_NE(check(bad, ph).find("another machine"), std::string::npos);
  bad = h;
  bad.e_phoff = ~0ull - 8;
  EXPECT_NE(check(bad, ph).find("program header table"), std::string::npos);
  Elf64_Phdr beyond = ph;
  beyond.p_offset = 64;
  EXPECT_NE(check(h, beyond).find("segment 0 lies outside the file"),
            std::string::npos);
  beyond = ph;
  beyond.p_type = PT_NOTE;
  EXPECT_NE(check(h, beyond).find("no loadable segment"), std::string::npos);
}

TEST(Device, CpuAndUnsupportedCuda) {
  paddle_device_t cpu = nullptr;
  ASSERT_EQ(paddle_device_create(PADDLE_DEVICE_CPU, 0, &cpu), nullptr);
  EXPECT_EQ(paddle_device_kind(cpu), PADDLE_DEVICE_CPU);
  EXPECT_STREQ(paddle_device_name(cpu), "cpu:0");
  paddle_device_free(cpu);
  paddle_device_t other = nullptr;
  paddle_status_t s = paddle_device_create(PADDLE_DEVICE_CPU, 1, &other);
  EXPECT_EQ(paddle_status_code(s), PADDLE_NOT_FOUND);
  paddle_status_free(s);
  s = paddle_device_create(PADDLE_DEVICE_CUDA, 0, &other);
  EXPECT_EQ(paddle_status_code(s), PADDLE_UNSUPPORTED);
  EXPECT_NE(takeMessage(s).find("without CUDA"), std::string::npos);
  EXPECT_EQ(other, nullptr);
}

TEST(Allocator, FailsOutsideACallByAborting) {
  // Without a call to end, an impossible allocation aborts with a message
  // rather than handing compiled code a null pointer.
  EXPECT_DEATH(paddle_alloc(SIZE_MAX / 2), "out of memory");
}

} // namespace
