"""Shape paddle ops run through paddle-run, checked against numpy.

Tolerances: none. These ops only move data (scatter_add adds integers, which
wrap as numpy's do, or floats holding small half-integers, so every sum is
exact in any order), so
results must equal numpy's bit for bit (assert_array_equal, same dtype and
shape).

Each test draws random shapes and attributes and marks a random subset of
the operand dims dynamic (`?`); the written result types are what the type
inference gives, which the helpers below compute independently.
"""

import numpy as np
import pytest
from paddle_testing import run_module, run_op, tensor_type

DTYPES = [np.float32, np.float64, np.int32, np.int8, np.bool_, np.float16,
          np.int64]


def random_array(rng, shape, dtype):
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return rng.integers(0, 2, size=shape).astype(np.bool_)
    if dtype.kind == "i":
        return rng.integers(-100, 100, size=shape).astype(dtype)
    # Small integers in floats keep scatter_add sums exact.
    return rng.integers(-50, 50, size=shape).astype(dtype) + dtype.type(0.5)


def random_shape(rng, rank, low=1, high=5):
    return tuple(int(d) for d in rng.integers(low, high + 1, size=rank))


def random_dynamic(rng, rank):
    return tuple(i for i in range(rank) if rng.random() < 0.5)


def check(result, expected):
    assert result.dtype == expected.dtype
    np.testing.assert_array_equal(result, expected)


def run_single(tmp_path, op_text, inputs, arg_types, result_type):
    args = ", ".join(f"%arg{i}" for i in range(len(inputs)))
    body = (f"  %0 = {op_text.format(args=args)} : {', '.join(arg_types)}"
            f" -> {result_type}\n  return %0 : {result_type}")
    (r,) = run_op(tmp_path, body, inputs, [result_type], arg_types)
    return r


def fmt(values):
    return "[" + ", ".join(str(int(v)) for v in values) + "]"


# -----------------------------------------------------------------------------
# reshape
# -----------------------------------------------------------------------------

def random_factorization(rng, count, rank):
    """A random shape of `rank` dims with `count` elements."""
    dims = [1] * rank
    n = count
    for p in range(2, count + 1):
        while n % p == 0:
            dims[int(rng.integers(0, rank))] *= p
            n //= p
    return dims


@pytest.mark.parametrize("case", range(14))
def test_reshape(tmp_path, rng, case):
    dtype = DTYPES[case % len(DTYPES)]
    shape = random_shape(rng, int(rng.integers(1, 5)))
    dynamic = random_dynamic(rng, len(shape)) if case % 3 else ()
    x = random_array(rng, shape, dtype)
    target = random_factorization(rng, x.size, int(rng.integers(1, 5)))
    infer = int(rng.integers(0, len(target))) if case % 4 != 1 else None
    if dynamic and infer is None:
        infer = 0  # keep most cases inferring; static targets are also tested
    attr = [-1 if i == infer else d for i, d in enumerate(target)]
    dyn_out = {infer} if dynamic and infer is not None else set()
    r = run_single(tmp_path, "paddle.reshape {args} shape = " + fmt(attr),
                   [x], [tensor_type(shape, dtype, dynamic)],
                   tensor_type(target, dtype, dyn_out))
    check(r, x.reshape(attr))


def test_reshape_static_target_of_dynamic_input(tmp_path, rng):
    x = random_array(rng, (4, 6), np.float32)
    r = run_single(tmp_path, "paddle.reshape {args} shape = [3, 8]", [x],
                   [tensor_type(x.shape, x.dtype, (0, 1))],
                   tensor_type((3, 8), x.dtype))
    check(r, x.reshape(3, 8))


def test_reshape_rank0(tmp_path, rng):
    x = random_array(rng, (1, 1), np.int32)
    r = run_single(tmp_path, "paddle.reshape {args} shape = []", [x],
                   [tensor_type(x.shape, x.dtype)], "tensor<i32>")
    check(r, x.reshape(()))


# -----------------------------------------------------------------------------
# broadcast_to
# -----------------------------------------------------------------------------

