#!/usr/bin/env bash
# clang-format (pinned in requirements-dev.txt, LLVM style via .clang-format)
# over the C/C++ sources. --check reports files that differ and fails.
set -euo pipefail
cd "$(dirname "$0")/.."
CLANG_FORMAT=.venv/bin/clang-format
files=$(git ls-files --cached --others --exclude-standard '*.cpp' '*.h' '*.c')
if [ "${1:-}" = "--check" ]; then
  $CLANG_FORMAT --dry-run --Werror $files
else
  $CLANG_FORMAT -i $files
fi
