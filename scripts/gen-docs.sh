#!/usr/bin/env bash
# Regenerates docs/generated/ from ODS (dialect, ops, passes).
#   --check: fail when the committed docs differ from what ODS generates.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${PADDLE_BUILD_DIR:-build}
ninja -C "$BUILD_DIR" mlir-doc > /dev/null
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
cp "$BUILD_DIR/docs/Dialects/PaddleDialect.md" "$out/PaddleDialect.md"
cp "$BUILD_DIR/docs/PaddleConversionPasses.md" "$out/PaddleConversionPasses.md"
cp "$BUILD_DIR/docs/PaddleTransformsPasses.md" "$out/PaddleTransformsPasses.md"
cp "$BUILD_DIR/docs/PaddleCostModelPasses.md" "$out/PaddleCostModelPasses.md"
cp "$BUILD_DIR/docs/PaddleShardingPasses.md" "$out/PaddleShardingPasses.md"
if [ "${1:-}" = "--check" ]; then
  if ! diff -ru docs/generated "$out"; then
    echo "docs/generated is stale: run scripts/gen-docs.sh and commit it"
    exit 1
  fi
else
  rm -rf docs/generated && mkdir -p docs/generated
  cp "$out"/*.md docs/generated/
fi
