"""NN paddle ops (matmul, conv2d, pooling, rng_uniform) run through
paddle-run, checked against numpy references written here.

Tolerances: integer matmul and max pooling are exact (assert_array_equal);
f32 matmul rtol 1e-5 (atol 1e-5 against cancellation), f64 matmul rtol
1e-12; f16/bf16 matmul (f32 accumulation, one rounding at the end) within
one f16 / bf16 rounding of the f32 product (rtol 2e-3 / 1e-2); conv2d rtol
1e-4 atol 1e-5 against a float64 reference (f16 2e-3, bf16 1e-2); avg pooling rtol
1e-6 on positive inputs (so the sums do not cancel), f16 rtol 1e-3 (one
f16 rounding); rng_uniform is bit-exact against
a numpy re-implementation of the hash documented on the op.
"""

import numpy as np
import pytest
from paddle_testing import RUNTIME_CHECK_ERROR, PaddleRunError, run_op, tensor_type


def random_array(rng, shape, dtype, low=-4.0, high=4.0):
    dtype = np.dtype(dtype)
    if dtype.kind == "i":
        return rng.integers(int(low) * 2, int(high) * 2 + 1, size=shape).astype(dtype)
    return rng.uniform(low, high, size=shape).astype(dtype)


def type_of(shape, elt, dynamic):
    """tensor type with None in `shape` standing for `?`."""
    dims = [None if i in dynamic else d for i, d in enumerate(shape)]
    return dims_type(dims, elt)


def dims_type(dims, elt):
    return "tensor<" + "".join(("?" if d is None else str(d)) + "x" for d in dims) + elt + ">"


def elt_of(dtype):
    return tensor_type((), dtype)[len("tensor<"):-1]


# ---------------------------------------------------------------------------
# matmul
# ---------------------------------------------------------------------------


def broadcast_dim(a, b):
    """The inferred broadcast of two dims: int, None (dynamic) or 'missing'."""
    if a == "missing":
        return b
    if b == "missing":
        return a
    if a is None and b is None:
        return None
    if a is None:
        return b if b != 1 else None
    if b is None:
        return a if a != 1 else None
    return max(a, b)


def matmul_result_dims(ldims, rdims):
    """The result dims paddle.matmul infers (None = dynamic)."""
    lb, rb = ldims[:-2], rdims[:-2]
    nb = max(len(lb), len(rb))
    lb = ["missing"] * (nb - len(lb)) + list(lb)
    rb = ["missing"] * (nb - len(rb)) + list(rb)
    dims = [broadcast_dim(a, b) for a, b in zip(lb, rb)]
    if len(ldims) >= 2:
        dims.append(ldims[-2])
    if len(rdims) >= 2:
        dims.append(rdims[-1])
    return dims


# (lhs shape, rhs shape, dynamic dims of lhs, dynamic dims of rhs)
MATMUL_CASES = [
    ((3, 4), (4, 5), (), ()),
    ((1, 7), (7, 1), (), ()),
    ((2, 3, 4), (4, 5), (), ()),
    ((3, 4), (2, 4, 5), (), ()),
    ((2, 1, 3, 4), (5, 4, 6), (), ()),
    ((4,), (4, 5), (), ()),
    ((3, 4), (4,), (), ()),
    ((6,), (6,), (), ()),
    ((2, 3, 4), (4,), (), ()),
    ((4,), (2, 4, 3), (), ()),
    ((3, 4), (4, 5), (0, 1), (0,)),
    ((6, 3, 4), (6, 4, 2), (0,), (0,)),
    ((2, 3, 4), (4,), (0, 2), (0,)),
    ((4, 1, 3, 5), (2, 5, 3), (0, 2), (0, 2)),
    ((2, 3, 3, 4), (2, 3, 4, 5), (0, 1), ()),
    # A batched lhs times a matrix folds the batch into the rows of one
    # linalg.matmul (one dynamic row dim at most); these cover the fold with
    # unit rhs batch dims, dynamic m, n and batch, and the fallback with two
    # dynamic row dims.
    ((2, 3, 4), (1, 4, 5), (), ()),
    ((2, 1, 3, 4), (1, 1, 4, 5), (), ()),
    ((3, 4), (1, 4, 5), (), ()),
    ((2, 3, 4), (4, 5), (1,), (1,)),
    ((2, 3, 4), (4, 5), (0,), ()),
    ((2, 3, 4), (4, 5), (0, 1), ()),
]


