"""The installed package (`pip install .`, which scripts/test.sh runs where the
checkout owns its venv) imports from site-packages in a clean process and
runs a compiled function. Skipped where it is not installed."""

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PYTHON = REPO / ".venv" / "bin" / "python"

CHECK = textwrap.dedent("""
    import numpy as np
    import paddle_mlir
    from paddle_mlir import _core
    print(paddle_mlir.__file__)
    print(_core.__file__)
    m = _core.Module.parse(_core.Context(), '''
    func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {
      %0 = paddle.exp %a : tensor<4xf32> -> tensor<4xf32>
      return %0 : tensor<4xf32>
    }''')
    x = np.linspace(-1, 1, 4, dtype=np.float32)
    (y,) = _core.compile(m).run("f", [x])
    np.testing.assert_allclose(y, np.exp(x), rtol=1e-6)
    print("ok")
""")


def clean_env():
    env = dict(os.environ)
    for name in ("PYTHONPATH", "PADDLE_BUILD_DIR", "PYTHONHOME"):
        env.pop(name, None)
    return env


def test_installed_package_runs_from_site_packages(tmp_path):
    python = PYTHON if PYTHON.exists() else Path(sys.executable)
    probe = subprocess.run(
        [str(python), "-c",
         "import importlib.util as u; s = u.find_spec('paddle_mlir'); "
         "print(s.origin if s else '')"],
        cwd=tmp_path, env=clean_env(), capture_output=True, text=True,
        check=True)
    origin = probe.stdout.strip()
    if not origin:
        pytest.skip(f"paddle_mlir is not installed in {python} (scripts/test.sh "
                    "installs it only into a venv the checkout owns; helpers "
                    "sharing a venv never install it)")
    run = subprocess.run([str(python), "-c", CHECK], cwd=tmp_path,
                         env=clean_env(), capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    package, core, status = run.stdout.split()
    assert "site-packages" in package and "site-packages" in core, package
    assert not package.startswith(str(REPO / "python")), package
    assert status == "ok"
