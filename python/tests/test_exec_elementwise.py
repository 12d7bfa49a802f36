"""Elementwise paddle ops run through paddle-run, checked against numpy.

Tolerances: arithmetic, comparisons, selects, casts and rounding are
bit-exact (assert_array_equal); transcendental f32 functions are within
2 ulp-ish (rtol 2e-6, atol 1e-6) since libm and numpy's SIMD kernels may
round differently; f64 within 1e-12.
"""

import numpy as np
import pytest
import math
from paddle_testing import run_op, tensor_type

np_erf = np.vectorize(math.erf, otypes=[np.float64])

# Broadcasting cases: (lhs shape, rhs shape, dims of lhs/rhs made dynamic).
BROADCAST_CASES = [
    ((5,), (5,), (), ()),
    ((3, 4), (4,), (), ()),
    ((3, 1), (1, 4), (), ()),
    ((2, 3, 4), (3, 1), (), ()),
    ((4, 3), (3,), (1,), (0,)),  # the tensor<4x?> + tensor<?>
    ((6, 5), (6, 5), (0, 1), (0,)),
    ((2, 1, 3), (4, 1), (0,), ()),
    ((), (3,), (), ()),
]


def result_shape(a, b):
    return np.broadcast_shapes(a, b)


def binary_types(sa, sb, da, db, dtype):
    out = result_shape(sa, sb)
    ra, rb = len(sa), len(sb)
    rank = len(out)
    # A result dim is dynamic when the inference makes it so.
    dyn_out = set()
    for i in range(rank):
        ia, ib = i - (rank - ra), i - (rank - rb)
        a_dyn = ia >= 0 and ia in da
        b_dyn = ib >= 0 and ib in db
        a_static = sa[ia] if ia >= 0 and not a_dyn else 1
        b_static = sb[ib] if ib >= 0 and not b_dyn else 1
        if (a_dyn or b_dyn) and not (
            (a_static != 1 and not a_dyn) or (b_static != 1 and not b_dyn)
        ):
            dyn_out.add(i)
    return (
        tensor_type(sa, dtype, da),
        tensor_type(sb, dtype, db),
        tensor_type(out, dtype, dyn_out),
    )


def random_array(rng, shape, dtype, low=-4.0, high=4.0):
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return rng.integers(0, 2, size=shape).astype(np.bool_)
    if dtype.kind == "i":
        info = np.iinfo(dtype)
        lo, hi = max(int(low) * 4, info.min), min(int(high) * 4, info.max)
        return rng.integers(lo, hi + 1, size=shape).astype(dtype)
    return rng.uniform(low, high, size=shape).astype(dtype)


def run_binary(tmp_path, op, a, b, da=(), db=(), out_elt=None):
    ta, tb, tr = binary_types(a.shape, b.shape, da, db, a.dtype)
    if out_elt:
        tr = tr.rsplit("x", 1)[0] + "x" + out_elt + ">" if "x" in tr else f"tensor<{out_elt}>"
    body = f"  %0 = paddle.{op} %arg0, %arg1 : {ta}, {tb} -> {tr}\n  return %0 : {tr}"
    (r,) = run_op(tmp_path, body, [a, b], [tr], [ta, tb])
    return r


EXACT_BINARY = {
    "add": np.add,
    "sub": np.subtract,
    "mul": np.multiply,
    "maximum": np.maximum,
    "minimum": np.minimum,
}


@pytest.mark.parametrize("case", BROADCAST_CASES)
@pytest.mark.parametrize("op", sorted(EXACT_BINARY))
def test_arith_broadcast_f32(tmp_path, rng, op, case):
    sa, sb, da, db = case
    a, b = random_array(rng, sa, np.float32), random_array(rng, sb, np.float32)
    np.testing.assert_array_equal(run_binary(tmp_path, op, a, b, da, db),
                                  EXACT_BINARY[op](a, b))


@pytest.mark.parametrize("dtype", [np.int8, np.int32, np.int64, np.float64])
@pytest.mark.parametrize("op", sorted(EXACT_BINARY))
def test_arith_dtypes(tmp_path, rng, op, dtype):
    a, b = random_array(rng, (3, 5), dtype), random_array(rng, (5,), dtype)
    np.testing.assert_array_equal(run_binary(tmp_path, op, a, b),
                                  EXACT_BINARY[op](a, b))


