"""Paddle-MLIR: an ML compiler on MLIR, from Python."""
import os as _os

# In a source checkout the native extension lives in the CMake build tree
# (build/python_packages/paddle_mlir); an installed package carries its own.
if _os.environ.get("PADDLE_BUILD_DIR") and not any(
        _name.startswith("_core") and _name.endswith((".so", ".pyd"))
        for _dir in __path__ for _name in _os.listdir(_dir)):
    __path__.append(_os.path.join(_os.environ["PADDLE_BUILD_DIR"],
                                  "python_packages", "paddle_mlir"))

from . import _core  # noqa: E402
