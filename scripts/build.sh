#!/usr/bin/env bash
# Configures (once) and builds Paddle-MLIR in build/ with Ninja and ccache.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${PADDLE_BUILD_DIR:-build}
if [ ! -f "$BUILD_DIR/build.ninja" ]; then
  cmake -S . -B "$BUILD_DIR" -G Ninja \
    -DCMAKE_BUILD_TYPE=Release \
    -DMLIR_DIR=/usr/lib/llvm-22/lib/cmake/mlir \
    -DLLVM_EXTERNAL_LIT=/usr/lib/llvm-22/bin/lit \
    -DPython3_EXECUTABLE="$PWD/.venv/bin/python" >/dev/null
fi
ninja -C "$BUILD_DIR" -j"${PADDLE_JOBS:-$(nproc)}" all