def test_float_div_and_pow(tmp_path, rng):
    a = random_array(rng, (4, 6), np.float32)
    b = random_array(rng, (6,), np.float32, 0.5, 3.0)
    np.testing.assert_array_equal(run_binary(tmp_path, "div", a, b), a / b)
    base = random_array(rng, (4, 6), np.float32, 0.1, 3.0)
    np.testing.assert_allclose(run_binary(tmp_path, "pow", base, b),
                               np.power(base, b), rtol=2e-6)


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.int8])
def test_int_div_rem_floor_semantics(tmp_path, rng, dtype):
    a = rng.integers(-50, 50, size=(6, 7)).astype(dtype)
    b = rng.integers(-6, 7, size=(7,)).astype(dtype)
    b[0] = 0  # numpy gives 0 for x // 0 and x % 0 on integers
    b[1] = -1
    with np.errstate(divide="ignore"):
        np.testing.assert_array_equal(run_binary(tmp_path, "div", a, b), a // b)
        np.testing.assert_array_equal(run_binary(tmp_path, "rem", a, b), a % b)


def test_int_min_div_minus_one_does_not_trap(tmp_path):
    a = np.array([np.iinfo(np.int32).min, 7], dtype=np.int32)
    b = np.array([-1, -1], dtype=np.int32)
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(run_binary(tmp_path, "div", a, b), a // b)
    np.testing.assert_array_equal(run_binary(tmp_path, "rem", a, b), a % b)


def test_float_rem(tmp_path, rng):
    a = random_array(rng, (5, 5), np.float64, -10, 10)
    b = random_array(rng, (5,), np.float64, -3, 3)
    np.testing.assert_allclose(run_binary(tmp_path, "rem", a, b),
                               np.remainder(a, b), rtol=1e-12, atol=1e-12)


def test_int_pow(tmp_path, rng):
    a = rng.integers(-5, 6, size=(4, 4)).astype(np.int64)
    b = rng.integers(0, 6, size=(4,)).astype(np.int64)
    np.testing.assert_array_equal(run_binary(tmp_path, "pow", a, b), a**b)


@pytest.mark.parametrize("op,fn", [("and", np.bitwise_and), ("or", np.bitwise_or),
                                   ("xor", np.bitwise_xor)])
@pytest.mark.parametrize("dtype", [np.bool_, np.int32, np.int64])
def test_bitwise(tmp_path, rng, op, fn, dtype):
    a, b = random_array(rng, (3, 1), dtype), random_array(rng, (1, 5), dtype)
    np.testing.assert_array_equal(run_binary(tmp_path, op, a, b), fn(a, b))


@pytest.mark.parametrize("direction,fn", [("eq", np.equal), ("ne", np.not_equal),
                                          ("lt", np.less), ("le", np.less_equal),
                                          ("gt", np.greater), ("ge", np.greater_equal)])
@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.bool_])
def test_compare(tmp_path, rng, direction, fn, dtype):
    a = random_array(rng, (4, 5), dtype, -2, 2)
    b = random_array(rng, (5,), dtype, -2, 2)
    if dtype == np.float32:
        a = np.round(a)  # make equal values likely
        b = np.round(b)
        a[0, 0] = np.nan
    ta, tb, tr = binary_types(a.shape, b.shape, (), (), dtype)
    tr = tensor_type((4, 5), "i1")
    body = (f"  %0 = paddle.compare {direction}, %arg0, %arg1 : {ta}, {tb} -> {tr}\n"
            f"  return %0 : {tr}")
    (r,) = run_op(tmp_path, body, [a, b], [tr])
    np.testing.assert_array_equal(r, fn(a, b))


def test_select_broadcast_dynamic(tmp_path, rng):
    c = rng.integers(0, 2, size=(3, 4)).astype(np.bool_)
    a = random_array(rng, (4,), np.float32)
    b = random_array(rng, (3, 1), np.float32)
    tc, ta, tb = "tensor<?x4xi1>", "tensor<?xf32>", "tensor<?x1xf32>"
    tr = "tensor<?x4xf32>"
    body = (f"  %0 = paddle.select %arg0, %arg1, %arg2 : {tc}, {ta}, {tb} -> {tr}\n"
            f"  return %0 : {tr}")
    (r,) = run_op(tmp_path, body, [c, a, b], [tr], [tc, ta, tb])
    np.testing.assert_array_equal(r, np.where(c, a, b))


