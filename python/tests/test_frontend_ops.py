"""NumPy-like functions, methods and operators of the frontend vs numpy.

Each group of functions is compiled once (one jit returning a dict of
results) and checked entry by entry, to keep the JIT time low. float32
results are compared with rtol 1e-5 / atol 1e-6 unless a test says
otherwise; integer and boolean results exactly.
"""

import numpy as np
import pytest
from scipy import special

import paddle_mlir as pm

RTOL, ATOL = 1e-5, 1e-6


@pytest.fixture(scope="module", autouse=True)
def fast_compiles():
    # These tests check the IR the frontend builds; opt_level 0 compiles it
    # about ten times faster than 3 (test_frontend_jit runs the default).
    prev = pm.set_default_opt_level(0)
    yield
    pm.set_default_opt_level(prev)


def _close(got, want, rtol=RTOL, atol=ATOL):
    want = np.asarray(want)
    assert isinstance(got, np.ndarray), type(got)
    assert got.shape == want.shape, (got.shape, want.shape)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    if want.dtype.kind in "biu":
        np.testing.assert_array_equal(got, want)
    else:
        np.testing.assert_allclose(got, want, rtol=rtol, atol=atol)


_R = np.random.default_rng(1234)
X = _R.standard_normal((3, 4, 5)).astype(np.float32)
XP = (_R.random((3, 4, 5)) + 0.1).astype(np.float32)   # positive
Y = _R.standard_normal((4, 5)).astype(np.float32)
YB = _R.standard_normal((3, 1, 5)).astype(np.float32)  # broadcasts with X
I = _R.integers(-5, 6, (4, 5)).astype(np.int32)
INZ = np.where(I == 0, 3, I).astype(np.int32)


def _gelu(x):
    return (x * 0.5 * (1 + special.erf(x / np.sqrt(2)))).astype(x.dtype)


UNARY = {
    "exp": (pm.exp, np.exp, X),
    "log": (pm.log, np.log, XP),
    "tanh": (pm.tanh, np.tanh, X),
    "sin": (pm.sin, np.sin, X),
    "cos": (pm.cos, np.cos, X),
    "sqrt": (pm.sqrt, np.sqrt, XP),
    "rsqrt": (pm.rsqrt, lambda a: (1 / np.sqrt(a)).astype(a.dtype), XP),
    "floor": (pm.floor, np.floor, X * 3),
    "ceil": (pm.ceil, np.ceil, X * 3),
    "rint": (pm.rint, np.rint, X * 3),
    "abs": (pm.abs, np.abs, X),
    "negative": (pm.negative, np.negative, X),
    "sign": (pm.sign, np.sign, X),
    "sigmoid": (pm.sigmoid, lambda a: (1 / (1 + np.exp(-a))).astype(
        a.dtype), X),
    "erf": (pm.erf, lambda a: special.erf(a).astype(a.dtype), X),
    "relu": (pm.relu, lambda a: np.maximum(a, 0), X),
    "gelu": (pm.gelu, _gelu, X),
    "square": (pm.square, np.square, X),
    "reciprocal": (pm.reciprocal, np.reciprocal, XP),
    "log1p": (pm.log1p, np.log1p, XP),
    "expm1": (pm.expm1, np.expm1, X),
    "abs_int": (pm.abs, np.abs, I),
    "neg_int": (pm.negative, np.negative, I),
    "exp_int": (pm.exp, np.exp, I),  # int32 -> float64, as numpy
    "not_bool": (pm.logical_not, np.logical_not, I > 0),
    "invert_int": (pm.invert, np.invert, I),
}


@pytest.fixture(scope="module")
def unary_results():
    names = list(UNARY)
    f = pm.jit(lambda args: {n: UNARY[n][0](a) for n, a in zip(names, args)})
    return f([UNARY[n][2] for n in names])


@pytest.mark.parametrize("name", list(UNARY))
def test_unary(unary_results, name):
    _, ref, arg = UNARY[name]
    # log1p/expm1 are composites (log(1 + x), exp(x) - 1) in float32.
    atol = 1e-5 if name in ("log1p", "expm1", "gelu", "erf") else ATOL
    _close(unary_results[name], ref(arg), atol=atol)


