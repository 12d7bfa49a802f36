#!/usr/bin/env bash
# Runs every test: GoogleTest suites (ctest), lit IR tests, pytest execution
# tests. Ends with one line: "N passed, N failed[, N skipped]".
set -uo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh || exit 1
bash scripts/build.sh || { echo "build failed"; echo "0 passed, 1 failed"; exit 1; }
BUILD_DIR=${PADDLE_BUILD_DIR:-build}
bash scripts/install-python.sh ||
  { echo "pip install failed"; echo "0 passed, 1 failed"; exit 1; }
REPORTS="$BUILD_DIR/test-reports"
rm -rf "$REPORTS" && mkdir -p "$REPORTS"

echo "== unit tests (ctest)"
(cd "$BUILD_DIR" && ctest --output-on-failure --output-junit "$PWD/test-reports/ctest.xml" \
  -j"$(nproc)") | tail -n 5

echo "== IR tests (lit)"
.venv/bin/python /usr/lib/llvm-22/bin/lit -q --xunit-xml-output "$REPORTS/lit.xml" \
  "$BUILD_DIR/test"

echo "== execution tests (pytest)"
PADDLE_BUILD_DIR="$PWD/$BUILD_DIR" .venv/bin/python -m pytest -q -p no:cacheprovider \
  --junitxml "$REPORTS/pytest.xml" python/tests | tail -n 15

echo "== clang-format"
bash scripts/format.sh --check > "$REPORTS/format.txt" 2>&1
format_rc=$?
tail -n 20 "$REPORTS/format.txt"

echo "== generated docs up to date"
bash scripts/gen-docs.sh --check > "$REPORTS/docs.txt" 2>&1
docs_rc=$?
tail -n 20 "$REPORTS/docs.txt"

.venv/bin/python scripts/summarize_tests.py "$REPORTS" \
  --extra-check clang-format=$format_rc --extra-check generated-docs=$docs_rc