UNARY_F32 = {
    "neg": (np.negative, 0),
    "abs": (np.abs, 0),
    "exp": (np.exp, 2e-6),
    "log": (np.log, 2e-6),
    "sqrt": (np.sqrt, 0),
    "rsqrt": (lambda x: 1 / np.sqrt(x), 2e-6),
    "tanh": (np.tanh, 2e-6),
    "sigmoid": (lambda x: 1 / (1 + np.exp(-x)), 2e-6),
    "relu": (lambda x: np.maximum(x, 0), 0),
    "erf": (np_erf, 2e-6),
    "sin": (np.sin, 2e-6),
    "cos": (np.cos, 2e-6),
    "floor": (np.floor, 0),
    "ceil": (np.ceil, 0),
    "round": (np.round, 0),
    "sign": (np.sign, 0),
}


@pytest.mark.parametrize("op", sorted(UNARY_F32))
@pytest.mark.parametrize("shape,dyn", [((7,), ()), ((3, 5), (0,)), ((2, 3, 4), (0, 2)),
                                       ((), ())])
def test_unary_f32(tmp_path, rng, op, shape, dyn):
    fn, rtol = UNARY_F32[op]
    positive = op in ("log", "sqrt", "rsqrt")
    x = random_array(rng, shape, np.float32, 0.05 if positive else -4, 4)
    if op == "round" and x.size:
        x.flat[0] = 2.5  # halves round to even
    t = tensor_type(shape, np.float32, dyn)
    body = f"  %0 = paddle.{op} %arg0 : {t} -> {t}\n  return %0 : {t}"
    (r,) = run_op(tmp_path, body, [x], [t], [t])
    expected = fn(x.astype(np.float64)).astype(np.float32) if rtol else fn(x)
    if rtol:
        np.testing.assert_allclose(r, expected, rtol=rtol, atol=1e-6)
    else:
        np.testing.assert_array_equal(r, expected)


@pytest.mark.parametrize("approximate", [False, True])
def test_gelu(tmp_path, rng, approximate):
    x = random_array(rng, (4, 9), np.float32)
    t = tensor_type(x.shape, np.float32)
    attr = " {approximate}" if approximate else ""
    body = f"  %0 = paddle.gelu %arg0{attr} : {t} -> {t}\n  return %0 : {t}"
    (r,) = run_op(tmp_path, body, [x], [t])
    xd = x.astype(np.float64)
    if approximate:
        ref = 0.5 * xd * (1 + np.tanh(np.sqrt(2 / np.pi) * (xd + 0.044715 * xd**3)))
    else:
        ref = 0.5 * xd * (1 + np_erf(xd / np.sqrt(2)))
    np.testing.assert_allclose(r, ref, rtol=2e-6, atol=1e-6)


@pytest.mark.parametrize("op,fn", [("neg", np.negative), ("abs", np.abs),
                                   ("relu", lambda x: np.maximum(x, 0)), ("sign", np.sign),
                                   ("not", np.invert)])
@pytest.mark.parametrize("dtype", [np.int8, np.int32, np.int64])
def test_unary_int(tmp_path, rng, op, fn, dtype):
    x = random_array(rng, (3, 4), dtype)
    t = tensor_type(x.shape, dtype, (1,))
    body = f"  %0 = paddle.{op} %arg0 : {t} -> {t}\n  return %0 : {t}"
    (r,) = run_op(tmp_path, body, [x], [t], [t])
    np.testing.assert_array_equal(r, fn(x))


def test_not_bool(tmp_path, rng):
    x = random_array(rng, (9,), np.bool_)
    t = tensor_type(x.shape, np.bool_)
    body = f"  %0 = paddle.not %arg0 : {t} -> {t}\n  return %0 : {t}"
    (r,) = run_op(tmp_path, body, [x], [t])
    np.testing.assert_array_equal(r, ~x)


