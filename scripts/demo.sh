#!/usr/bin/env bash
# The main job: builds Paddle-MLIR, trains a CNN on scikit-learn's digits
# through the compiler (examples/train_digits.py: one compiled function per
# training step, >= 95% test accuracy), deploys the trained model ahead of
# time (.mlirbc -> paddle-run and a paddle-compile'd executable), then
# compiles and runs the hand-written demo model (examples/mlp) end to end
# and checks it against numpy.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
mkdir -p build
if ! bash scripts/build.sh > build/demo-build.log 2>&1; then
  tail -n 40 build/demo-build.log
  echo "demo: build failed (full log: build/demo-build.log)"
  exit 1
fi
bash scripts/install-python.sh
export PADDLE_NUM_THREADS=${PADDLE_NUM_THREADS:-2}
.venv/bin/python examples/train_digits.py --out build/digits
exec .venv/bin/python examples/mlp/demo.py
