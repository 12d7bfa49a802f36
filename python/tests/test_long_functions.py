"""A function of thousands of ops compiles and runs correctly.

Long functions go through the pipeline in pieces (docs/compile-time.md,
"Scaling with the op count"): bufferization in parts
(paddle-split-functions / paddle-inline-parts), one function per kernel
(paddle-outline-kernels, equal ones kept once), and the entry compiled by
LLVM's unoptimized code generator. These tests run such a chain, the
benchmark's shape (op i is tanh, sin or a matmul with one shared weight),
through paddle-run and through the ONNX importer, against numpy in
float64. The weight is orthogonal, so errors neither grow nor vanish
along the chain: the results stay within 2e-5 of numpy.
"""

import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from onnx_testing import context
from paddle_testing import PADDLE_OPT, run_module

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from compile_scaling import SIZE, chain_mlir, chain_onnx  # noqa: E402

N = 1500  # ops: several parts of paddle-split-functions' 256
TOLERANCE = dict(rtol=2e-5, atol=2e-5)


def chain_reference(x, w, n):
    cur, w = x.astype(np.float64), w.astype(np.float64)
    for i in range(n):
        cur = cur @ w if i % 3 == 2 else (np.tanh(cur) if i % 3 == 0 else np.sin(cur))
    return cur


@pytest.fixture
def inputs(rng):
    x = rng.uniform(-2, 2, size=(SIZE, SIZE)).astype(np.float32)
    q, _ = np.linalg.qr(rng.standard_normal((SIZE, SIZE)))
    return x, q.astype(np.float32)


def test_long_chain_runs_as_numpy(tmp_path, inputs):
    x, w = inputs
    text = chain_mlir(N)
    (got,) = run_module(tmp_path, text, [x, w])
    want = chain_reference(x, w, N)
    # The values stay of order 0.1, far from what the tolerance hides.
    assert np.abs(want).max() > 0.05
    np.testing.assert_allclose(got, want, **TOLERANCE)


def test_long_chain_same_bits_on_one_compile_thread(inputs):
    """The entry is a part of its own (compiled unoptimized) next to one
    optimized part or several: the results do not depend on it."""
    from paddle_mlir import _core
    x, w = inputs
    runs = []
    for threads in [1, 2]:
        module = _core.Module.parse(context(), chain_mlir(N))
        exe = _core.compile(module, compile_threads=threads)
        assert exe.compile_parts() == threads
        runs.append(exe.run("main", [x, w])[0])
    np.testing.assert_array_equal(runs[0], runs[1])
    np.testing.assert_allclose(runs[0], chain_reference(x, w, N), **TOLERANCE)


def test_long_chain_is_bufferized_in_parts(tmp_path):
    """The test above goes through the parts (were no cut found, it would
    not test them)."""
    module = tmp_path / "chain.mlir"
    module.write_text(chain_mlir(N))
    proc = subprocess.run(
        [str(PADDLE_OPT), str(module), "--paddle-cpu-pipeline",
         "--mlir-print-ir-after=paddle-split-functions", "-o", str(tmp_path / "out.mlir")],
        capture_output=True, text=True, check=True)
    calls = re.findall(r"call @main_part\w*\(", proc.stderr)
    assert len(calls) >= 2


def test_long_onnx_chain_runs_as_numpy(inputs):
    from paddle_mlir import _core
    from paddle_mlir.onnx import import_model
    x, w = inputs
    model = chain_onnx(N, w)
    imported = import_model(model, context=context())
    exe = _core.compile(imported.module)
    (got,) = exe.run(imported.function_name, [x])
    np.testing.assert_allclose(got, chain_reference(x, w, N), **TOLERANCE)