def test_f64_transcendental(tmp_path, rng):
    x = random_array(rng, (5, 3), np.float64, 0.1, 3)
    t = tensor_type(x.shape, np.float64)
    body = (f"  %0 = paddle.log %arg0 : {t} -> {t}\n"
            f"  %1 = paddle.tanh %0 : {t} -> {t}\n  return %1 : {t}")
    (r,) = run_op(tmp_path, body, [x], [t])
    np.testing.assert_allclose(r, np.tanh(np.log(x)), rtol=1e-12)


CASTS = [
    (np.float32, np.int32), (np.float32, np.int8), (np.float32, np.float64),
    (np.float64, np.float32), (np.int32, np.float32), (np.int64, np.int32),
    (np.int8, np.int64), (np.bool_, np.float32), (np.bool_, np.int32),
    (np.float32, np.bool_), (np.int32, np.bool_), (np.float32, np.float16),
    (np.float16, np.float32),
]


@pytest.mark.parametrize("src,dst", CASTS)
def test_cast(tmp_path, rng, src, dst):
    x = random_array(rng, (4, 6), src, -100, 100)
    if np.dtype(src).kind == "f" and x.size:
        x.flat[0] = 0.0
    ts, td = tensor_type(x.shape, src, (0,)), tensor_type(x.shape, dst, (0,))
    body = f"  %0 = paddle.cast %arg0 : {ts} -> {td}\n  return %0 : {td}"
    (r,) = run_op(tmp_path, body, [x], [td], [ts])
    np.testing.assert_array_equal(r, x.astype(dst))


@pytest.mark.parametrize("elt", ["f16", "bf16"])
def test_half_precision_compute(tmp_path, rng, elt):
    """f16/bf16 math runs in f32 and rounds back: compare to numpy in f32."""
    x = random_array(rng, (16,), np.float32, -2, 2)
    t32, th = tensor_type(x.shape, "f32"), tensor_type(x.shape, elt)
    body = (f"  %0 = paddle.cast %arg0 : {t32} -> {th}\n"
            f"  %1 = paddle.tanh %0 : {th} -> {th}\n"
            f"  %2 = paddle.add %1, %0 : {th}, {th} -> {th}\n"
            f"  %3 = paddle.cast %2 : {th} -> {t32}\n  return %3 : {t32}")
    (r,) = run_op(tmp_path, body, [x], [t32])
    ref = np.tanh(x) + x
    tol = 1e-2 if elt == "bf16" else 2e-3
    np.testing.assert_allclose(r, ref, rtol=tol, atol=tol)


def test_iota(tmp_path):
    t = "tensor<3x4xi64>"
    body = f"  %0 = paddle.iota dim = 1 : {t}\n  return %0 : {t}"
    (r,) = run_op(tmp_path, body, [], [t], [])
    np.testing.assert_array_equal(r, np.broadcast_to(np.arange(4), (3, 4)))


def test_constant_and_folding(tmp_path):
    t = "tensor<3xf32>"
    body = ("  %c = paddle.constant dense<[1.0, -2.0, 3.5]> : tensor<3xf32>\n"
            f"  %0 = paddle.mul %c, %c : {t}, {t} -> {t}\n"
            f"  %1 = paddle.add %arg0, %0 : {t}, {t} -> {t}\n  return %1 : {t}")
    x = np.array([0.5, 0.25, -1.0], dtype=np.float32)
    (r,) = run_op(tmp_path, body, [x], [t])
    np.testing.assert_array_equal(r, x + np.array([1.0, 4.0, 12.25], np.float32))


def test_iota_dynamic(tmp_path, rng):
    """Dynamic iota sizes come from index operands (here a dim of the input)."""
    x = rng.standard_normal((5, 3)).astype(np.float32)
    body = ("  %c0 = arith.constant 0 : index\n"
            "  %n = tensor.dim %arg0, %c0 : tensor<?x3xf32>\n"
            "  %0 = paddle.iota [%n] dim = 0 : tensor<?x3xf32>\n"
            "  %1 = paddle.add %0, %arg0 : tensor<?x3xf32>, tensor<?x3xf32> -> tensor<?x3xf32>\n"
            "  return %1 : tensor<?x3xf32>")
    (r,) = run_op(tmp_path, body, [x], ["tensor<?x3xf32>"], ["tensor<?x3xf32>"])
    np.testing.assert_array_equal(r, x + np.arange(5, dtype=np.float32)[:, None])