BINARY = {
    "add": (pm.add, np.add, X, YB),
    "subtract": (pm.subtract, np.subtract, X, Y),
    "multiply": (pm.multiply, np.multiply, YB, X),
    "divide": (pm.divide, np.divide, X, XP),
    "floor_divide": (pm.floor_divide, np.floor_divide, X * 4, XP),
    "remainder": (pm.remainder, np.remainder, X * 4, XP),
    "power": (pm.power, np.power, XP, Y),
    "maximum": (pm.maximum, np.maximum, X, Y),
    "minimum": (pm.minimum, np.minimum, X, YB),
    "equal": (pm.equal, np.equal, I, I.T[:, :1].T),
    "not_equal": (pm.not_equal, np.not_equal, I, 2),
    "less": (pm.less, np.less, X, Y),
    "less_equal": (pm.less_equal, np.less_equal, I, INZ),
    "greater": (pm.greater, np.greater, X, 0.0),
    "greater_equal": (pm.greater_equal, np.greater_equal, Y, YB),
    "int_floor_divide": (pm.floor_divide, np.floor_divide, I, INZ),
    "int_remainder": (pm.remainder, np.remainder, I, INZ),
    "int_true_divide": (pm.divide, np.divide, I, INZ),
    "int_add_i64": (pm.add, np.add, I, I.astype(np.int64)),
    "int_float": (pm.multiply, np.multiply, I, Y),  # -> float64
    "logical_and": (pm.logical_and, np.logical_and, I > 0, I < 3),
    "logical_or": (pm.logical_or, np.logical_or, I > 0, I < -3),
    "logical_xor": (pm.logical_xor, np.logical_xor, I > 0, I < 3),
    "bitwise_and": (pm.bitwise_and, np.bitwise_and, I, INZ),
    "bool_add": (pm.add, np.add, I > 0, I < -2),
}


@pytest.fixture(scope="module")
def binary_results():
    # Python scalars become weakly typed 0-d arguments.
    names = list(BINARY)
    f = pm.jit(lambda args: {n: BINARY[n][0](a, b)
                             for n, (a, b) in zip(names, args)})
    return f([(BINARY[n][2], BINARY[n][3]) for n in names])


@pytest.mark.parametrize("name", list(BINARY))
def test_binary(binary_results, name):
    _, ref, a, b = BINARY[name]
    rtol = 1e-4 if name == "power" else RTOL
    _close(binary_results[name], ref(a, b), rtol=rtol)


def test_operators_and_methods():
    def f(x, y, i):
        return {
            "add": x + y, "radd": 1.5 + x, "sub": x - y, "rsub": 2.0 - x,
            "mul": x * y, "rmul": 3 * x, "div": x / 2.0, "rdiv": 1.0 / (
                x * x + 1), "pow": x ** 2, "pow3": x ** 3, "neg": -x,
            "pos": +x, "abs": abs(x), "matmul": x @ y.T, "rmatmul":
                np.ones((2, 4), np.float32) @ x,
            "lt": x < y, "ge": x >= 0.5, "eq": i == 2, "ne": i != 2,
            "and": (i > 0) & (i < 3), "or": (i > 0) | (i < -3),
            "xor": (i > 0) ^ (i < 3), "inv": ~(i > 0), "mod": i % 3,
            "floordiv": i // 3, "T": x.T, "mT": x.mT,
            "sum": x.sum(axis=1, keepdims=True), "mean": x.mean(0),
            "max": x.max(axis=-1), "min": x.min(), "prod": x.prod(axis=0),
            "argmax": x.argmax(axis=1), "argmin": x.argmin(),
            "reshape": x.reshape(2, 2, 5), "reshape_t": x.reshape((-1,)),
            "transpose": x.transpose(), "astype": x.astype(np.int32),
            "clip": x.clip(-0.5, 0.5), "ravel": x.ravel(),
            "var": x.var(axis=0), "std": x.std(ddof=1),
            "shape": np.asarray(x.shape), "ndim": np.asarray(x.ndim),
            "size": np.asarray(x.size), "len": np.asarray(len(x)),
            "iter": [r for r in x][1],
        }
    r = _R.standard_normal((4, 5)).astype(np.float32)
    s = _R.standard_normal((4, 5)).astype(np.float32)
    i = I.copy()
    got = pm.jit(f)(r, s, i)
    want = f(r, s, i)
    assert set(got) == set(want)
    for k in want:
        w = np.asarray(want[k])
        if k == "shape":
            w = np.asarray(r.shape)
        _close(got[k], w, rtol=1e-5, atol=1e-5)


