#!/usr/bin/env bash
# End-to-end check of the ONNX importer on real exported models (not part of
# scripts/test.sh: it installs torch, a large download).
#
#   bash scripts/onnx_models.sh [--no-install] [OUT_DIR]
#
# 1. installs torch + torchvision (pinned in requirements-models.txt, PyPI)
#    into .venv unless --no-install;
# 2. exports ResNet-18, MobileNetV2 (torchvision, random weights) and a
#    BERT-like encoder layer (torch.nn.TransformerEncoderLayer) to ONNX
#    (opset 17, dynamic batch dim) in OUT_DIR (default build/onnx-models);
# 3. imports each with paddle_mlir.onnx, compiles, runs and compares with
#    onnxruntime; fails if any max abs error exceeds 1e-4.
set -euo pipefail
cd "$(dirname "$0")/.."
install=1
if [[ "${1:-}" == "--no-install" ]]; then install=0; shift; fi
out=${1:-build/onnx-models}
if (( install )); then
  .venv/bin/python -m pip install -q -r requirements-models.txt
fi
mkdir -p "$out"
PYTHONPATH="$PWD/python" PADDLE_BUILD_DIR="${PADDLE_BUILD_DIR:-$PWD/build}" \
  .venv/bin/python scripts/onnx_models.py "$out"
