"""paddle-use-onednn under valgrind's memcheck, on its lit inputs.

The pass rewrites ops in place (a named matmul becomes a generic before it
absorbs a transpose, conv padding folds into the call) and erases the ops it
replaces; a use of an erased op reads freed memory, which crashed only when
that memory had been reused (about half the runs of the MLP train step).
memcheck reports every such read, so these runs fail deterministically.
Skipped where valgrind is not installed (scripts/setup.sh installs it).
"""

import shutil
import subprocess

import pytest
from paddle_testing import PADDLE_OPT, REPO

VALGRIND = shutil.which("valgrind")
INPUTS = ["paddle-use-onednn-transpose.mlir", "paddle-use-onednn-padding.mlir",
          "paddle-use-onednn-postops.mlir", "paddle-use-onednn-grouped.mlir",
          "paddle-use-onednn-pooling.mlir"]


@pytest.mark.skipif(VALGRIND is None, reason="valgrind is not installed")
@pytest.mark.parametrize("name", INPUTS)
def test_use_onednn_memcheck(tmp_path, name):
    path = REPO / "test" / "Transforms" / name
    proc = subprocess.run(
        [VALGRIND, "--error-exitcode=9", "--leak-check=no", str(PADDLE_OPT), str(path),
         "--paddle-set-target=library=onednn", "--paddle-use-onednn", "--split-input-file", "-o", str(tmp_path / "out.mlir")],
        capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-4000:]
