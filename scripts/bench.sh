#!/usr/bin/env bash
# Side-by-side benchmark against peers (issue 5); a measurement, not a test.
#
#   bash scripts/bench.sh [--no-install] [compare.py options]
#     e.g. --quick (a few workloads, 3 repetitions, one run, minutes),
#          --runs 2 (the default: every claim from two runs),
#          --only 'gemm|resnet18', --reps 20, --threads 1,2, --budget 60,
#          --burst-rounds 0 (no back-to-back GEMM table; default 10 rounds)
#
# 1. installs requirements-models.txt (torch, torchvision) and
#    requirements-bench.txt (IREE compiler and runtime, matplotlib) into .venv
#    unless --no-install (pip skips what is already there);
# 2. builds (scripts/build.sh, under /tmp/paddle-build.lock when flock is
#    there: the machine is shared);
# 3. runs benchmarks/compare.py: ours (ONNX -> paddle_mlir.onnx ->
#    _core.compile), onnxruntime, PyTorch eager, torch.compile, IREE, and for
#    GEMM numpy and torch's oneDNN, interleaved in one process (GEMMs twice:
#    a call after an idle gap, then bursts of calls back to back); writes the
#    tables between the markers of docs/performance.md and
#    docs/images/bench-peers.png (with --quick: build/bench/results.md and
#    build/bench/quick.png only). Raw numbers: build/bench/results.json.
set -euo pipefail
cd "$(dirname "$0")/.."
install=1
if [[ "${1:-}" == "--no-install" ]]; then install=0; shift; fi
if (( install )); then
  .venv/bin/python -m pip install -q -r requirements-models.txt -r requirements-bench.txt
fi
if command -v flock > /dev/null; then
  PADDLE_JOBS=${PADDLE_JOBS:-2} flock /tmp/paddle-build.lock bash scripts/build.sh
else
  bash scripts/build.sh
fi
BUILD_DIR=${PADDLE_BUILD_DIR:-$PWD/build}
PYTHONPATH="$PWD/python" PADDLE_BUILD_DIR="$BUILD_DIR" \
  .venv/bin/python benchmarks/compare.py --build-dir "$BUILD_DIR" "$@"