REDUCE_CASES = [
    ("sum", None, False), ("sum", 1, True), ("sum", (0, 2), False),
    ("mean", -1, False), ("mean", None, True), ("max", 0, False),
    ("max", (1, 2), True), ("min", None, False), ("prod", 2, False),
    ("argmax", 1, False), ("argmax", None, False), ("argmin", -1, True),
    ("var", 1, False), ("std", None, False), ("logsumexp", -1, False),
    ("sum", (), False),
]


@pytest.fixture(scope="module")
def reduce_results():
    def f(x, i, b):
        out = {}
        for n, (op, axis, kd) in enumerate(REDUCE_CASES):
            out[f"f{n}"] = getattr(pm, op)(x, axis=axis, keepdims=kd)
        out["i_sum"] = pm.sum(i)
        out["i_mean"] = pm.mean(i, axis=0)
        out["i_max"] = pm.max(i, axis=1)
        out["b_sum"] = pm.sum(b, axis=0)
        out["b_max"] = pm.max(b, axis=0)
        return out
    return pm.jit(f)(X, I, I > 0)


@pytest.mark.parametrize("n", range(len(REDUCE_CASES)))
def test_reduction(reduce_results, n):
    op, axis, kd = REDUCE_CASES[n]
    if op == "logsumexp":
        want = special.logsumexp(X, axis=axis, keepdims=kd).astype(
            np.float32)
    else:
        want = getattr(np, op)(X, axis=axis, keepdims=kd)
    _close(reduce_results[f"f{n}"], want, rtol=1e-5, atol=1e-5)


def test_reduction_dtypes(reduce_results):
    _close(reduce_results["i_sum"], np.sum(I))          # int32 -> int64
    _close(reduce_results["i_mean"], np.mean(I, axis=0))  # -> float64
    _close(reduce_results["i_max"], np.max(I, axis=1))
    _close(reduce_results["b_sum"], np.sum(I > 0, axis=0))
    _close(reduce_results["b_max"], np.max(I > 0, axis=0))


IDX = np.array([[2, 0], [1, 1]])
INDEXING = [
    (1,), (-1,), (slice(None), 2), (slice(1, None), slice(None, None, 2)),
    (Ellipsis, 3), (None, 0), (slice(None), None, slice(1, 4)),
    (1, Ellipsis, None), (slice(0, 10),), (IDX,), (slice(None), IDX),
    (0, slice(None), IDX), (IDX, slice(None), 0), (slice(None), 2, IDX),
    (Ellipsis, np.array([4, 0, 4])), (np.array([-1, 0]),),
    (slice(2, 1),),
]


@pytest.fixture(scope="module")
def index_results():
    return pm.jit(lambda x: [x[k] for k in INDEXING])(X)


@pytest.mark.parametrize("n", range(len(INDEXING)))
def test_indexing(index_results, n):
    _close(index_results[n], X[INDEXING[n]])


def test_traced_index_array():
    f = pm.jit(lambda x, i: x[:, i])
    idx = np.array([3, 0, 3], np.int64)
    _close(f(X, idx), X[:, idx])


TAKE_IDX = np.array([[[1, 0, 3, -1, 2]], [[0, 0, 0, 0, 0]],
                     [[3, 2, 1, 0, -4]]])