def run_matmul(tmp_path, a, b, da, db, result_dims=None):
    elt = elt_of(a.dtype)
    ta, tb = type_of(a.shape, elt, da), type_of(b.shape, elt, db)
    ldims = [None if i in da else d for i, d in enumerate(a.shape)]
    rdims = [None if i in db else d for i, d in enumerate(b.shape)]
    tr = dims_type(result_dims or matmul_result_dims(ldims, rdims), elt)
    body = f"  %0 = paddle.matmul %arg0, %arg1 : {ta}, {tb} -> {tr}\n  return %0 : {tr}"
    (r,) = run_op(tmp_path, body, [a, b], [tr], [ta, tb])
    return r


@pytest.mark.parametrize("case", MATMUL_CASES)
def test_matmul_f32(tmp_path, rng, case):
    sa, sb, da, db = case
    a = random_array(rng, sa, np.float32)
    b = random_array(rng, sb, np.float32)
    r = run_matmul(tmp_path, a, b, da, db)
    ref = np.matmul(a.astype(np.float64), b.astype(np.float64))
    assert r.shape == ref.shape
    np.testing.assert_allclose(r, ref, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("dtype", [np.int8, np.int32, np.int64])
@pytest.mark.parametrize("case", [MATMUL_CASES[0], MATMUL_CASES[4], MATMUL_CASES[8],
                                  MATMUL_CASES[13]])
def test_matmul_int_exact(tmp_path, rng, dtype, case):
    sa, sb, da, db = case
    # Small values keep int8 sums in range; numpy would wrap the same way.
    a = random_array(rng, sa, dtype, -2, 2)
    b = random_array(rng, sb, dtype, -2, 2)
    r = run_matmul(tmp_path, a, b, da, db)
    ref = np.matmul(a, b)
    assert r.dtype == ref.dtype
    np.testing.assert_array_equal(r, ref)


def test_matmul_f64(tmp_path, rng):
    a = random_array(rng, (2, 5, 7), np.float64)
    b = random_array(rng, (2, 7, 3), np.float64)
    r = run_matmul(tmp_path, a, b, (0, 1), (2,))
    np.testing.assert_allclose(r, np.matmul(a, b), rtol=1e-12, atol=1e-12)


def test_matmul_static_result_for_dynamic_operands(tmp_path, rng):
    """A written result type more static than the inferred one."""
    a = random_array(rng, (3, 2, 4), np.float32)
    b = random_array(rng, (4, 5), np.float32)
    r = run_matmul(tmp_path, a, b, (0, 1), (1,), result_dims=[3, 2, 5])
    np.testing.assert_allclose(r, np.matmul(a, b), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("elt,tol", [("f16", 2e-3), ("bf16", 1e-2)])
def test_matmul_half_precision(tmp_path, rng, elt, tol):
    a = random_array(rng, (2, 3, 16), np.float32, -1, 1)
    b = random_array(rng, (16, 5), np.float32, -1, 1)
    ta, tb = tensor_type(a.shape, np.float32), tensor_type(b.shape, np.float32)
    ha, hb = tensor_type(a.shape, elt), tensor_type(b.shape, elt)
    tr, hr = tensor_type((2, 3, 5), np.float32), tensor_type((2, 3, 5), elt)
    body = (f"  %a = paddle.cast %arg0 : {ta} -> {ha}\n"
            f"  %b = paddle.cast %arg1 : {tb} -> {hb}\n"
            f"  %m = paddle.matmul %a, %b : {ha}, {hb} -> {hr}\n"
            f"  %r = paddle.cast %m : {hr} -> {tr}\n  return %r : {tr}")
    # Round the inputs as the casts do, so only the result rounding remains.
    if elt == "f16":
        a, b = a.astype(np.float16).astype(np.float32), b.astype(np.float16).astype(np.float32)
    else:
        a, b = to_bf16(a), to_bf16(b)
    (r,) = run_op(tmp_path, body, [a, b], [tr], [ta, tb])
    np.testing.assert_allclose(r, np.matmul(a.astype(np.float64), b), rtol=tol, atol=tol)


# ---------------------------------------------------------------------------
# conv2d
# ---------------------------------------------------------------------------


def conv2d_ref(x, w, strides, pads, dilations, groups):
    x = x.astype(np.float64)
    w = w.astype(np.float64)
    n, c, _, _ = x.shape
    o, cg, kh, kw = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (pads[0], pads[2]), (pads[1], pads[3])))
    hp, wp = xp.shape[2:]
    oh = (hp - dilations[0] * (kh - 1) - 1) // strides[0] + 1
    ow = (wp - dilations[1] * (kw - 1) - 1) // strides[1] + 1
    og = o // groups
    out = np.zeros((n, o, oh, ow))
    for g in range(groups):
        xs = xp[:, g * cg:(g + 1) * cg]
        ws = w[g * og:(g + 1) * og]
        for i in range(kh):
            for j in range(kw):
                y0, x0 = i * dilations[0], j * dilations[1]
                patch = xs[:, :, y0:y0 + strides[0] * (oh - 1) + 1:strides[0],
                           x0:x0 + strides[1] * (ow - 1) + 1:strides[1]]
                out[:, g * og:(g + 1) * og] += np.einsum("nchw,oc->nohw", patch, ws[:, :, i, j])
    return out