@pytest.mark.parametrize("case", range(14))
def test_broadcast_to(tmp_path, rng, case):
    dtype = DTYPES[case % len(DTYPES)]
    rank = int(rng.integers(0, 4))
    shape = random_shape(rng, rank)
    # Some dims of x become 1 and stretch; some leading dims are added.
    shape = tuple(1 if rng.random() < 0.3 else d for d in shape)
    lead = random_shape(rng, int(rng.integers(0, 3)))
    target = list(lead) + [d if d != 1 else int(rng.integers(1, 4))
                           for d in shape]
    x = random_array(rng, shape, dtype)
    # A dynamic dim is never assumed to be 1, so only dims that do not
    # stretch may be dynamic; some of them use -1.
    offset = len(lead)
    dynamic = tuple(i for i in random_dynamic(rng, rank)
                    if shape[i] == target[offset + i])
    attr = list(target)
    dyn_out = set()
    for i in range(rank):
        if rng.random() < 0.4 or (i in dynamic and rng.random() < 0.5):
            attr[offset + i] = -1
            target[offset + i] = shape[i]
            if i in dynamic:
                dyn_out.add(offset + i)
    r = run_single(tmp_path, "paddle.broadcast_to {args} shape = " + fmt(attr),
                   [x], [tensor_type(shape, dtype, dynamic)],
                   tensor_type(target, dtype, dyn_out))
    check(r, np.broadcast_to(x, target))


# -----------------------------------------------------------------------------
# transpose
# -----------------------------------------------------------------------------

@pytest.mark.parametrize("rank", [1, 2, 3, 4])
@pytest.mark.parametrize("case", range(3))
def test_transpose(tmp_path, rng, rank, case):
    dtype = DTYPES[(rank + case) % len(DTYPES)]
    shape = random_shape(rng, rank)
    dynamic = random_dynamic(rng, rank) if case else ()
    perm = [int(p) for p in rng.permutation(rank)]
    x = random_array(rng, shape, dtype)
    out_shape = [shape[p] for p in perm]
    dyn_out = {i for i, p in enumerate(perm) if p in dynamic}
    r = run_single(tmp_path, "paddle.transpose {args} perm = " + fmt(perm),
                   [x], [tensor_type(shape, dtype, dynamic)],
                   tensor_type(out_shape, dtype, dyn_out))
    check(r, np.transpose(x, perm))


# Transposes that move the innermost dim run in 16x16 blocks
# (paddle-tile-and-vectorize): whole blocks, partial blocks at the edges
# (40, 100, 37, 33), batch dims, and a transpose of outer dims only (not
# blocked); on 1 and 2 threads.
@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("shape,perm", [
    ((64, 48), [1, 0]), ((100, 37), [1, 0]), ((2, 40, 32), [0, 2, 1]),
    ((16, 4, 64, 32), [0, 1, 3, 2]), ((3, 17, 33), [2, 1, 0]),
    ((4, 8, 32), [1, 0, 2])])
def test_transpose_blocked(tmp_path, rng, shape, perm, threads):
    check_f32_transpose(tmp_path, rng, shape, perm, threads)


def check_f32_transpose(tmp_path, rng, shape, perm, threads=1):
    """A static f32 paddle.transpose of random data against numpy."""
    x = random_array(rng, shape, np.float32)
    out_shape = [shape[p] for p in perm]
    t_in, t_out = tensor_type(shape, np.float32), tensor_type(out_shape, np.float32)
    body = (f"  %0 = paddle.transpose %arg0 perm = {fmt(perm)} : {t_in} -> {t_out}\n"
            f"  return %0 : {t_out}")
    (r,) = run_module(tmp_path, f"func.func @main(%arg0: {t_in}) -> {t_out} {{\n{body}\n}}",
                      [x], extra_args=["--threads", str(threads)])
    check(r, np.transpose(x, perm))


# Transposes that only move dims of size 1 are lowered as reshapes (no
# copy): BERT's [1, 128, 768] <-> [128, 1, 768], unit dims on both sides,
# all dims unit, and next to dims that do change order (a copy).
@pytest.mark.parametrize("shape,perm", [
    ((1, 12, 7), [1, 0, 2]), ((12, 1, 7), [1, 0, 2]), ((1, 5, 1, 3), [2, 1, 3, 0]),
    ((1, 1), [1, 0]), ((1, 4, 1, 3, 6), [3, 1, 2, 0, 4])])
