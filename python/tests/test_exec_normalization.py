"""softmax, log_softmax, layer_norm and batch_norm_inference run through
paddle-run, checked against the numpy formulas.

Tolerances: f32 within rtol 1e-5, atol 1e-6 of the formula evaluated in
f64 (the stable form, x minus its max, for softmax); f64 within 1e-12; f16
computes in f32 and is rounded once, so it matches the f32 result rounded
to f16 within rtol 2e-3, atol 2e-3 (about 2 f16 ulp).
"""

import numpy as np
import pytest
from paddle_testing import run_op, tensor_type

F32_TOL = dict(rtol=1e-5, atol=1e-6)


def np_softmax(x, axis):
    x = x.astype(np.float64)
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def np_log_softmax(x, axis):
    x = x.astype(np.float64)
    s = x - x.max(axis=axis, keepdims=True)
    return s - np.log(np.exp(s).sum(axis=axis, keepdims=True))


def np_layer_norm(x, axes, scale, bias, eps):
    x = x.astype(np.float64)
    mean = x.mean(axis=axes, keepdims=True)
    var = x.var(axis=axes, keepdims=True)  # biased, as the op
    y = (x - mean) / np.sqrt(var + eps)
    if scale is not None:
        y = y * scale
    if bias is not None:
        y = y + bias
    return y


def np_batch_norm(x, scale, bias, mean, var, eps):
    shape = (1, -1) + (1,) * (x.ndim - 2)
    p = [a.astype(np.float64).reshape(shape) for a in (scale, bias, mean, var)]
    return (x.astype(np.float64) - p[2]) / np.sqrt(p[3] + eps) * p[0] + p[1]


# (shape, axis, dynamic dims)
SOFTMAX_CASES = [
    ((7,), 0, ()),
    ((7,), -1, (0,)),
    ((4, 10), 1, (0,)),
    ((4, 10), 0, (0, 1)),
    ((3, 5, 6), -1, (1,)),
    ((3, 5, 6), 1, ()),
    ((2, 1, 3), 1, (0, 2)),
]


def run_unary(tmp_path, op, x, attrs, dynamic):
    t = tensor_type(x.shape, x.dtype, dynamic)
    body = f"  %0 = paddle.{op} %arg0 {attrs} : {t} -> {t}\n  return %0 : {t}"
    (r,) = run_op(tmp_path, body, [x], [t], [t])
    return r


@pytest.mark.parametrize("case", SOFTMAX_CASES)
@pytest.mark.parametrize("op", ["softmax", "log_softmax"])
def test_softmax_f32(tmp_path, rng, op, case):
    shape, axis, dynamic = case
    x = rng.uniform(-5, 5, size=shape).astype(np.float32)
    r = run_unary(tmp_path, op, x, f"axis = {axis}", dynamic)
    ref = np_softmax if op == "softmax" else np_log_softmax
    assert r.dtype == np.float32
    np.testing.assert_allclose(r, ref(x, axis), **F32_TOL)


@pytest.mark.parametrize("op", ["softmax", "log_softmax"])
def test_softmax_large_values_stable(tmp_path, rng, op):
    # exp(1000) overflows: only the max-subtracted form gives finite values.
    x = (rng.uniform(-5, 5, size=(3, 8)) + 1000).astype(np.float32)
    x[1] -= 2000
    r = run_unary(tmp_path, op, x, "axis = 1", (0,))
    ref = np_softmax if op == "softmax" else np_log_softmax
    assert np.isfinite(r).all()
    np.testing.assert_allclose(r, ref(x, 1), **F32_TOL)


