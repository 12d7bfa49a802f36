#!/usr/bin/env bash
# Installs the paddle_mlir package (python/, with the _core extension from
# the CMake build) into .venv; quick when nothing changed. Only into a venv
# this checkout owns: a .venv that is a symlink is shared with other
# checkouts, which must not see this one's package (they import it from
# their source tree through PADDLE_BUILD_DIR instead).
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -L .venv ]; then
  exit 0
fi
# scikit-build-core (pyproject.toml) builds the extension in the CMake build
# directory scripts/build.sh made, so this only installs what is built.
BUILD_DIR=${PADDLE_BUILD_DIR:-build}
.venv/bin/pip install --no-build-isolation --no-deps -q \
  --config-settings=build-dir="$BUILD_DIR" .
