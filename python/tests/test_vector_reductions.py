"""Vectorized row reductions (paddle-tile-and-vectorize, docs/fusion.md,
"Vectorized reductions"): softmax, log_softmax, layer_norm and reductions over
the last axis, through paddle-run on 1 and 2 threads, compared with float64
numpy.

Row lengths cover multiples of the vector width (128, 768), lengths that only
a narrower vector divides (100 = 25 x 4), lengths no vector divides (7, 1:
scalar loops), and dynamic shapes (scalar loops). The vector code adds a row
in a different order than the scalar loop (lanewise partial sums, then a
tree), so the tolerances allow for f32 reassociation: rtol 1e-5, atol 1e-5 for
the normalised outputs (values of order 1), and for sums rtol 1e-5 with an
atol of 1e-6 * sqrt(row length) * max |x| (the rounding error of an f32 sum
grows with the row length).

test_reductions_are_vectorized checks the IR, so the numerics tests above
exercise the vector code rather than the scalar loops."""

import subprocess

import numpy as np
import pytest

from paddle_testing import PADDLE_OPT, run_module

RTOL = 1e-5
ATOL = 1e-5

rng = np.random.default_rng(7)


def rand(*shape, scale=1.0):
    return (rng.standard_normal(shape) * scale).astype(np.float32)


def softmax(x):
    x = x.astype(np.float64)
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def log_softmax(x):
    x = x.astype(np.float64)
    s = x - x.max(axis=-1, keepdims=True)
    return s - np.log(np.exp(s).sum(axis=-1, keepdims=True))


def layer_norm(x, g, b, eps=1e-5):
    x = x.astype(np.float64)
    m = x.mean(axis=-1, keepdims=True)
    v = ((x - m) ** 2).mean(axis=-1, keepdims=True)
    return (x - m) / np.sqrt(v + eps) * g + b


def ty(shape):
    return "tensor<" + "".join(f"{d}x" for d in shape) + "f32>"


def softmax_module(op, shape):
    t = ty(shape)
    return f"""
func.func @main(%x: {t}) -> {t} {{
  %p = paddle.{op} %x axis = -1 : {t} -> {t}
  return %p : {t}
}}"""


def layer_norm_module(shape):
    t, v = ty(shape), ty(shape[-1:])
    return f"""
func.func @main(%x: {t}, %g: {v}, %b: {v}) -> {t} {{
  %y = paddle.layer_norm %x scale %g bias %b axes = [-1] : {t}, {v}, {v} -> {t}
  return %y : {t}
}}"""


def reduce_module(op, shape):
    t, r = ty(shape), ty(shape[:-1])
    return f"""
func.func @main(%x: {t}) -> {r} {{
  %y = paddle.{op} %x axes = [-1] : {t} -> {r}
  return %y : {r}
}}"""


# A fused group (attention's scale and mask around softmax; a residual add
# before layer_norm): the reductions sit inside paddle-lower-fusion's tile
# loop.
def scaled_softmax_module(shape):
    t, m = ty(shape), ty(shape[-2:])
    return f"""
func.func @main(%x: {t}, %mask: {m}) -> {t} {{
  %c = paddle.constant dense<0.125> : tensor<f32>
  %s = paddle.mul %x, %c : {t}, tensor<f32> -> {t}
  %a = paddle.add %s, %mask : {t}, {m} -> {t}
  %p = paddle.softmax %a axis = -1 : {t} -> {t}
  return %p : {t}
}}"""


def residual_layer_norm_module(shape):
    t, v = ty(shape), ty(shape[-1:])
    return f"""
func.func @main(%x: {t}, %r: {t}, %g: {v}, %b: {v}) -> {t} {{
  %a = paddle.add %x, %r : {t}, {t} -> {t}
  %y = paddle.layer_norm %a scale %g bias %b axes = [-1] : {t}, {v}, {v} -> {t}
  return %y : {t}
}}"""


ROWS = [128, 100, 7, 1]


def sum_atol(x):
    return 1e-6 * np.sqrt(x.shape[-1]) * max(1.0, float(np.abs(x).max()))