@pytest.mark.parametrize("op", ["softmax", "log_softmax"])
def test_softmax_f64(tmp_path, rng, op):
    x = rng.uniform(-5, 5, size=(4, 9))
    r = run_unary(tmp_path, op, x, "axis = -1", (1,))
    ref = np_softmax if op == "softmax" else np_log_softmax
    np.testing.assert_allclose(r, ref(x, -1), rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("op", ["softmax", "log_softmax"])
def test_softmax_f16(tmp_path, rng, op):
    x = rng.uniform(-5, 5, size=(4, 9)).astype(np.float16)
    r = run_unary(tmp_path, op, x, "axis = 1", (0,))
    ref = np_softmax if op == "softmax" else np_log_softmax
    assert r.dtype == np.float16
    want = ref(x.astype(np.float32), 1).astype(np.float16)
    np.testing.assert_allclose(r.astype(np.float32), want.astype(np.float32),
                               rtol=2e-3, atol=2e-3)


# (x shape, axes, scale shape or None, bias shape or None, dynamic dims of x)
LAYER_NORM_CASES = [
    ((4, 16), (-1,), (16,), (16,), ()),
    ((4, 16), (1,), (16,), (16,), (0,)),
    ((4, 16), (1,), None, None, (0, 1)),
    ((2, 3, 8), (1, 2), (3, 8), (8,), (0,)),
    ((2, 3, 8), (2,), (1, 8), None, (0, 1, 2)),
    ((2, 3, 8), (0, 2), None, (3, 1), (1,)),
    ((5, 6), (0, 1), (5, 6), (1,), ()),
]


@pytest.mark.parametrize("eps", [1e-5, 1e-2])
@pytest.mark.parametrize("case", LAYER_NORM_CASES)
def test_layer_norm_f32(tmp_path, rng, case, eps):
    shape, axes, scale_shape, bias_shape, dynamic = case
    x = rng.uniform(-3, 3, size=shape).astype(np.float32)
    inputs, types, clauses = [x], [tensor_type(shape, np.float32, dynamic)], ""
    scale = bias = None
    if scale_shape is not None:
        scale = rng.uniform(0.5, 2, size=scale_shape).astype(np.float32)
        clauses += f" scale %arg{len(inputs)}"
        inputs.append(scale)
        types.append(tensor_type(scale_shape, np.float32))
    if bias_shape is not None:
        bias = rng.uniform(-1, 1, size=bias_shape).astype(np.float32)
        clauses += f" bias %arg{len(inputs)}"
        inputs.append(bias)
        types.append(tensor_type(bias_shape, np.float32))
    tx = types[0]
    axes_text = ", ".join(str(a) for a in axes)
    body = (f"  %0 = paddle.layer_norm %arg0{clauses} axes = [{axes_text}] "
            f"{{epsilon = {eps:.6e} : f64}} : {', '.join(types)} -> {tx}\n"
            f"  return %0 : {tx}")
    (r,) = run_op(tmp_path, body, inputs, [tx], types)
    np.testing.assert_allclose(r, np_layer_norm(x, axes, scale, bias, eps),
                               **F32_TOL)


def test_layer_norm_default_epsilon_and_constant_rows(tmp_path, rng):
    # A constant row has variance 0: the result is 0, set by epsilon alone.
    x = rng.uniform(-3, 3, size=(3, 6)).astype(np.float32)
    x[1] = 2.5
    t = tensor_type(x.shape, np.float32, (0,))
    body = (f"  %0 = paddle.layer_norm %arg0 axes = [1] : {t} -> {t}\n"
            f"  return %0 : {t}")
    (r,) = run_op(tmp_path, body, [x], [t], [t])
    np.testing.assert_allclose(r, np_layer_norm(x, (1,), None, None, 1e-5),
                               **F32_TOL)
    np.testing.assert_array_equal(r[1], np.zeros(6, np.float32))


def test_layer_norm_f16(tmp_path, rng):
    x = rng.uniform(-3, 3, size=(4, 32)).astype(np.float16)
    g = rng.uniform(0.5, 2, size=(32,)).astype(np.float16)
    tx, tg = tensor_type(x.shape, np.float16, (0,)), tensor_type(g.shape, np.float16)
    body = (f"  %0 = paddle.layer_norm %arg0 scale %arg1 axes = [-1] : {tx}, {tg} -> {tx}\n"
            f"  return %0 : {tx}")
    (r,) = run_op(tmp_path, body, [x, g], [tx], [tx, tg])
    assert r.dtype == np.float16
    want = np_layer_norm(x.astype(np.float32), (1,), g.astype(np.float32), None,
                         1e-5).astype(np.float16)
    np.testing.assert_allclose(r.astype(np.float32), want.astype(np.float32),
                               rtol=2e-3, atol=2e-3)


# (x shape, dynamic dims of x, whether the parameters have a dynamic size)
BATCH_NORM_CASES = [
    ((2, 3), (), False),
    ((4, 3, 5), (0,), False),
    ((2, 4, 3, 3), (0, 2, 3), True),
    ((1, 2, 5), (0, 1, 2), True),
    ((3, 1, 4), (1,), False),
]


@pytest.mark.parametrize("eps", [1e-5, 1e-3])
@pytest.mark.parametrize("case", BATCH_NORM_CASES)
def test_batch_norm_inference_f32(tmp_path, rng, case, eps):
    shape, dynamic, dynamic_params = case
    c = shape[1]
    x = rng.uniform(-3, 3, size=shape).astype(np.float32)
    scale = rng.uniform(0.5, 2, size=c).astype(np.float32)
    bias = rng.uniform(-1, 1, size=c).astype(np.float32)
    mean = rng.uniform(-1, 1, size=c).astype(np.float32)
    var = rng.uniform(0.1, 3, size=c).astype(np.float32)
    tx = tensor_type(shape, np.float32, dynamic)
    tp = tensor_type((c,), np.float32, (0,) if dynamic_params else ())
    body = (f"  %0 = paddle.batch_norm_inference %arg0, %arg1, %arg2, %arg3, %arg4 "
            f"{{epsilon = {eps:.6e} : f64}} : {tx}, {tp}, {tp}, {tp}, {tp} -> {tx}\n"
            f"  return %0 : {tx}")
    (r,) = run_op(tmp_path, body, [x, scale, bias, mean, var], [tx],
                  [tx, tp, tp, tp, tp])
    np.testing.assert_allclose(r, np_batch_norm(x, scale, bias, mean, var, eps),
                               **F32_TOL)


def test_batch_norm_inference_f64(tmp_path, rng):
    x = rng.uniform(-3, 3, size=(2, 3, 4))
    p = [rng.uniform(0.5, 2, size=3) for _ in range(4)]
    tx, tp = tensor_type(x.shape, np.float64, (0, 2)), tensor_type((3,), np.float64)
    body = (f"  %0 = paddle.batch_norm_inference %arg0, %arg1, %arg2, %arg3, %arg4 "
            f": {tx}, {tp}, {tp}, {tp}, {tp} -> {tx}\n  return %0 : {tx}")
    (r,) = run_op(tmp_path, body, [x] + p, [tx], [tx] + [tp] * 4)
    np.testing.assert_allclose(r, np_batch_norm(x, *p, 1e-5), rtol=1e-12)
