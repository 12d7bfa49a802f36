"""The Python frontend under careless or concurrent use: never a hang.

- first compiled calls from several threads at once (a deadlock in
  pybind11's lazily filled numpy API table, filled at import now).
"""

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import paddle_mlir as pm


@pytest.fixture(autouse=True)
def fast_compiles():
    prev = pm.set_default_opt_level(0)
    yield
    pm.set_default_opt_level(prev)


# -- threads -------------------------------------------------------------------

# N threads wait at a barrier, then each makes the first calls of 3 jitted
# functions of its own: tracing builds constants (numpy arrays into the
# extension) and running converts results, both first uses of pybind11's
# numpy API in the process.
COLD_THREADS = """
import sys, threading
import numpy as np
import paddle_mlir as pm
pm.set_default_opt_level(0)
threads, calls = int(sys.argv[1]), int(sys.argv[2])
barrier = threading.Barrier(threads)
errors = []

def work(t):
    fs = [pm.jit(lambda x, k=k: pm.tanh(x * (k + 1.5)) + t) for k in range(calls)]
    x = np.full((4,), 0.25, np.float32)
    barrier.wait()
    try:
        for k, f in enumerate(fs):
            np.testing.assert_allclose(f(x), np.tanh(x * (k + 1.5)) + t, rtol=1e-5)
    except BaseException as e:
        errors.append(e)

workers = [threading.Thread(target=work, args=(t,)) for t in range(threads)]
for w in workers:
    w.start()
for w in workers:
    w.join()
if errors:
    raise errors[0]
print("done")
"""


def test_first_compiled_calls_from_several_threads():
    # Before the fix, 4 threads x 3 calls hung in 6 runs out of 6.
    env = dict(os.environ, PYTHONPATH=str(Path(pm.__file__).resolve().parents[1]))
    for run in range(10):
        try:
            proc = subprocess.run([sys.executable, "-c", COLD_THREADS, "4", "3"], env=env,
                                  capture_output=True, text=True, timeout=60)
        except subprocess.TimeoutExpired:
            pytest.fail(f"run {run}: 4 threads making their first compiled calls did not "
                        "finish in 60 s (deadlock)")
        assert proc.returncode == 0 and proc.stdout.strip() == "done", proc.stderr