SHAPE_OPS = {
    "reshape": (lambda x: pm.reshape(x, (5, -1)), lambda x: np.reshape(
        x, (5, -1))),
    "transpose": (lambda x: pm.transpose(x, (2, 0, 1)),
                  lambda x: np.transpose(x, (2, 0, 1))),
    "swapaxes": (lambda x: pm.swapaxes(x, 0, 2), lambda x: np.swapaxes(
        x, 0, 2)),
    "moveaxis": (lambda x: pm.moveaxis(x, 0, -1), lambda x: np.moveaxis(
        x, 0, -1)),
    "expand_dims": (lambda x: pm.expand_dims(x, (0, 2)),
                    lambda x: np.expand_dims(x, (0, 2))),
    "squeeze": (lambda x: pm.squeeze(x[:, :1], 1), lambda x: np.squeeze(
        x[:, :1], 1)),
    "broadcast_to": (lambda x: pm.broadcast_to(x[:, :1], (2, 3, 4, 5)),
                     lambda x: np.broadcast_to(x[:, :1], (2, 3, 4, 5))),
    "concatenate": (lambda x: pm.concatenate([x, x[:, :2] * 2], axis=1),
                    lambda x: np.concatenate([x, x[:, :2] * 2], axis=1)),
    "concat_none": (lambda x: pm.concatenate([x, x], axis=None),
                    lambda x: np.concatenate([x, x], axis=None)),
    "stack": (lambda x: pm.stack([x, -x], axis=-1), lambda x: np.stack(
        [x, -x], axis=-1)),
    "pad": (lambda x: pm.pad(x, ((0, 1), (2, 0), (1, 1)),
                             constant_values=1.5),
            lambda x: np.pad(x, ((0, 1), (2, 0), (1, 1)),
                             constant_values=1.5)),
    "take": (lambda x: pm.take(x, np.array([[0, 2]]), axis=1),
             lambda x: np.take(x, np.array([[0, 2]]), axis=1)),
    "take_flat": (lambda x: pm.take(x, np.array([7, 59])),
                  lambda x: np.take(x, np.array([7, 59]))),
    "take_along": (lambda x: pm.take_along_axis(x, TAKE_IDX, axis=1),
                   lambda x: np.take_along_axis(x, TAKE_IDX, axis=1)),
    "where": (lambda x: pm.where(x > 0, x, 0.25 * x),
              lambda x: np.where(x > 0, x, 0.25 * x)),
    "where_b": (lambda x: pm.where(x[0] > 0, x, Y),
                lambda x: np.where(x[0] > 0, x, Y)),
    "clip": (lambda x: pm.clip(x, -0.3, 0.4), lambda x: np.clip(
        x, -0.3, 0.4)),
    "ravel": (pm.ravel, np.ravel),
    "matmul": (lambda x: pm.matmul(x, Y.T), lambda x: np.matmul(x, Y.T)),
    "matmul_vec": (lambda x: pm.matmul(x, Y[0]), lambda x: np.matmul(
        x, Y[0])),
    "vec_vec": (lambda x: pm.matmul(x[0, 0], Y[0]), lambda x: np.matmul(
        x[0, 0], Y[0])),
    "batched": (lambda x: x @ np.ones((3, 5, 2), np.float32),
                lambda x: x @ np.ones((3, 5, 2), np.float32)),
    "dot": (lambda x: pm.dot(x[0], Y[0]), lambda x: np.dot(x[0], Y[0])),
    "outer": (lambda x: pm.outer(x[0, 0], Y[0]), lambda x: np.outer(
        x[0, 0], Y[0])),
    "scatter_add": (lambda x: pm.scatter_add(x, np.array([0, 0, 2]),
                                             np.ones((3, 3, 5), np.float32),
                                             axis=1),
                    None),
}


@pytest.fixture(scope="module")
def shape_results():
    names = list(SHAPE_OPS)
    return pm.jit(lambda x: {n: SHAPE_OPS[n][0](x) for n in names})(X)


@pytest.mark.parametrize("name", list(SHAPE_OPS))
def test_shape_ops(shape_results, name):
    ref = SHAPE_OPS[name][1]
    if name == "scatter_add":
        want = X.copy()
        np.add.at(want, (slice(None), np.array([0, 0, 2])),
                  np.ones((3, 3, 5), np.float32))
    else:
        want = ref(X)
    _close(shape_results[name], want, rtol=1e-5, atol=1e-5)


# -- dtype promotion, numpy's table --------------------------------------------

DTYPES = [np.bool_, np.int8, np.int32, np.int64, np.float16, np.float32,
          np.float64]
SCALARS = [True, 3, 2.5]


def _promotion_table(arrs):
    out = {}
    for a in arrs:
        for b in arrs:
            out[f"{a}+{b}"] = arrs[a] + arrs[b]
            out[f"{a}<{b}"] = arrs[a] < arrs[b]
            if arrs[a].dtype != np.bool_ and arrs[b].dtype != np.bool_:
                out[f"{a}*{b}"] = arrs[a] * arrs[b]
                out[f"{a}/{b}"] = arrs[a] / arrs[b]
                out[f"{a}max{b}"] = pm.maximum(arrs[a], arrs[b]) if \
                    not isinstance(arrs[a], np.ndarray) else \
                    np.maximum(arrs[a], arrs[b])
        for s in SCALARS:
            out[f"{a}+{s!r}"] = arrs[a] + s
            out[f"{s!r}*{a}"] = s * arrs[a]
    return out