def test_transpose_of_unit_dims(tmp_path, rng, shape, perm):
    check_f32_transpose(tmp_path, rng, shape, perm)


# -----------------------------------------------------------------------------
# slice
# -----------------------------------------------------------------------------

def slice_size(start, limit, stride, n):
    lo, hi = min(start, n), min(limit, n)
    return max(0, -(-(hi - lo) // stride))


@pytest.mark.parametrize("case", range(14))
def test_slice(tmp_path, rng, case):
    dtype = DTYPES[case % len(DTYPES)]
    shape = random_shape(rng, int(rng.integers(1, 5)), 1, 7)
    dynamic = random_dynamic(rng, len(shape)) if case % 2 else ()
    x = random_array(rng, shape, dtype)
    # Limits and starts may run past the end (clamped), strides go up to 3.
    start = [int(rng.integers(0, n + 2)) for n in shape]
    limit = [int(rng.integers(0, n + 4)) for n in shape]
    stride = [int(rng.integers(1, 4)) for _ in shape]
    out = [slice_size(a, b, s, n)
           for a, b, s, n in zip(start, limit, stride, shape)]
    r = run_single(
        tmp_path,
        f"paddle.slice {{args}} start = {fmt(start)} limit = {fmt(limit)}"
        f" stride = {fmt(stride)}",
        [x], [tensor_type(shape, dtype, dynamic)],
        tensor_type(out, dtype, dynamic))
    expected = x[tuple(slice(a, b, s) for a, b, s in zip(start, limit, stride))]
    check(r, expected)


# -----------------------------------------------------------------------------
# concat
# -----------------------------------------------------------------------------

@pytest.mark.parametrize("count", [2, 3])
@pytest.mark.parametrize("case", range(6))
def test_concat(tmp_path, rng, count, case):
    dtype = DTYPES[(count + case) % len(DTYPES)]
    rank = int(rng.integers(1, 5))
    axis = int(rng.integers(-rank, rank))
    a = axis % rank
    base = random_shape(rng, rank)
    shapes, dynamics = [], []
    for _ in range(count):
        s = list(base)
        s[a] = int(rng.integers(0, 5))
        shapes.append(tuple(s))
        dynamics.append(random_dynamic(rng, rank) if case % 3 else ())
    xs = [random_array(rng, s, dtype) for s in shapes]
    out = list(base)
    out[a] = sum(s[a] for s in shapes)
    dyn_out = set()
    for d in range(rank):
        if d == a and any(d in dyn for dyn in dynamics):
            dyn_out.add(d)
        if d != a and all(d in dyn for dyn in dynamics):
            dyn_out.add(d)
    r = run_single(tmp_path, f"paddle.concat {{args}} axis = {axis}", xs,
                   [tensor_type(s, dtype, dyn)
                    for s, dyn in zip(shapes, dynamics)],
                   tensor_type(out, dtype, dyn_out))
    check(r, np.concatenate(xs, axis=axis))


# -----------------------------------------------------------------------------
# pad
# -----------------------------------------------------------------------------

PAD_VALUES = {np.float32: "-2.5 : f32", np.float64: "7.0 : f64",
              np.int32: "-3 : i32", np.int8: "9 : i8", np.bool_: "true",
              np.float16: "1.5 : f16", np.int64: "-8 : i64"}
PAD_NUMPY = {np.float32: -2.5, np.float64: 7.0, np.int32: -3, np.int8: 9,
             np.bool_: True, np.float16: 1.5, np.int64: -8}


@pytest.mark.parametrize("case", range(14))
def test_pad(tmp_path, rng, case):
    dtype = DTYPES[case % len(DTYPES)]
    shape = random_shape(rng, int(rng.integers(1, 5)), 0, 4)
    dynamic = random_dynamic(rng, len(shape)) if case % 2 else ()
    x = random_array(rng, shape, dtype)
    low = [int(rng.integers(0, 3)) for _ in shape]
    high = [int(rng.integers(0, 3)) for _ in shape]
    out = [n + l + h for n, l, h in zip(shape, low, high)]
    r = run_single(
        tmp_path,
        f"paddle.pad {{args}} low = {fmt(low)} high = {fmt(high)}"
        f" value = {PAD_VALUES[dtype]}",
        [x], [tensor_type(shape, dtype, dynamic)],
        tensor_type(out, dtype, dynamic))
    check(r, np.pad(x, list(zip(low, high)),
                    constant_values=PAD_NUMPY[dtype]))


# -----------------------------------------------------------------------------
# gather
# -----------------------------------------------------------------------------

def gather_types(shape, ishape, axis, dtype, itype, dyn, idyn):
    a = axis % len(shape)
    out = list(shape[:a]) + list(ishape) + list(shape[a + 1:])
    k = len(ishape)
    dyn_out = ({d for d in dyn if d < a} | {a + d for d in idyn}
               | {d + k - 1 for d in dyn if d > a})
    return (tensor_type(shape, dtype, dyn), tensor_type(ishape, itype, idyn),
            tensor_type(out, dtype, dyn_out))


@pytest.mark.parametrize("itype", [np.int32, np.int64])
@pytest.mark.parametrize("case", range(8))
def test_gather(tmp_path, rng, itype, case):
    dtype = DTYPES[case % len(DTYPES)]
    rank = int(rng.integers(1, 4))
    axis = int(rng.integers(-rank, rank))
    shape = random_shape(rng, rank)
    ishape = random_shape(rng, int(rng.integers(0, 3)))
    n = shape[axis]
    x = random_array(rng, shape, dtype)
    # In range for numpy: negative ones count from the end.
    idx = rng.integers(-n, n, size=ishape).astype(itype)
    dyn = random_dynamic(rng, rank) if case % 2 else ()
    idyn = random_dynamic(rng, len(ishape)) if case % 2 else ()
    tx, ti, tr = gather_types(shape, ishape, axis, dtype, itype, dyn, idyn)
    r = run_single(tmp_path, f"paddle.gather {{args}} axis = {axis}",
                   [x, idx], [tx, ti], tr)
    check(r, np.take(x, idx, axis=axis))


@pytest.mark.parametrize("bad", [-6, 5, 100, -(2**40)])
def test_gather_out_of_range_fails(tmp_path, rng, bad):
    """Indices in [-n, n) count from either end; any other is an error, as
    in numpy and ONNX (it used to be clamped)."""
    from paddle_testing import RUNTIME_CHECK_ERROR, PaddleRunError
    x = random_array(rng, (3, 5), np.float32)
    good = np.array([-5, -1, 0, 4], dtype=np.int64)
    tx, ti, tr = gather_types(x.shape, good.shape, 1, np.float32, np.int64,
                              (1,), (0,))
    (tmp_path / "ok").mkdir()
    r = run_single(tmp_path / "ok", "paddle.gather {args} axis = 1", [x, good],
                   [tx, ti], tr)
    check(r, np.take(x, good, axis=1))
    idx = np.append(good, bad)
    with pytest.raises(IndexError):
        np.take(x, idx, axis=1)
    with pytest.raises(PaddleRunError, match=RUNTIME_CHECK_ERROR +
                       r"paddle\.gather: an index is out of range for dim 1 of x"):
        run_single(tmp_path, "paddle.gather {args} axis = 1", [x, idx],
                   [tx, ti], tr)


@pytest.mark.parametrize("index,axis", [(1, 0), (-1, 1), (-4, 1), (4, 2), (0, -1)])
def test_gather_constant_scalar_index(tmp_path, rng, index, axis):
    """A constant scalar index is a slice (a view, no copy loop), wrapped
    once as indices read at run time."""
    x = random_array(rng, (3, 4, 5), np.float32)
    a = axis % 3
    out = [d for i, d in enumerate(x.shape) if i != a]
    (r,) = run_module(tmp_path, constant_index_gather(x, index, axis, out), [x])
    np.testing.assert_array_equal(r, np.take(x, index, axis=a))


@pytest.mark.parametrize("index,axis", [(-5, 1), (7, 2), (3, 0)])
def test_gather_constant_scalar_index_out_of_range(tmp_path, rng, index, axis):
    from paddle_testing import RUNTIME_CHECK_ERROR, PaddleRunError
    x = random_array(rng, (3, 4, 5), np.float32)
    a = axis % 3
    out = [d for i, d in enumerate(x.shape) if i != a]
    with pytest.raises(IndexError):
        np.take(x, index, axis=a)
    with pytest.raises(PaddleRunError, match=RUNTIME_CHECK_ERROR +
                       rf"paddle\.gather: an index is out of range for dim {a} "
                       rf"of x \(size {x.shape[a]}\)"):
        run_module(tmp_path, constant_index_gather(x, index, axis, out), [x])


def constant_index_gather(x, index, axis, out):
    tx, tr = tensor_type(x.shape, np.float32), tensor_type(out, np.float32)
    return (f"func.func @main(%x: {tx}) -> {tr} {{\n"
            f"  %i = paddle.constant dense<{index}> : tensor<i64>\n"
            f"  %0 = paddle.gather %x, %i axis = {axis} : {tx}, tensor<i64> -> {tr}\n"
            f"  return %0 : {tr}\n}}\n")


# -----------------------------------------------------------------------------
# scatter_add
# -----------------------------------------------------------------------------

def scatter_reference(x, idx, updates, axis):
    result = x.copy()
    np.add.at(result, (slice(None),) * (axis % x.ndim) + (idx,), updates)
    return result


@pytest.mark.parametrize("itype", [np.int32, np.int64])
@pytest.mark.parametrize("case", range(8))
def test_scatter_add(tmp_path, rng, itype, case):
    dtype = [np.float32, np.float64, np.int32, np.int8][case % 4]
    rank = int(rng.integers(1, 4))
    axis = int(rng.integers(-rank, rank))
    a = axis % rank
    shape = random_shape(rng, rank)
    ishape = random_shape(rng, int(rng.integers(0, 3)), 1, 6)
    n = shape[a]
    x = random_array(rng, shape, dtype)
    # Few distinct values: indices repeat, from either end.
    idx = rng.integers(-n, n, size=ishape).astype(itype)
    ushape = tuple(shape[:a]) + ishape + tuple(shape[a + 1:])
    updates = random_array(rng, ushape, dtype)
    dyn = random_dynamic(rng, rank) if case % 2 else ()
    idyn = random_dynamic(rng, len(ishape)) if case % 2 else ()
    udyn = random_dynamic(rng, len(ushape)) if case % 2 else ()
    arg_types = [tensor_type(shape, dtype, dyn),
                 tensor_type(ishape, itype, idyn),
                 tensor_type(ushape, dtype, udyn)]
    r = run_single(tmp_path, f"paddle.scatter_add {{args}} axis = {axis}",
                   [x, idx, updates], arg_types,
                   tensor_type(shape, dtype, dyn))
    check(r, scatter_reference(x, idx, updates, axis))


def test_scatter_add_repeated(tmp_path):
    x = np.zeros((4, 2), dtype=np.float32)
    idx = np.array([1, 1, -1, 3, -4, 1], dtype=np.int32)
    updates = np.arange(12, dtype=np.float32).reshape(6, 2)
    r = run_single(tmp_path, "paddle.scatter_add {args} axis = 0",
                   [x, idx, updates],
                   ["tensor<4x2xf32>", "tensor<?xi32>", "tensor<?x2xf32>"],
                   "tensor<4x2xf32>")
    # -1 wraps to 3, -4 to 0.
    expected = np.zeros((4, 2), dtype=np.float32)
    expected[0] = updates[4]
    expected[1] = updates[0] + updates[1] + updates[5]
    expected[3] = updates[2] + updates[3]
    check(r, expected)


@pytest.mark.parametrize("bad", [4, -5])
def test_scatter_add_out_of_range_fails(tmp_path, bad):
    """As numpy.add.at (and ONNX ScatterElements), an index outside
    [-n, n) is an error; it used to be skipped."""
    from paddle_testing import RUNTIME_CHECK_ERROR, PaddleRunError
    x = np.zeros((4, 2), dtype=np.float32)
    idx = np.array([1, bad, 0], dtype=np.int64)
    updates = np.ones((3, 2), dtype=np.float32)
    with pytest.raises(IndexError):
        np.add.at(x.copy(), idx, updates)
    with pytest.raises(PaddleRunError, match=RUNTIME_CHECK_ERROR +
                       r"paddle\.scatter_add: an index is out of range for "
                       r"dim 0 of x \(size 4\)"):
        run_single(tmp_path, "paddle.scatter_add {args} axis = 0",
                   [x, idx, updates],
                   ["tensor<4x2xf32>", "tensor<?xi64>", "tensor<?x2xf32>"],
                   "tensor<4x2xf32>")


# -----------------------------------------------------------------------------
# Sizes that only run time knows are checked there
# -----------------------------------------------------------------------------

MISMATCHES = {
    "concat": ("paddle.concat {args} axis = 1",
               [np.zeros((2, 2), np.float32), np.zeros((3, 3), np.float32)],
               ["tensor<2x?xf32>", "tensor<?x3xf32>"], "tensor<2x?xf32>"),
    "reshape": ("paddle.reshape {args} shape = [3, 2]",
                [np.zeros((3, 3), np.float32)], ["tensor<?x3xf32>"],
                "tensor<3x2xf32>"),
    "reshape_inferred": ("paddle.reshape {args} shape = [-1, 2]",
                         [np.zeros((3, 3), np.float32)], ["tensor<?x3xf32>"],
                         "tensor<?x2xf32>"),
    "broadcast_to": ("paddle.broadcast_to {args} shape = [2, 4]",
                     [np.zeros((1,), np.float32)], ["tensor<?xf32>"],
                     "tensor<2x4xf32>"),
    "gather": ("paddle.gather {args} axis = 0",
               [np.zeros((0,), np.float32), np.zeros((2,), np.int32)],
               ["tensor<?xf32>", "tensor<2xi32>"], "tensor<2xf32>"),
    "scatter_add": ("paddle.scatter_add {args} axis = 0",
                    [np.zeros((4,), np.float32), np.zeros((2,), np.int32),
                     np.zeros((3,), np.float32)],
                    ["tensor<4xf32>", "tensor<?xi32>", "tensor<?xf32>"],
                    "tensor<4xf32>"),
}


# Inputs of the same modules whose sizes agree: these run.
MATCHES = {
    "concat": [np.zeros((2, 2), np.float32), np.zeros((2, 3), np.float32)],
    "reshape": [np.zeros((2, 3), np.float32)],
    "reshape_inferred": [np.zeros((4, 3), np.float32)],
    "broadcast_to": [np.zeros((4,), np.float32)],
    "gather": [np.zeros((1,), np.float32), np.zeros((2,), np.int32)],
    "scatter_add": [np.zeros((4,), np.float32), np.zeros((3,), np.int32),
                    np.zeros((3,), np.float32)],
}


@pytest.mark.parametrize("name", sorted(MISMATCHES))
def test_runtime_size_mismatch_fails(tmp_path, name):
    from paddle_testing import RUNTIME_CHECK_ERROR, PaddleRunError
    op_text, inputs, arg_types, result_type = MISMATCHES[name]
    # The module runs when the sizes agree, and stops when they do not.
    (tmp_path / "ok").mkdir()
    (tmp_path / "bad").mkdir()
    run_single(tmp_path / "ok", op_text, MATCHES[name], arg_types,
               result_type)
    with pytest.raises(PaddleRunError, match=RUNTIME_CHECK_ERROR):
        run_single(tmp_path / "bad", op_text, inputs, arg_types, result_type)


def test_gather_empty_indices_from_empty_dim(tmp_path):
    x = np.zeros((0, 3), np.float32)
    idx = np.zeros((0,), np.int64)
    r = run_single(tmp_path, "paddle.gather {args} axis = 0", [x, idx],
                   ["tensor<?x3xf32>", "tensor<?xi64>"], "tensor<?x3xf32>")
    check(r, np.take(x, idx, axis=0))
