"""Reduction paddle ops run through paddle-run, checked against numpy.

Tolerances: f32 sums, products and means within rtol 1e-5 (atol 1e-6), as
the summation order differs from numpy's pairwise sums; f64 within 1e-12;
f16 accumulates in f32 and is rounded once, so it matches the f32 result
rounded to f16 within rtol 1e-3. max, min and argmax are exact, and so are
integer sums and products, which wrap in the element type as numpy's
`sum(x, dtype=x.dtype)`.
"""

import numpy as np
import pytest
from paddle_testing import (RUNTIME_CHECK_ERROR, PaddleRunError, run_op,
                            tensor_type)

# (shape, axes (None: all), dims of x made dynamic)
CASES = [
    ((), None, ()),
    ((5,), None, ()),
    ((5,), (0,), (0,)),
    ((3, 4), (1,), ()),
    ((3, 4), (0,), (0, 1)),
    ((3, 4), (), (1,)),
    ((2, 3, 4), (0, 2), (1,)),
    ((2, 3, 4), (-1,), (0, 2)),
    ((2, 3, 4), None, (0, 1, 2)),
    ((2, 3, 4, 5), (1, -1), (0,)),
    ((3, 1, 4), (1,), ()),
]

NP_REDUCE = {
    "reduce_sum": lambda x, **kw: np.sum(x, dtype=x.dtype, **kw),
    "reduce_prod": lambda x, **kw: np.prod(x, dtype=x.dtype, **kw),
    "reduce_max": np.max,
    "reduce_min": np.min,
    "reduce_mean": np.mean,
}


def normalized(axes, rank):
    if axes is None:
        return tuple(range(rank))
    return tuple(sorted(a % rank for a in axes))


def result_type(shape, axes, dynamic, keepdims, elt):
    dims = []
    for i, d in enumerate(shape):
        if i in axes:
            if keepdims:
                dims.append("1")
        else:
            dims.append("?" if i in dynamic else str(d))
    return "tensor<" + "".join(d + "x" for d in dims) + elt + ">"


def run_reduce(tmp_path, op, x, axes, dynamic=(), keepdims=False, elt=None,
               allow_empty=False):
    elt = elt or tensor_type((), x.dtype)[len("tensor<"):-1]
    tx = tensor_type(x.shape, elt, dynamic)
    tr = result_type(x.shape, normalized(axes, x.ndim), dynamic, keepdims, elt)
    attrs = ""
    if axes is not None:
        attrs += " axes = [" + ", ".join(str(a) for a in axes) + "]"
    if keepdims:
        attrs += " keepdims"
    if allow_empty:
        attrs += " allow_empty"
    body = f"  %0 = paddle.{op} %arg0{attrs} : {tx} -> {tr}\n  return %0 : {tr}"
    (r,) = run_op(tmp_path, body, [x], [tr], [tx])
    return r


def expected(op, x, axes, keepdims):
    kw = {"keepdims": keepdims}
    if axes is not None:
        kw["axis"] = tuple(axes)
    return np.asarray(NP_REDUCE[op](x, **kw))