# (input shape, filter shape, strides, padding, dilations, groups, dynamic input dims)
CONV_CASES = [
    ((1, 3, 8, 8), (4, 3, 3, 3), (1, 1), (0, 0, 0, 0), (1, 1), 1, ()),
    ((2, 3, 9, 7), (5, 3, 3, 2), (2, 1), (1, 0, 1, 1), (1, 1), 1, ()),
    ((2, 4, 10, 10), (6, 2, 3, 3), (1, 2), (1, 1, 1, 1), (2, 1), 2, ()),
    ((1, 6, 7, 9), (6, 1, 3, 3), (2, 2), (0, 2, 1, 0), (1, 2), 6, ()),
    ((3, 2, 11, 6), (4, 2, 4, 3), (3, 2), (2, 1, 0, 1), (2, 1), 1, (0, 2, 3)),
    ((2, 4, 9, 8), (8, 2, 3, 3), (2, 1), (1, 1, 1, 1), (1, 1), 2, (0, 2, 3)),
    ((2, 4, 9, 8), (8, 2, 3, 3), (1, 1), (0, 1, 0, 1), (1, 2), 2, (0, 1, 2, 3)),
    ((1, 3, 6, 7), (2, 3, 2, 2), (1, 2), (0, 0, 0, 0), (1, 1), 1, (1, 3)),
]


@pytest.mark.parametrize("case", CONV_CASES)
def test_conv2d(tmp_path, rng, case):
    sx, sw, strides, pads, dil, groups, dyn = case
    x = random_array(rng, sx, np.float32)
    w = random_array(rng, sw, np.float32)
    ref = conv2d_ref(x, w, strides, pads, dil, groups)
    tx, tw = type_of(sx, "f32", dyn), tensor_type(sw, np.float32)
    tr = type_of(ref.shape, "f32", dyn)
    attrs = (f"strides = array<i64: {strides[0]}, {strides[1]}>, "
             f"padding = array<i64: {', '.join(map(str, pads))}>, "
             f"dilations = array<i64: {dil[0]}, {dil[1]}>, groups = {groups}")
    body = (f"  %0 = paddle.conv2d %arg0, %arg1 {{{attrs}}} : {tx}, {tw} -> {tr}\n"
            f"  return %0 : {tr}")
    (r,) = run_op(tmp_path, body, [x, w], [tr], [tx, tw])
    assert r.shape == ref.shape
    np.testing.assert_allclose(r, ref, rtol=1e-4, atol=1e-5)


