"""Packaging as Python users do it: in a fresh venv, `pip wheel .` (pip's
isolated build: scikit-build-core drives CMake, pyproject.toml) builds a
wheel; in another fresh venv the wheel installs with its dependencies
(numpy; onnx as the `onnx` extra) and runs pm.jit and paddle-import-onnx
from site-packages. The wheel build reuses the checkout's build directory,
so it is quick where the project is built."""

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from paddle_testing import BUILD, REPO

VENV_PYTHON = REPO / ".venv" / "bin" / "python"

CHECK = textwrap.dedent("""
    import sys
    import numpy as np
    import paddle_mlir as pm
    assert "site-packages" in pm.__file__, pm.__file__
    a = np.arange(12, dtype=np.float32).reshape(3, 4) / 7
    b = np.arange(8, dtype=np.float32).reshape(4, 2) / 5
    f = pm.jit(lambda a, b: pm.tanh(a @ b) + 1)
    np.testing.assert_allclose(f(a, b), np.tanh(a.astype(np.float64) @ b) + 1,
                               rtol=1e-5, atol=1e-6)
    import onnx
    from onnx import TensorProto, helper
    graph = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["y"])], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])])
    onnx.save(helper.make_model(graph), sys.argv[1])
    print("ok")
""")


def clean_env():
    env = dict(os.environ)
    for name in ("PYTHONPATH", "PADDLE_BUILD_DIR", "PYTHONHOME", "VIRTUAL_ENV"):
        env.pop(name, None)
    return env


def run(cmd, **kw):
    proc = subprocess.run([str(c) for c in cmd], capture_output=True, text=True,
                          env=clean_env(), timeout=1500, **kw)
    assert proc.returncode == 0, f"{cmd}:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    return proc


@pytest.mark.skipif(BUILD.resolve() != (REPO / "build").resolve(),
                    reason="the wheel build reuses build/ (pyproject.toml)")
def test_wheel_builds_isolated_and_installs_in_a_fresh_venv(tmp_path):
    base = VENV_PYTHON if VENV_PYTHON.exists() else Path(sys.executable)
    try:
        run([base, "-m", "venv", tmp_path / "build-venv"])
        run([tmp_path / "build-venv" / "bin" / "pip", "wheel", "--no-deps", "-q",
             "-w", tmp_path / "wheels", REPO])
    finally:
        # The isolated build configured build/ with its own interpreter, which
        # is gone with tmp_path: point the cache back at the venv's.
        if VENV_PYTHON.exists():
            subprocess.run(["cmake", "-S", REPO, "-B", REPO / "build",
                            f"-DPython3_EXECUTABLE={VENV_PYTHON}",
                            f"-DPython_EXECUTABLE={VENV_PYTHON}"],
                           capture_output=True, timeout=600)
    (wheel,) = (tmp_path / "wheels").glob("paddle_mlir-*.whl")
    run([base, "-m", "venv", tmp_path / "user-venv"])
    bin_dir = tmp_path / "user-venv" / "bin"
    run([bin_dir / "pip", "install", "-q", f"{wheel}[onnx]"])
    model = tmp_path / "relu.onnx"
    proc = run([bin_dir / "python", "-c", CHECK, model], cwd=tmp_path)
    assert proc.stdout.strip() == "ok"
    out = tmp_path / "relu.mlir"
    run([bin_dir / "paddle-import-onnx", model, "-o", out], cwd=tmp_path)
    assert "paddle.relu" in out.read_text() or "paddle.max" in out.read_text()
