"""paddle_mlir (placeholder header: the core branch writes the real one,
which loads the native `_core` extension)."""

from . import _core  # noqa: F401

# -- frontend: NumPy-like functions, jit, grad (python/paddle_mlir/_*.py) -----
from ._frontend import *  # noqa: E402,F401,F403
from ._frontend import __all__ as _frontend_all  # noqa: E402
