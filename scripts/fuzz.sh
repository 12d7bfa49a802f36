#!/usr/bin/env bash
# Builds the libFuzzer targets (clang-22, AddressSanitizer + UBSan) for every
# loader of untrusted bytes and runs each for SECONDS (default 20).
#   bash scripts/fuzz.sh [SECONDS]   (PADDLE_FUZZ_TARGETS="npy weights elf bytecode"
#                                     by default; bytecode needs the build)
# Prints one line per target: how long it ran clean and how many inputs.
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_PER_TARGET=${1:-20}
CLANG=/usr/lib/llvm-22/bin/clang++
OUT=${PADDLE_FUZZ_DIR:-build/fuzz}
mkdir -p "$OUT"
RUNTIME_SOURCES=(runtime/src/status.cpp runtime/src/tensor.cpp runtime/src/npy.cpp
  runtime/src/weights.cpp runtime/src/elf_check.cpp runtime/src/output_file.cpp)
BUILD_DIR=${PADDLE_BUILD_DIR:-build}
for target in ${PADDLE_FUZZ_TARGETS:-npy weights elf bytecode}; do
  bin="$OUT/${target}_fuzzer"
  if [ "$target" = bytecode ]; then
    # The module loader (lib/Execution/SourceModule.cpp) over MLIR: the
    # paddle dialect from the build, MLIR and LLVM as shared libraries.
    "$CLANG" -std=c++17 -O1 -g -fsanitize=fuzzer,address,undefined \
      -fno-sanitize=vptr -fno-sanitize-recover=undefined -I. -Iinclude \
      -I"$BUILD_DIR" -I"$BUILD_DIR/include" -Iruntime/include \
      -I/usr/lib/llvm-22/include fuzz/bytecode_fuzzer.cpp \
      lib/Execution/SourceModule.cpp \
      "$BUILD_DIR/dialects/Paddle/IR/libPaddleDialect.a" \
      "$BUILD_DIR/lib/CostModel/libPaddleDeviceSpec.a" \
      -L/usr/lib/llvm-22/lib -lMLIR -lLLVM -Wl,-rpath,/usr/lib/llvm-22/lib \
      -o "$bin"
  else
    "$CLANG" -std=c++17 -O1 -g -fsanitize=fuzzer,address,undefined \
      -fno-sanitize-recover=undefined -Iruntime/include \
      "fuzz/${target}_fuzzer.cpp" "${RUNTIME_SOURCES[@]}" -o "$bin"
  fi
  corpus="$OUT/corpus-$target"
  mkdir -p "$corpus"
  cp -n fuzz/corpus/$target/* "$corpus"/ 2>/dev/null || true
  log="$OUT/$target.log"
  # Artifacts (crash-*) go to OUT, never to the checkout.
  if ! "$bin" -max_total_time="$SECONDS_PER_TARGET" -rss_limit_mb=2048 \
      -artifact_prefix="$OUT/" \
      -max_len=8192 "$corpus" > "$log" 2>&1; then
    tail -n 40 "$log"
    echo "fuzz: $target FAILED (log: $log)"
    exit 1
  fi
  runs=$(grep -o 'Done [0-9]* runs' "$log" | tail -n 1 | awk '{print $2}')
  echo "fuzz: $target ran clean for ${SECONDS_PER_TARGET}s, ${runs:-?} inputs"
done