def _table_arrays():
    return {np.dtype(d).name: (np.arange(1, 7).reshape(2, 3) % 3 + 1)
            .astype(d) for d in DTYPES}


def test_promotion_table_dtypes():
    # Every pair of dtypes and Python scalars, traced (not compiled): the
    # result dtypes are numpy's.
    arrays = _table_arrays()
    want = _promotion_table(arrays)
    got = pm.eval_shape(_promotion_table, arrays)
    assert set(got) == set(want)
    for k in want:
        assert got[k].dtype == want[k].dtype, k
        assert got[k].shape == want[k].shape, k


PROMOTION_RUN = ["int8+float16", "int32*float32", "int32/int32",
                 "bool+int8", "int64<float32", "float16+2.5", "3*int8",
                 "True*bool", "float32maxfloat64", "int32+int64",
                 "float64/float32"]


def test_promotion_values():
    # A few of them compiled and run, values and dtypes vs numpy.
    arrays = _table_arrays()
    want = _promotion_table(arrays)
    got = pm.jit(lambda arrs: {k: v for k, v in _promotion_table(
        arrs).items() if k in PROMOTION_RUN})(arrays)
    assert set(got) == set(PROMOTION_RUN)
    for k in PROMOTION_RUN:
        assert got[k].dtype == want[k].dtype, k
        tol = 1e-3 if want[k].dtype == np.float16 else 1e-6
        np.testing.assert_allclose(got[k].astype(np.float64),
                                   want[k].astype(np.float64), rtol=tol,
                                   err_msg=k)


def test_weak_scalar_keeps_float32():
    r = pm.jit(lambda x: x * 2.0 + 1)(np.ones(3, np.float32))
    assert r.dtype == np.float32
    r = pm.jit(lambda x: x * 2.0)(np.ones(3, np.float64))
    assert r.dtype == np.float64
    r = pm.jit(lambda x, s: x * s)(np.ones(3, np.float32), 3.0)
    assert r.dtype == np.float32 and (r == 3).all()


# -- outside a trace ------------------------------------------------------------

def test_eager_calls_compile_once():
    x = _R.standard_normal((7, 3)).astype(np.float32)
    _close(pm.exp(x), np.exp(x))
    n = pm.compile_count()
    _close(pm.exp(x + 1), np.exp(x + 1))
    _close(pm.sum(x, axis=0), np.sum(x, axis=0))
    n2 = pm.compile_count()
    assert n2 == n + 1  # exp reused; sum(axis=0) compiled once
    _close(pm.sum(x * 2, axis=0), np.sum(x * 2, axis=0))
    assert pm.compile_count() == n2
    _close(pm.maximum(x, 0.0), np.maximum(x, 0.0))
    _close(pm.concatenate([x, x]), np.concatenate([x, x]))
    _close(pm.matmul(x, x.T), x @ x.T, rtol=1e-5, atol=1e-5)


def test_creation_functions_are_numpy():
    assert isinstance(pm.zeros((2, 3)), np.ndarray)
    assert pm.ones((2,), pm.int32).dtype == np.int32
    f = pm.jit(lambda x: x + pm.ones_like(x) + pm.arange(3) +
               pm.full((3,), 2.0, np.float32))
    _close(f(np.zeros(3, np.float32)), np.zeros(3, np.float32) + 1 +
           np.arange(3) + 2.0)


# -- neural-network pieces --------------------------------------------------------

def _conv_ref(x, w, stride, pad, dil, groups):
    n, c, h, wd = x.shape
    o, cg, kh, kw = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (pad[0], pad[2]), (pad[1], pad[3])))
    oh = (xp.shape[2] - dil[0] * (kh - 1) - 1) // stride[0] + 1
    ow = (xp.shape[3] - dil[1] * (kw - 1) - 1) // stride[1] + 1
    out = np.zeros((n, o, oh, ow), np.float64)
    og = o // groups
    for oc in range(o):
        g = oc // og
        for i in range(kh):
            for j in range(kw):
                patch = xp[:, g * cg:(g + 1) * cg,
                           i * dil[0]:i * dil[0] + stride[0] * oh:stride[0],
                           j * dil[1]:j * dil[1] + stride[1] * ow:stride[1]]
                out[:, oc] += np.einsum("nchw,c->nhw", patch, w[oc, :, i, j])
    return out.astype(np.float32)


