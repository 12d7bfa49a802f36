#!/usr/bin/env bash
# Builds the runtime and its GoogleTest suites with clang-22 under
# AddressSanitizer (with LeakSanitizer) and UBSan, and runs them: a leak, an
# out-of-bounds access or undefined behaviour on any error path fails.
set -euo pipefail
cd "$(dirname "$0")/.."
CLANG=/usr/lib/llvm-22/bin/clang++
OUT=${PADDLE_SANITIZE_DIR:-build/sanitize}
mkdir -p "$OUT"
# The core runtime only: the oneDNN kernels (runtime/src/onednn/*.cpp, which
# this glob leaves out, and winograd_weights.cpp, their own library) need
# oneDNN and OpenMP, which symbols.cpp refers to only weakly.
SOURCES="$(ls runtime/src/*.cpp | grep -Ev '/winograd_weights\.cpp$')
  runtime/src/collectives/api.cpp runtime/src/collectives/local.cpp
  runtime/src/collectives/mpi_loader.cpp
  runtime/src/collectives/reduce.cpp runtime/src/collectives/spmd.cpp"
"$CLANG" -std=c++17 -O1 -g -fsanitize=address,undefined -fno-sanitize-recover=undefined \
  -fno-omit-frame-pointer -Iruntime/include -Iruntime/src \
  $SOURCES unittests/RuntimeTest.cpp unittests/NpyTest.cpp \
  unittests/SessionTest.cpp unittests/WeightsTest.cpp unittests/WorkspaceTest.cpp \
  unittests/ThreadPoolTest.cpp unittests/AsyncRuntimeTest.cpp unittests/OutputFileTest.cpp unittests/CApiTest.cpp \
  unittests/CollectivesTest.cpp unittests/SpmdTest.cpp \
  -lgtest -lgtest_main -pthread -o "$OUT/runtime-tests"
ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1 "$OUT/runtime-tests" --gtest_brief=1
