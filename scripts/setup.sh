#!/usr/bin/env bash
# Installs what building and testing Paddle-MLIR needs; idempotent and quick
# when everything is already there.
#   - Debian packages: LLVM/MLIR 22, the toolchain, GoogleTest (apt-get)
#   - a Python venv at .venv with requirements-dev.txt (pip)
set -euo pipefail
cd "$(dirname "$0")/.."

APT_PACKAGES=(
  llvm-22-dev libmlir-22-dev mlir-22-tools llvm-22-tools
  cmake ninja-build ccache g++ libgtest-dev python3 python3-venv
  clang-22 libclang-rt-22-dev nlohmann-json3-dev pybind11-dev
  # oneDNN (the library path, docs/onednn.md); its CMake config needs OpenCL.
  libdnnl-dev ocl-icd-opencl-dev opencl-headers
  # memcheck runs of the passes (python/tests/test_memcheck.py).
  valgrind
  # The MPI backend of the collectives (docs/distributed.md).
  mpich libmpich-dev
  # The ILP solver of the auto-sharding search (docs/distributed.md).
  coinor-libcbc-dev
)

missing=()
for p in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
    missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends \
    "${missing[@]}" >/dev/null
fi

PYTHON=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  echo "setup: creating .venv"
  "$PYTHON" -m venv .venv
fi
stamp=.venv/.requirements-dev.sha
want=$(sha256sum requirements-dev.txt | cut -d' ' -f1)
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
  echo "setup: installing Python requirements"
  .venv/bin/pip install -q --disable-pip-version-check -r requirements-dev.txt
  echo "$want" > "$stamp"
fi
