"""Paddle-MLIR: an ML compiler on MLIR, from Python."""
import os as _os

# In a source checkout the native extension lives in the CMake build tree
# (build/python_packages/paddle_mlir); an installed package carries its own.
if _os.environ.get("PADDLE_BUILD_DIR") and not any(
        _name.startswith("_core") and _name.endswith((".so", ".pyd"))
        for _dir in __path__ for _name in _os.listdir(_dir)):
    __path__.append(_os.path.join(_os.environ["PADDLE_BUILD_DIR"],
                                  "python_packages", "paddle_mlir"))

# oneDNN's matmuls and convolutions run on libgomp's OpenMP threads, which
# spin after each call for 300000 pauses by default (about 8 ms on this
# project's Xeon) before they sleep. With as many threads as cores, that
# spin takes the core this runtime's pool worker needs for the kernels that
# follow. GOMP_SPINCOUNT=10000 (about 0.3 ms) still bridges one oneDNN call
# to the next: training steps on 2 threads take 0.88-0.95x the time, BERT
# 1.025x (docs/onednn.md, "Threads"). libgomp reads it once, when _core
# loads it; the variable is removed again afterwards, so libraries loaded
# later and child processes see the user's environment. Not set when the
# user set it or OMP_WAIT_POLICY, nor effective when libgomp was loaded
# before this import.
_GOMP_SPINCOUNT = "10000"
_set_spin = not ({"GOMP_SPINCOUNT", "OMP_WAIT_POLICY"} & set(_os.environ))
if _set_spin:
    _os.environ["GOMP_SPINCOUNT"] = _GOMP_SPINCOUNT
try:
    from . import _core  # noqa: E402
finally:
    if _set_spin:
        del _os.environ["GOMP_SPINCOUNT"]

# -- frontend: NumPy-like functions, jit, grad (python/paddle_mlir/_*.py) -----
from ._frontend import *  # noqa: E402,F401,F403
from ._frontend import __all__ as _frontend_all  # noqa: E402