@pytest.mark.parametrize("keepdims", [False, True])
@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("op", sorted(NP_REDUCE))
def test_reduce_f32(tmp_path, rng, op, case, keepdims):
    shape, axes, dynamic = case
    # Products of many elements stay near 1 so they neither over- nor
    # underflow; the others see values of both signs.
    low, high = (0.5, 1.5) if op == "reduce_prod" else (-4.0, 4.0)
    x = rng.uniform(low, high, size=shape).astype(np.float32)
    r = run_reduce(tmp_path, op, x, axes, dynamic, keepdims)
    want = expected(op, x, axes, keepdims)
    assert r.shape == want.shape and r.dtype == np.float32
    if op in ("reduce_max", "reduce_min"):
        np.testing.assert_array_equal(r, want)
    else:
        np.testing.assert_allclose(r, want, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("keepdims", [False, True])
@pytest.mark.parametrize("dtype", [np.int8, np.int32, np.int64])
@pytest.mark.parametrize("op", ["reduce_sum", "reduce_prod", "reduce_max", "reduce_min"])
def test_reduce_ints_exact(tmp_path, rng, op, dtype, keepdims):
    # int8 sums and products of these ranges overflow, which must wrap.
    x = rng.integers(-100, 100, size=(3, 6, 4)).astype(dtype)
    for axes, dynamic in [((1,), (0, 1)), (None, (2,)), ((0, -1), ())]:
        r = run_reduce(tmp_path, op, x, axes, dynamic, keepdims)
        want = expected(op, x, axes, keepdims)
        assert r.dtype == dtype
        np.testing.assert_array_equal(r, want)


def test_int_sum_wraps(tmp_path):
    x = np.full((4, 3), 100, dtype=np.int8)
    r = run_reduce(tmp_path, "reduce_sum", x, (0,))
    np.testing.assert_array_equal(r, np.array([-112, -112, -112], np.int8))


@pytest.mark.parametrize("op", ["reduce_sum", "reduce_mean", "reduce_prod"])
def test_reduce_f64(tmp_path, rng, op):
    x = rng.uniform(0.5, 1.5, size=(4, 7, 3))
    r = run_reduce(tmp_path, op, x, (0, 2), dynamic=(1,))
    np.testing.assert_allclose(r, expected(op, x, (0, 2), False), rtol=1e-12)


@pytest.mark.parametrize("op", ["reduce_sum", "reduce_mean", "reduce_max"])
def test_reduce_f16_accumulates_in_f32(tmp_path, rng, op):
    # 3000 ones: an f16 accumulator would stop at 2048.
    x = np.concatenate([np.ones((2, 3000)), rng.uniform(-1, 1, size=(2, 50))],
                       axis=1).astype(np.float16)
    r = run_reduce(tmp_path, op, x, (1,), dynamic=(1,))
    want = expected(op, x.astype(np.float32), (1,), False).astype(np.float16)
    assert r.dtype == np.float16
    np.testing.assert_allclose(r.astype(np.float32), want.astype(np.float32),
                               rtol=1e-3)


@pytest.mark.parametrize("op", ["reduce_max", "reduce_min", "reduce_sum"])
def test_nan_propagates(tmp_path, rng, op):
    x = rng.uniform(-4, 4, size=(4, 5)).astype(np.float32)
    x[1, 3] = np.nan
    x[2, 0] = np.nan
    r = run_reduce(tmp_path, op, x, (1,), dynamic=(0,))
    want = expected(op, x, (1,), False)
    np.testing.assert_array_equal(np.isnan(r), np.isnan(want))
    ok = ~np.isnan(want)
    np.testing.assert_allclose(r[ok], want[ok], rtol=1e-5)


def test_max_min_infinities(tmp_path):
    x = np.array([[-np.inf, -np.inf], [np.inf, 1.0]], np.float32)
    np.testing.assert_array_equal(run_reduce(tmp_path, "reduce_max", x, (1,)),
                                  [-np.inf, np.inf])
    np.testing.assert_array_equal(run_reduce(tmp_path, "reduce_min", x, (1,)),
                                  [-np.inf, 1.0])


# argmax: (shape, axis, dynamic dims)
ARGMAX_CASES = [
    ((7,), 0, ()),
    ((7,), -1, (0,)),
    ((4, 6), 1, (0,)),
    ((4, 6), 0, (0, 1)),
    ((3, 5, 2), 1, (1,)),
    ((3, 5, 2), -1, ()),
]


def run_argmax(tmp_path, x, axis, dynamic=(), keepdims=False):
    tx = tensor_type(x.shape, x.dtype, dynamic)
    tr = result_type(x.shape, (axis % x.ndim,), dynamic, keepdims, "i64")
    kd = " keepdims" if keepdims else ""
    body = (f"  %0 = paddle.argmax %arg0 axis = {axis}{kd} : {tx} -> {tr}\n"
            f"  return %0 : {tr}")
    (r,) = run_op(tmp_path, body, [x], [tr], [tx])
    return r


@pytest.mark.parametrize("keepdims", [False, True])
@pytest.mark.parametrize("case", ARGMAX_CASES)
@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.int8, np.float64])
def test_argmax(tmp_path, rng, dtype, case, keepdims):
    shape, axis, dynamic = case
    # Few distinct values, so ties are common: the first occurrence wins.
    x = rng.integers(-3, 4, size=shape).astype(dtype)
    r = run_argmax(tmp_path, x, axis, dynamic, keepdims)
    want = np.argmax(x, axis=axis, keepdims=keepdims)
    assert r.dtype == np.int64
    np.testing.assert_array_equal(r, want)


