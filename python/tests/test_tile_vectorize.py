"""Tiled, vectorized code (paddle-tile-and-vectorize) against numpy.

Static f32 matmuls, batch matmuls and elementwise ops take the tiled path;
random shapes are drawn from those whose dims the register tiles divide
(the pass leaves the others to the scalar loops, which the rest of the
suite covers). Each result must be:

- close to numpy: f32 within rtol 1e-4 / atol 1e-4 for contractions of up
  to 384 terms (FMA, summed in k order, not numpy's blocked order), 1e-5 for
  elementwise ops;
- bitwise equal for 1 and 2 threads (each output element is computed by
  one tile in k order);
- close to the scalar path (--tile-and-vectorize=0): same tolerance.

All runs use --library=none, so the oneDNN path never takes the matmuls.
"""

import numpy as np
import pytest
from paddle_testing import run_module, tensor_type


def matmul_module(a_shape, b_shape, out_shape):
    ta, tb, to = (tensor_type(s, np.float32) for s in (a_shape, b_shape, out_shape))
    return f"""func.func @main(%a: {ta}, %b: {tb}) -> {to} {{
  %0 = paddle.matmul %a, %b : {ta}, {tb} -> {to}
  %1 = paddle.relu %0 : {to} -> {to}
  return %1 : {to}
}}"""


def run_all_ways(tmp_path, text, inputs):
    # --library=none: large matmuls would otherwise go to oneDNN.
    for sub in ("t1", "t2", "s"):
        (tmp_path / sub).mkdir()
    one = run_module(tmp_path / "t1", text, inputs,
                     extra_args=["--library=none", "--threads", "1"])[0]
    two = run_module(tmp_path / "t2", text, inputs,
                     extra_args=["--library=none", "--threads", "2"])[0]
    scalar = run_module(tmp_path / "s", text, inputs,
                        extra_args=["--library=none", "--tile-and-vectorize=0"])[0]
    np.testing.assert_array_equal(one, two)
    return one, scalar


def check_matmul(tmp_path, rng, m, k, n):
    """relu(a @ b) for random a (m x k) and b (k x n): close to float64 numpy
    and to the scalar path, 1 and 2 threads bitwise equal."""
    a = rng.standard_normal((m, k)).astype(np.float32)
    b = rng.standard_normal((k, n)).astype(np.float32)
    out, scalar = run_all_ways(tmp_path, matmul_module((m, k), (k, n), (m, n)), [a, b])
    ref = np.maximum(a.astype(np.float64) @ b.astype(np.float64), 0)
    np.testing.assert_allclose(out, ref, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(out, scalar, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("seed", range(4))
def test_matmul_random_shapes(tmp_path, seed):
    rng = np.random.default_rng(seed)
    m = int(rng.choice([4, 8, 24, 64, 136]))
    n = int(rng.choice([16, 32, 96, 160]))
    k = int(rng.choice([1, 7, 64, 384]))
    check_matmul(tmp_path, rng, m, k, n)


@pytest.mark.parametrize("m,k,n", [(256, 64, 784), (48, 7, 48), (32, 33, 80)])
def test_matmul_narrow_n_tall_tiles(tmp_path, m, k, n):
    # N a multiple of 16 but not of 32: 16x16 register tiles on AVX-512
    # (8x16 before), column blocks of the widest multiple of 16 that divides
    # N; AVX2 machines keep 4x16.
    check_matmul(tmp_path, np.random.default_rng(m + k + n), m, k, n)


@pytest.mark.parametrize("seed", range(2))
def test_batch_matmul_random_shapes(tmp_path, seed):
    rng = np.random.default_rng(100 + seed)
    batch = int(rng.choice([1, 3]))
    m, n, k = (int(rng.choice(c)) for c in ([8, 40], [32, 48], [5, 96]))
    a = rng.standard_normal((batch, m, k)).astype(np.float32)
    b = rng.standard_normal((batch, k, n)).astype(np.float32)
    text = matmul_module((batch, m, k), (batch, k, n), (batch, m, n))
    out, scalar = run_all_ways(tmp_path, text, [a, b])
    ref = np.maximum(np.matmul(a.astype(np.float64), b.astype(np.float64)), 0)
    np.testing.assert_allclose(out, ref, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(out, scalar, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("shape", [(16,), (3, 40), (2, 5, 64), (130, 96)])
def test_elementwise_broadcast(tmp_path, shape):
    rng = np.random.default_rng(len(shape))
    x = rng.standard_normal(shape).astype(np.float32)
    bias = rng.standard_normal(shape[-1:]).astype(np.float32)
    tx, tb = tensor_type(shape, np.float32), tensor_type(shape[-1:], np.float32)
    text = f"""func.func @main(%x: {tx}, %b: {tb}) -> {tx} {{
  %0 = "paddle.add"(%x, %b) : ({tx}, {tb}) -> {tx}
  %1 = paddle.tanh %0 : {tx} -> {tx}
  %2 = paddle.mul %1, %x : {tx}, {tx} -> {tx}
  return %2 : {tx}
}}"""
    out, scalar = run_all_ways(tmp_path, text, [x, bias])
    np.testing.assert_allclose(out, np.tanh(x + bias) * x, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(out, scalar, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("shape,perm", [
    ((128, 12, 64), (1, 0, 2)),           # BERT's head split
    ((1, 128, 1, 3, 48), (3, 1, 2, 0, 4)),  # the q/k/v split, rows of 48
    ((2, 3, 5, 24), (2, 0, 1, 3)),        # rows of 24: 8-lane vectors
])
def test_transpose_keeping_rows(tmp_path, shape, perm):
    """A transpose that keeps the innermost dim copies whole rows: it is
    vectorized as an elementwise copy with its outer dims permuted. The
    copy must equal numpy's exactly, on 1 and 2 threads and scalar."""
    x = np.random.default_rng(len(shape)).standard_normal(shape).astype(np.float32)
    out_shape = tuple(shape[p] for p in perm)
    tx, to = tensor_type(shape, np.float32), tensor_type(out_shape, np.float32)
    text = f"""func.func @main(%x: {tx}) -> {to} {{
  %0 = paddle.transpose %x perm = [{", ".join(map(str, perm))}] : {tx} -> {to}
  return %0 : {to}
}}"""
    out, scalar = run_all_ways(tmp_path, text, [x])
    np.testing.assert_array_equal(out, x.transpose(perm))
    np.testing.assert_array_equal(scalar, x.transpose(perm))