def test_conv2d_f16(tmp_path, rng):
    x = random_array(rng, (1, 2, 6, 6), np.float32, -1, 1).astype(np.float16)
    w = random_array(rng, (3, 2, 3, 3), np.float32, -1, 1).astype(np.float16)
    body = ("  %0 = paddle.conv2d %arg0, %arg1 {padding = array<i64: 1, 1, 1, 1>}"
            " : tensor<1x2x6x6xf16>, tensor<3x2x3x3xf16> -> tensor<1x3x6x6xf16>\n"
            "  return %0 : tensor<1x3x6x6xf16>")
    (r,) = run_op(tmp_path, body, [x, w], ["tensor<1x3x6x6xf16>"])
    ref = conv2d_ref(x, w, (1, 1), (1, 1, 1, 1), (1, 1), 1)
    np.testing.assert_allclose(r.astype(np.float64), ref, rtol=2e-3, atol=2e-3)


# ---------------------------------------------------------------------------
# pooling
# ---------------------------------------------------------------------------


def pool_out(size, k, s, lo, hi, ceil_mode):
    span = size + lo + hi - k
    out = (-(-span // s) if ceil_mode else span // s) + 1
    if ceil_mode and (out - 1) * s >= size + lo:
        out -= 1
    return out


def pool_ref(x, kernel, strides, pads, ceil_mode, kind, count_include_pad=False):
    """PyTorch's max_pool2d / avg_pool2d, with ONNX-order padding."""
    n, c, h, w = x.shape
    oh = pool_out(h, kernel[0], strides[0], pads[0], pads[2], ceil_mode)
    ow = pool_out(w, kernel[1], strides[1], pads[1], pads[3], ceil_mode)
    out = np.empty((n, c, oh, ow), dtype=x.dtype if kind == "max" else np.float64)
    for i in range(oh):
        hs = i * strides[0] - pads[0]
        he = min(hs + kernel[0], h + pads[2])
        for j in range(ow):
            ws = j * strides[1] - pads[1]
            we = min(ws + kernel[1], w + pads[3])
            pool_size = (he - hs) * (we - ws)
            h0, h1, w0, w1 = max(hs, 0), min(he, h), max(ws, 0), min(we, w)
            win = x[:, :, h0:h1, w0:w1]
            if kind == "max":
                out[:, :, i, j] = win.max(axis=(2, 3))
            else:
                divisor = pool_size if count_include_pad else (h1 - h0) * (w1 - w0)
                out[:, :, i, j] = win.astype(np.float64).sum(axis=(2, 3)) / divisor
    return out


# (input shape, kernel, strides, padding, ceil_mode, dynamic input dims)
POOL_CASES = [
    ((1, 2, 8, 8), (2, 2), (2, 2), (0, 0, 0, 0), False, ()),
    ((2, 3, 7, 9), (3, 3), (2, 2), (1, 1, 1, 1), False, ()),
    ((2, 3, 7, 9), (3, 3), (2, 2), (1, 1, 1, 1), True, ()),
    ((1, 2, 8, 8), (3, 2), (2, 2), (0, 0, 0, 0), True, ()),
    ((1, 2, 6, 10), (3, 3), (3, 2), (1, 0, 0, 1), True, ()),
    ((2, 1, 5, 5), (2, 4), (1, 3), (1, 2, 0, 2), False, ()),
    ((3, 2, 9, 8), (3, 3), (2, 3), (1, 1, 0, 1), True, (0, 2, 3)),
    ((2, 2, 10, 7), (4, 2), (3, 2), (2, 1, 2, 0), False, (0, 2, 3)),
    ((2, 2, 10, 7), (4, 2), (3, 2), (2, 1, 2, 0), True, (2,)),
]


def run_pool(tmp_path, op, x, kernel, strides, pads, ceil_mode, dyn, ref_shape, extra=""):
    elt = elt_of(x.dtype)
    tx, tr = type_of(x.shape, elt, dyn), type_of(ref_shape, elt, dyn)
    attrs = (f"kernel = array<i64: {kernel[0]}, {kernel[1]}>, "
             f"strides = array<i64: {strides[0]}, {strides[1]}>, "
             f"padding = array<i64: {', '.join(map(str, pads))}>")
    if ceil_mode:
        attrs += ", ceil_mode"
    attrs += extra
    body = f"  %0 = paddle.{op} %arg0 {{{attrs}}} : {tx} -> {tr}\n  return %0 : {tr}"
    (r,) = run_op(tmp_path, body, [x], [tr], [tx])
    assert r.shape == tuple(ref_shape)
    return r


@pytest.mark.parametrize("case", POOL_CASES)
@pytest.mark.parametrize("dtype", [np.float32, np.int32])
def test_max_pool2d(tmp_path, rng, case, dtype):
    shape, kernel, strides, pads, ceil_mode, dyn = case
    x = random_array(rng, shape, dtype, -50, 50)
    ref = pool_ref(x, kernel, strides, pads, ceil_mode, "max")
    r = run_pool(tmp_path, "max_pool2d", x, kernel, strides, pads, ceil_mode, dyn, ref.shape)
    np.testing.assert_array_equal(r, ref)


def test_max_pool2d_all_negative_with_padding(tmp_path, rng):
    """Padding must not win over negative inputs (it is -inf, not 0)."""
    x = random_array(rng, (1, 2, 5, 5), np.float32, -9, -1)
    ref = pool_ref(x, (3, 3), (2, 2), (1, 1, 1, 1), True, "max")
    r = run_pool(tmp_path, "max_pool2d", x, (3, 3), (2, 2), (1, 1, 1, 1), True, (), ref.shape)
    np.testing.assert_array_equal(r, ref)


@pytest.mark.parametrize("case", POOL_CASES)
@pytest.mark.parametrize("count_include_pad", [False, True])
def test_avg_pool2d(tmp_path, rng, case, count_include_pad):
    shape, kernel, strides, pads, ceil_mode, dyn = case
    x = random_array(rng, shape, np.float32, 0.5, 4)
    ref = pool_ref(x, kernel, strides, pads, ceil_mode, "avg", count_include_pad)
    r = run_pool(tmp_path, "avg_pool2d", x, kernel, strides, pads, ceil_mode, dyn, ref.shape,
                 ", count_include_pad" if count_include_pad else "")
    np.testing.assert_allclose(r, ref, rtol=1e-6)


def test_avg_pool2d_f64(tmp_path, rng):
    x = random_array(rng, (2, 2, 7, 7), np.float64)
    ref = pool_ref(x, (3, 3), (2, 2), (1, 1, 1, 1), True, "avg", True)
    r = run_pool(tmp_path, "avg_pool2d", x, (3, 3), (2, 2), (1, 1, 1, 1), True, (0,),
                 ref.shape, ", count_include_pad")
    np.testing.assert_allclose(r, ref, rtol=1e-12)


# ---------------------------------------------------------------------------
# rng_uniform
# ---------------------------------------------------------------------------

GOLDEN = np.uint64(0x9E3779B97F4A7C15)


def to_bf16(x):
    """float32 -> bfloat16 (round to nearest even), kept in a float32 array."""
    bits = np.asarray(x, np.float32).view(np.uint32)
    bits = (bits + (((bits >> np.uint32(16)) & np.uint32(1)) + np.uint32(0x7FFF))) & np.uint32(0xFFFF0000)
    return bits.view(np.float32)


def rng_ref(seed, shape, low, high, elt):
    """The documented generator: splitmix64 of seed ^ (i * golden)."""
    i = np.arange(int(np.prod(shape)), dtype=np.uint64)
    z = np.uint64(seed & (2**64 - 1)) ^ (i * GOLDEN)
    z = z + GOLDEN
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    z = z ^ (z >> np.uint64(31))
    bits = 53 if elt == "f64" else 24
    u = (z >> np.uint64(64 - bits)).astype(np.float64) * 2.0 ** -bits
    v = (low + (high - low) * u).reshape(shape)
    if elt == "f64":
        return v
    v = v.astype(np.float32)
    if elt == "f16":
        return v.astype(np.float16)
    if elt == "bf16":
        return to_bf16(v)
    return v


def run_rng(tmp_path, seed, shape, elt, low=None, high=None, dyn=()):
    """rng_uniform with the dims in `dyn` taken from a dummy input's dims."""
    attrs = []
    if low is not None:
        attrs.append(f"low = {low!r}")
    if high is not None:
        attrs.append(f"high = {high!r}")
    attr_text = " {" + ", ".join(attrs) + "}" if attrs else ""
    out_elt = "f32" if elt == "bf16" else elt
    tr = type_of(shape, elt, dyn)
    tout = type_of(shape, out_elt, dyn)
    lines = []
    sizes = []
    dummy = np.zeros([shape[d] for d in dyn], np.float32)
    tdummy = type_of(dummy.shape, "f32", range(len(dyn)))
    for k, _ in enumerate(dyn):
        lines.append(f"  %c{k} = arith.constant {k} : index")
        lines.append(f"  %n{k} = tensor.dim %arg1, %c{k} : {tdummy}")
        sizes.append(f"%n{k}")
    size_text = f" [{', '.join(sizes)}]" if sizes else ""
    lines.append(f"  %0 = paddle.rng_uniform %arg0{size_text}{attr_text} : tensor<i64> -> {tr}")
    result = "%0"
    if elt == "bf16":  # numpy has no bf16: bring it back as f32 (exact)
        lines.append(f"  %1 = paddle.cast %0 : {tr} -> {tout}")
        result = "%1"
    lines.append(f"  return {result} : {tout}")
    inputs = [np.array(seed, dtype=np.int64)]
    types = ["tensor<i64>"]
    if dyn:
        inputs.append(dummy)
        types.append(tdummy)
    (r,) = run_op(tmp_path, "\n".join(lines), inputs, [tout], types)
    return r


@pytest.mark.parametrize("elt", ["f32", "f64", "f16", "bf16"])
@pytest.mark.parametrize("shape,dyn", [((5,), ()), ((3, 4), (0,)), ((2, 3, 5), (0, 2)), ((), ())])
def test_rng_uniform_bit_exact(tmp_path, rng, elt, shape, dyn):
    seed = int(rng.integers(-2**62, 2**62))
    r = run_rng(tmp_path, seed, shape, elt, dyn=dyn)
    ref = rng_ref(seed, shape, 0.0, 1.0, elt)
    assert r.shape == tuple(shape)
    np.testing.assert_array_equal(r, np.asarray(ref, dtype=r.dtype))


def test_rng_uniform_low_high(tmp_path):
    r = run_rng(tmp_path, 1234, (64, 32), "f32", low=-3.5, high=2.25, dyn=(1,))
    np.testing.assert_array_equal(r, rng_ref(1234, (64, 32), -3.5, 2.25, "f32"))
    assert r.min() >= -3.5 and r.max() <= 2.25


def test_rng_uniform_deterministic_and_uniform(tmp_path):
    runs = []
    for name, seed in [("a", 7), ("b", 7), ("c", 8)]:
        (tmp_path / name).mkdir()
        runs.append(run_rng(tmp_path / name, seed, (100, 100), "f64"))
    a, b, c = runs
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)
    assert a.min() >= 0.0 and a.max() < 1.0
    # 10^4 samples: the mean of U[0, 1) is 0.5 with std 0.29 / 100.
    assert abs(a.mean() - 0.5) < 0.015
    counts, _ = np.histogram(a, bins=10, range=(0, 1))
    assert counts.min() > 850 and counts.max() < 1150


# ---------------------------------------------------------------------------
# run-time checks of dynamic sizes: a mismatch stops paddle-run (a cf.assert)
# instead of reading out of bounds
# ---------------------------------------------------------------------------


def test_matmul_dynamic_contracted_mismatch_fails(tmp_path, rng):
    a = random_array(rng, (3, 4), np.float32)
    b = random_array(rng, (6, 5), np.float32)
    with pytest.raises(PaddleRunError, match=RUNTIME_CHECK_ERROR):
        run_matmul(tmp_path, a, b, (1,), (0,))


def test_matmul_dynamic_batch_mismatch_fails(tmp_path, rng):
    a = random_array(rng, (2, 3, 4), np.float32)
    b = random_array(rng, (3, 4, 5), np.float32)
    with pytest.raises(PaddleRunError, match=RUNTIME_CHECK_ERROR):
        run_matmul(tmp_path, a, b, (0,), (0,))


def test_conv2d_dynamic_channel_mismatch_fails(tmp_path, rng):
    x = random_array(rng, (1, 5, 6, 6), np.float32)
    w = random_array(rng, (2, 2, 3, 3), np.float32)
    tx, tw, tr = "tensor<1x?x6x6xf32>", "tensor<2x2x3x3xf32>", "tensor<1x2x4x4xf32>"
    body = (f"  %0 = paddle.conv2d %arg0, %arg1 {{groups = 2}} : {tx}, {tw} -> {tr}\n"
            f"  return %0 : {tr}")
    with pytest.raises(PaddleRunError, match=RUNTIME_CHECK_ERROR):
        run_op(tmp_path, body, [x, w], [tr], [tx, tw])


@pytest.mark.parametrize("op", ["max_pool2d", "avg_pool2d"])
def test_pool_f16(tmp_path, rng, op):
    """f16 pools in f32 and rounds once: max is exact, avg one f16 rounding."""
    x = random_array(rng, (2, 3, 7, 6), np.float32, 0.5, 4).astype(np.float16)
    kind = "max" if op == "max_pool2d" else "avg"
    ref = pool_ref(x, (3, 2), (2, 2), (1, 1, 1, 0), True, kind)
    r = run_pool(tmp_path, op, x, (3, 2), (2, 2), (1, 1, 1, 0), True, (0, 3), ref.shape)
    if kind == "max":
        np.testing.assert_array_equal(r, ref)
    else:
        np.testing.assert_allclose(r.astype(np.float64), ref, rtol=1e-3)


def test_bf16_conv_and_max_pool(tmp_path, rng):
    """bf16 goes in and out through paddle.cast (numpy has no bf16)."""
    x = to_bf16(random_array(rng, (1, 2, 6, 6), np.float32, -1, 1))
    w = to_bf16(random_array(rng, (2, 2, 3, 3), np.float32, -1, 1))
    body = (
        "  %x = paddle.cast %arg0 : tensor<1x2x6x6xf32> -> tensor<1x2x6x6xbf16>\n"
        "  %w = paddle.cast %arg1 : tensor<2x2x3x3xf32> -> tensor<2x2x3x3xbf16>\n"
        "  %c = paddle.conv2d %x, %w {padding = array<i64: 1, 1, 1, 1>}"
        " : tensor<1x2x6x6xbf16>, tensor<2x2x3x3xbf16> -> tensor<1x2x6x6xbf16>\n"
        "  %p = paddle.max_pool2d %x {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>}"
        " : tensor<1x2x6x6xbf16> -> tensor<1x2x3x3xbf16>\n"
        "  %rc = paddle.cast %c : tensor<1x2x6x6xbf16> -> tensor<1x2x6x6xf32>\n"
        "  %rp = paddle.cast %p : tensor<1x2x3x3xbf16> -> tensor<1x2x3x3xf32>\n"
        "  return %rc, %rp : tensor<1x2x6x6xf32>, tensor<1x2x3x3xf32>")
    rc, rp = run_op(tmp_path, body, [x, w], ["tensor<1x2x6x6xf32>", "tensor<1x2x3x3xf32>"])
    ref = conv2d_ref(x, w, (1, 1), (1, 1, 1, 1), (1, 1), 1)
    np.testing.assert_allclose(rc, ref, rtol=1e-2, atol=1e-2)
    np.testing.assert_array_equal(rp, pool_ref(x, (2, 2), (2, 2), (0, 0, 0, 0), False, "max"))
