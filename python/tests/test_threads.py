"""Parallel loops on the runtime's thread pool (runtime.h, "Threads").

The execution tests run with PADDLE_NUM_THREADS=2 (conftest.py), but their
shapes are mostly below the pipeline's minimum task size (4096 iterations of
the parallel dims), where loops run serially. Here a representative subset
of ops runs at sizes that split into several blocks, with --threads 1, 2
and 3, and each result must be:

- bitwise equal across thread counts: every output element, and every
  reduction along a parallel dim, is computed by one thread in one order;
- close to numpy: f32 within rtol 1e-5 / atol 1e-5 (sums in a different order
  than numpy's pairwise sums); max and integer ops exact.

Also: a failed run-time check with several threads is an error, not a
crash (the check runs on the calling thread), AOT executables with
--threads agree bitwise with the JIT, and importing the package shortens
libgomp's spin (paddle_mlir/__init__.py) unless the user chose one.
"""

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from paddle_testing import BUILD, RUNTIME_CHECK_ERROR, PaddleRunError, run_module

F32 = "f32"


def np_softmax(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


# name: (module, input shapes, dtype, numpy reference, exact)
CASES = {
    "add_tanh": (
        """func.func @main(%a: tensor<?x?xf32>, %b: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %0 = paddle.add %a, %b : tensor<?x?xf32>, tensor<?x?xf32> -> tensor<?x?xf32>
  %1 = paddle.tanh %0 : tensor<?x?xf32> -> tensor<?x?xf32>
  return %1 : tensor<?x?xf32>
}""", [(300, 517), (300, 517)], np.float32, lambda a, b: np.tanh(a + b), False),
    "broadcast_mul_i32": (
        """func.func @main(%a: tensor<?x?xi32>, %b: tensor<?xi32>) -> tensor<?x?xi32> {
  %0 = paddle.mul %a, %b : tensor<?x?xi32>, tensor<?xi32> -> tensor<?x?xi32>
  return %0 : tensor<?x?xi32>
}""", [(129, 250), (250,)], np.int32, lambda a, b: a * b, True),
    "sum_rows": (
        """func.func @main(%x: tensor<?x?xf32>) -> tensor<?xf32> {
  %0 = paddle.reduce_sum %x axes = [1] : tensor<?x?xf32> -> tensor<?xf32>
  return %0 : tensor<?xf32>
}""", [(9000, 37)], np.float32, lambda x: x.sum(axis=1), False),
    "sum_columns": (
        """func.func @main(%x: tensor<?x?xf32>) -> tensor<?xf32> {
  %0 = paddle.reduce_sum %x axes = [0] : tensor<?x?xf32> -> tensor<?xf32>
  return %0 : tensor<?xf32>
}""", [(41, 9000)], np.float32, lambda x: x.sum(axis=0), False),
    "max_rows": (
        """func.func @main(%x: tensor<?x?xf32>) -> tensor<?xf32> {
  %0 = paddle.reduce_max %x axes = [1] : tensor<?x?xf32> -> tensor<?xf32>
  return %0 : tensor<?xf32>
}""", [(8200, 19)], np.float32, lambda x: x.max(axis=1), True),
    "softmax": (
        """func.func @main(%x: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %0 = paddle.softmax %x axis = 1 : tensor<?x?xf32> -> tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}""", [(4500, 24)], np.float32, np_softmax, False),
    "matmul": (
        """func.func @main(%a: tensor<?x?xf32>, %b: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %0 = paddle.matmul %a, %b : tensor<?x?xf32>, tensor<?x?xf32> -> tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}""", [(130, 70), (70, 97)], np.float32, lambda a, b: a @ b, False),
}


def make_inputs(rng, shapes, dtype):
    if np.issubdtype(dtype, np.integer):
        return [rng.integers(-1000, 1000, s).astype(dtype) for s in shapes]
    return [rng.standard_normal(s).astype(dtype) for s in shapes]


@pytest.mark.parametrize("name", sorted(CASES))
def test_identical_across_thread_counts(tmp_path, rng, name):
    text, shapes, dtype, reference, exact = CASES[name]
    inputs = make_inputs(rng, shapes, dtype)
    results = {}
    for threads in (1, 2, 3):
        (tmp_path / str(threads)).mkdir()
        (r,) = run_module(tmp_path / str(threads), text, inputs,
                          extra_args=["--threads", str(threads)])
        results[threads] = r
    expected = reference(*inputs)
    for threads, r in results.items():
        assert r.dtype == expected.dtype and r.shape == expected.shape
        assert r.tobytes() == results[1].tobytes(), f"{threads} threads differ"
    if exact:
        np.testing.assert_array_equal(results[1], expected)
    else:
        np.testing.assert_allclose(results[1], expected, rtol=1e-5, atol=1e-5)


def test_failed_check_with_threads_is_an_error(tmp_path, rng):
    text, _, _, _, _ = CASES["add_tanh"]
    a = rng.standard_normal((300, 517)).astype(np.float32)
    b = rng.standard_normal((300, 516)).astype(np.float32)
    with pytest.raises(PaddleRunError, match=RUNTIME_CHECK_ERROR):
        run_module(tmp_path, text, [a, b], extra_args=["--threads", "2"])


def test_aot_executable_threads_match_jit(tmp_path, rng):
    text = CASES["sum_rows"][0].replace("@main", "@rows")
    src = tmp_path / "rows.mlir"
    src.write_text(text)
    exe = tmp_path / "rows"
    proc = subprocess.run([str(BUILD / "bin" / "paddle-compile"), str(src), "-o", str(exe),
                           "--emit", "exe"], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    x = rng.standard_normal((9000, 37)).astype(np.float32)
    np.save(tmp_path / "x.npy", x)
    (tmp_path / "jit").mkdir()
    (jit,) = run_module(tmp_path / "jit", text, [x], extra_args=["--threads", "1"])
    for threads in ("1", "2"):
        out = tmp_path / f"aot{threads}"
        run = subprocess.run([str(exe), "--threads", threads, "--input", str(tmp_path / "x.npy"),
                              "--output-dir", str(out)], capture_output=True, text=True,
                             timeout=60)
        assert run.returncode == 0, run.stderr
        assert np.load(out / "rows_0.npy").tobytes() == jit.tobytes()
    bad = subprocess.run([str(exe), "--threads", "0"], capture_output=True, text=True)
    assert bad.returncode == 1
    assert "--threads expects a count from 1 to 4096, got '0'" in bad.stderr


@pytest.mark.parametrize("user_env, libgomp_reads, left_in_environ", [
    ({}, "10000", None),                                  # the package's default
    ({"GOMP_SPINCOUNT": "77"}, "77", "77"),               # the user's count
    ({"OMP_WAIT_POLICY": "passive"}, "0", None),          # the user's policy
])
def test_package_import_sets_a_short_libgomp_spin(user_env, libgomp_reads, left_in_environ):
    # libgomp prints the spin count it read when OMP_DISPLAY_ENV is set; it
    # reads its environment once, when `import paddle_mlir` loads _core.
    env = {k: v for k, v in os.environ.items() if k not in ("GOMP_SPINCOUNT", "OMP_WAIT_POLICY")}
    env.update(user_env, OMP_DISPLAY_ENV="verbose",
               PYTHONPATH=str(Path(__file__).resolve().parents[1]))
    proc = subprocess.run(
        [sys.executable, "-c",
         "import os, paddle_mlir; print(os.environ.get('GOMP_SPINCOUNT'))"],
        env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert f"GOMP_SPINCOUNT = '{libgomp_reads}'" in proc.stderr
    # Child processes and libraries loaded later see the user's environment.
    assert proc.stdout.strip() == str(left_in_environ)
