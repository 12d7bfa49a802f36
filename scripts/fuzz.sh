#!/usr/bin/env bash
# Builds the libFuzzer targets (clang-22, AddressSanitizer + UBSan) for every
# loader of untrusted bytes and runs each for SECONDS (default 20).
#   bash scripts/fuzz.sh [SECONDS]   (PADDLE_FUZZ_TARGETS="npy weights elf" by default)
# Prints one line per target: how long it ran clean and how many inputs.
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_PER_TARGET=${1:-20}
CLANG=/usr/lib/llvm-22/bin/clang++
OUT=${PADDLE_FUZZ_DIR:-build/fuzz}
mkdir -p "$OUT"
RUNTIME_SOURCES=(runtime/src/status.cpp runtime/src/tensor.cpp runtime/src/npy.cpp
  runtime/src/weights.cpp runtime/src/elf_check.cpp)
for target in ${PADDLE_FUZZ_TARGETS:-npy weights elf}; do
  bin="$OUT/${target}_fuzzer"
  "$CLANG" -std=c++17 -O1 -g -fsanitize=fuzzer,address,undefined \
    -fno-sanitize-recover=undefined -Iruntime/include \
    "fuzz/${target}_fuzzer.cpp" "${RUNTIME_SOURCES[@]}" -o "$bin"
  corpus="$OUT/corpus-$target"
  mkdir -p "$corpus"
  cp -n fuzz/corpus/$target/* "$corpus"/ 2>/dev/null || true
  log="$OUT/$target.log"
  if ! "$bin" -max_total_time="$SECONDS_PER_TARGET" -rss_limit_mb=2048 \
      -max_len=4096 "$corpus" > "$log" 2>&1; then
    tail -n 40 "$log"
    echo "fuzz: $target FAILED (log: $log)"
    exit 1
  fi
  runs=$(grep -o 'Done [0-9]* runs' "$log" | tail -n 1 | awk '{print $2}')
  echo "fuzz: $target ran clean for ${SECONDS_PER_TARGET}s, ${runs:-?} inputs"
done