def cases():
    for k in ROWS:
        yield f"softmax-{k}", softmax_module("softmax", (24, k)), \
            lambda k=k: [rand(24, k, scale=3)], softmax, None
        yield f"log_softmax-{k}", softmax_module("log_softmax", (24, k)), \
            lambda k=k: [rand(24, k, scale=3)], log_softmax, None
        yield f"layer_norm-{k}", layer_norm_module((24, k)), \
            lambda k=k: [rand(24, k), rand(k), rand(k)], layer_norm, None
        for op, ref in [("reduce_sum", lambda x: x.astype(np.float64).sum(-1)),
                        ("reduce_mean", lambda x: x.astype(np.float64).mean(-1)),
                        ("reduce_max", lambda x: x.max(-1))]:
            yield f"{op}-{k}", reduce_module(op, (24, k)), \
                lambda k=k: [rand(24, k)], ref, sum_atol
    yield "softmax-3d-768", softmax_module("softmax", (2, 16, 768)), \
        lambda: [rand(2, 16, 768, scale=3)], softmax, None
    # Attention's softmax over heads: a multi-dim row loop, which the async
    # lowering once split into blocks that ran rows twice (the sums doubled
    # on 1 thread; paddle-async-parallel-for, upstream's block rounding).
    yield "softmax-4d-heads", softmax_module("softmax", (1, 12, 128, 128)), \
        lambda: [rand(1, 12, 128, 128, scale=3)], softmax, None
    yield "reduce_sum-3d-rows", reduce_module("reduce_sum", (12, 64, 128)), \
        lambda: [rand(12, 64, 128)], lambda x: x.astype(np.float64).sum(-1), \
        sum_atol
    yield "layer_norm-3072", layer_norm_module((8, 3072)), \
        lambda: [rand(8, 3072), rand(3072), rand(3072)], layer_norm, None
    yield "reduce_sum-3072", reduce_module("reduce_sum", (8, 3072)), \
        lambda: [rand(8, 3072)], lambda x: x.astype(np.float64).sum(-1), \
        sum_atol
    # A whole tensor reduced: no row loop, one accumulator.
    yield "reduce_sum-1d-4096", reduce_module("reduce_sum", (4096,)), \
        lambda: [rand(4096)], lambda x: x.astype(np.float64).sum(-1), sum_atol
    yield "fused-scaled-softmax", scaled_softmax_module((4, 64, 128)), \
        lambda: [rand(4, 64, 128, scale=4), rand(64, 128)], \
        lambda x, m: softmax(x.astype(np.float64) * 0.125 + m), None
    yield "fused-residual-layer_norm", residual_layer_norm_module((64, 768)), \
        lambda: [rand(64, 768), rand(64, 768), rand(768), rand(768)], \
        lambda x, r, g, b: layer_norm(x.astype(np.float64) + r, g, b), None
    # Dynamic shapes keep the scalar loops; still checked.
    yield "softmax-dynamic", softmax_module("softmax", ("?", "?")), \
        lambda: [rand(9, 130, scale=3)], softmax, None
    yield "reduce_sum-dynamic", reduce_module("reduce_sum", ("?", "?")), \
        lambda: [rand(9, 130)], lambda x: x.astype(np.float64).sum(-1), \
        sum_atol


CASES = {name: rest for name, *rest in cases()}


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("name", sorted(CASES))
def test_row_reduction_matches_numpy(tmp_path, name, threads):
    text, make_inputs, reference, atol = CASES[name]
    inputs = make_inputs()
    (result,) = run_module(tmp_path, text, inputs,
                           extra_args=["--threads", str(threads)])
    expected = reference(*inputs)
    assert result.dtype == np.float32
    assert result.shape == expected.shape
    np.testing.assert_allclose(
        result, expected, rtol=RTOL,
        atol=atol(inputs[0]) if atol else ATOL)


def lowered_ir(tmp_path, text):
    """The IR right after paddle-tile-and-vectorize in the CPU pipeline."""
    path = tmp_path / "in.mlir"
    path.write_text(text)
    proc = subprocess.run(
        [str(PADDLE_OPT), str(path), "--paddle-cpu-pipeline",
         "--mlir-print-ir-after=paddle-tile-and-vectorize", "-o", str(tmp_path / "out.mlir")],
        capture_output=True, text=True, check=True)
    return proc.stderr


@pytest.mark.parametrize("text", [
    softmax_module("softmax", (1536, 128)),
    layer_norm_module((128, 3072)),
    reduce_module("reduce_sum", (64, 100)),
    scaled_softmax_module((4, 64, 128)),
], ids=["softmax", "layer_norm", "reduce_sum-100", "fused-softmax"])
def test_reductions_are_vectorized(tmp_path, text):
    ir = lowered_ir(tmp_path, text)
    main = ir[ir.index("func.func @main"):]
    # The row's horizontal step, and no scalar reduction generic left.
    assert "vector.reduction" in main
    assert '"reduction"' not in main


def test_unaligned_rows_stay_scalar(tmp_path):
    ir = lowered_ir(tmp_path, reduce_module("reduce_sum", (64, 7)))
    main = ir[ir.index("func.func @main"):]
    assert "vector.reduction" not in main
    assert '"reduction"' in main
