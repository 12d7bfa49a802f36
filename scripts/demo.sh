#!/usr/bin/env bash
# The main job: builds Paddle-MLIR, then compiles and runs the demo model
# (examples/mlp) end to end and checks it against numpy.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
mkdir -p build
if ! bash scripts/build.sh > build/demo-build.log 2>&1; then
  tail -n 40 build/demo-build.log
  echo "demo: build failed (full log: build/demo-build.log)"
  exit 1
fi
exec .venv/bin/python examples/mlp/demo.py