def test_argmax_nan_and_infinities(tmp_path):
    nan, inf = np.nan, np.inf
    x = np.array([
        [1.0, nan, 5.0, nan],    # the first NaN wins
        [-inf, -inf, -inf, -inf],  # all equal: index 0
        [2.0, inf, 3.0, inf],    # the first +inf
        [nan, 7.0, 7.0, 1.0],    # NaN at 0
        [-1.0, -2.0, 4.0, 4.0],  # tie at the max
    ], np.float32)
    r = run_argmax(tmp_path, x, 1, dynamic=(0,))
    np.testing.assert_array_equal(r, np.argmax(x, axis=1))
    np.testing.assert_array_equal(r, [1, 0, 1, 0, 2])


def test_argmax_int_extremes(tmp_path):
    x = np.array([[-128, -128, -128], [5, 127, 127]], np.int8)
    np.testing.assert_array_equal(run_argmax(tmp_path, x, 1), [0, 1])


@pytest.mark.parametrize("op,value", [("reduce_sum", 0.0), ("reduce_prod", 1.0),
                                      ("reduce_mean", np.nan)])
def test_reduce_empty_dim(tmp_path, op, value):
    # The neutral value, as numpy (whose mean of nothing is NaN too).
    x = np.zeros((0, 3), np.float32)
    r = run_reduce(tmp_path, op, x, (0,), dynamic=(0,))
    np.testing.assert_array_equal(r, np.full(3, value, np.float32))


@pytest.mark.parametrize("op,value", [("reduce_max", -np.inf),
                                      ("reduce_min", np.inf)])
def test_reduce_empty_dim_allowed(tmp_path, op, value):
    # allow_empty: the neutral value, as ONNX's ReduceMax / ReduceMin.
    x = np.zeros((0, 3), np.float32)
    r = run_reduce(tmp_path, op, x, (0,), dynamic=(0,), allow_empty=True)
    np.testing.assert_array_equal(r, np.full(3, value, np.float32))


@pytest.mark.parametrize("op,what", [("reduce_max", "maximum"),
                                     ("reduce_min", "minimum")])
@pytest.mark.parametrize("dtype", [np.float32, np.int32])
def test_reduce_empty_dim_fails(tmp_path, op, what, dtype):
    # No identity: numpy raises, and so does the compiled code.
    x = np.zeros((0, 3), dtype)
    with pytest.raises(ValueError):
        getattr(np, op[len("reduce_"):])(x, axis=0)
    with pytest.raises(PaddleRunError, match=RUNTIME_CHECK_ERROR +
                       rf"paddle\.{op}: reduces dim 0 of size 0, which has no {what}"):
        run_reduce(tmp_path, op, x, (0,), dynamic=(0,))
    # A non-empty dim of the same empty tensor reduces fine.
    r = run_reduce(tmp_path, op, x, (1,), dynamic=(0,))
    assert r.shape == (0,)


def test_argmax_empty_dim_fails(tmp_path):
    x = np.zeros((3, 0), np.int32)
    with pytest.raises(ValueError):
        np.argmax(x, axis=1)
    with pytest.raises(PaddleRunError, match=RUNTIME_CHECK_ERROR +
                       r"paddle\.argmax: reduces dim 1 of size 0"):
        run_argmax(tmp_path, x, 1, dynamic=(1,))
    np.testing.assert_array_equal(run_argmax(tmp_path, x, 0, dynamic=(1,)),
                                  np.argmax(x, axis=0))
