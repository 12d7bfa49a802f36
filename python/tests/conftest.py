import os
import sys
import zlib
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
# The package from this checkout (python/paddle_mlir), with its native
# extension from the build tree (see python/paddle_mlir/__init__.py).
_REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(_REPO / "python"))
os.environ.setdefault("PADDLE_BUILD_DIR", str(_REPO / "build"))
# The tests expect the built-in default device: a spec this machine's user
# installed (paddle-calibrate --install, in $XDG_CACHE_HOME) would change
# what modules without a target compile for. An empty cache instead.
os.environ["XDG_CACHE_HOME"] = str(Path(os.environ["PADDLE_BUILD_DIR"]) / "test-cache")

from paddle_testing import PADDLE_RUN  # noqa: E402


def pytest_configure(config):
    if not PADDLE_RUN.exists():
        raise pytest.UsageError(
            f"{PADDLE_RUN} is missing: build first (scripts/test.sh does)")


@pytest.fixture
def ctx():
    """A fresh paddle_mlir._core.Context."""
    from paddle_mlir import _core
    return _core.Context()


@pytest.fixture
def rng(request):
    # A seed per test, stable across runs, so a failure reproduces.
    seed = zlib.crc32(request.node.nodeid.encode())
    return np.random.default_rng(seed)


def pytest_sessionstart(session):
    # Run every execution test on the thread pool with two threads, whatever
    # this machine's core count (the default); PADDLE_NUM_THREADS=1 in the
    # environment runs them all on the calling thread instead.
    os.environ.setdefault("PADDLE_NUM_THREADS", "2")