def _pool_ref(x, k, s, p, kind):
    n, c, h, w = x.shape
    fill = -np.inf if kind == "max" else 0.0
    xp = np.pad(x, ((0, 0), (0, 0), (p, p), (p, p)), constant_values=fill)
    oh, ow = (h + 2 * p - k) // s + 1, (w + 2 * p - k) // s + 1
    out = np.zeros((n, c, oh, ow), np.float32)
    for i in range(oh):
        for j in range(ow):
            win = xp[:, :, i * s:i * s + k, j * s:j * s + k]
            out[:, :, i, j] = win.max((2, 3)) if kind == "max" else \
                win.mean((2, 3))
    return out


def test_nn_functions():
    x = _R.standard_normal((2, 4, 9, 9)).astype(np.float32)
    w = _R.standard_normal((6, 2, 3, 3)).astype(np.float32)
    g = _R.standard_normal((9,)).astype(np.float32)
    b = _R.standard_normal((9,)).astype(np.float32)
    seed = np.int64(42)

    def f(x, w, g, b, seed):
        return {
            "conv": pm.conv2d(x, w, stride=2, padding=1, groups=2),
            "conv_dil": pm.conv2d(x, w[:, :, :2], padding=(1, 0, 0, 2),
                                  dilation=(2, 1), groups=2),
            "maxpool": pm.max_pool2d(x, 3, stride=2, padding=1),
            "avgpool": pm.avg_pool2d(x, 2),
            "softmax": pm.softmax(x, axis=1),
            "log_softmax": pm.log_softmax(x),
            "layer_norm": pm.layer_norm(x, g, b, axis=-1, epsilon=1e-5),
            "layer_norm2": pm.layer_norm(x, axis=(2, 3)),
            "one_hot": pm.one_hot(np.array([2, 0, 1]), 4),
            "argmax": pm.argmax(x, axis=1),
            "rand": pm.random_uniform(seed, (1000,), -1.0, 2.0),
        }
    r = pm.jit(f)(x, w, g, b, seed)
    _close(r["conv"], _conv_ref(x, w, (2, 2), (1, 1, 1, 1), (1, 1), 2),
           rtol=1e-4, atol=1e-4)
    _close(r["conv_dil"], _conv_ref(x, w[:, :, :2], (1, 1), (1, 0, 0, 2),
                                    (2, 1), 2), rtol=1e-4, atol=1e-4)
    _close(r["maxpool"], _pool_ref(x, 3, 2, 1, "max"))
    _close(r["avgpool"], _pool_ref(x, 2, 2, 0, "avg"))
    e = np.exp(x - x.max(1, keepdims=True))
    _close(r["softmax"], e / e.sum(1, keepdims=True))
    _close(r["log_softmax"], x - special.logsumexp(x, -1, keepdims=True),
           atol=1e-5)
    m, v = x.mean(-1, keepdims=True), x.var(-1, keepdims=True)
    _close(r["layer_norm"], (x - m) / np.sqrt(v + 1e-5) * g + b, atol=1e-5)
    m, v = x.mean((2, 3), keepdims=True), x.var((2, 3), keepdims=True)
    _close(r["layer_norm2"], (x - m) / np.sqrt(v + 1e-5), atol=1e-5)
    _close(r["one_hot"], np.eye(4, dtype=np.float32)[[2, 0, 1]])
    _close(r["argmax"], np.argmax(x, axis=1))
    u = r["rand"]
    assert u.dtype == np.float32 and u.shape == (1000,)
    assert u.min() >= -1.0 and u.max() < 2.0 and abs(u.mean() - 0.5) < 0.1
    # The same seed gives the same numbers; another seed others.
    again = pm.jit(f)(x, w, g, b, seed)["rand"]
    np.testing.assert_array_equal(u, again)
    other = pm.random_uniform(7, (1000,), -1.0, 2.0)
    assert not np.array_equal(u, other)
