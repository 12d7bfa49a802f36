"""paddle_mlir._core: building functions op by op, compiling and running
them, compared with numpy (float32: rtol 1e-5, atol 1e-5; integers exact)."""

import numpy as np
import pytest

from paddle_mlir import _core as C

TOL = dict(rtol=1e-5, atol=1e-5)


def test_add_tanh_matmul_against_numpy(ctx, rng):
    m = C.Module(ctx)
    fb = m.add_function("f", ["tensor<5x7xf32>", "tensor<5x7xf32>"])
    a, b = fb.args
    assert fb.name == "f"
    (s,) = fb.op("paddle.add", [a, b], loc=("model.py", 3, 9))
    (t,) = fb.op("paddle.tanh", [s])
    w = rng.standard_normal((7, 4)).astype(np.float32)
    c = fb.constant(w)
    (r,) = fb.op("paddle.matmul", [t, c])
    assert (r.type, r.shape, r.dtype, r.rank) == ("tensor<5x4xf32>", (5, 4),
                                                  "f32", 2)
    fb.ret([r])
    m.verify()
    assert m.function_names() == ["f"]
    exe = C.compile(m)
    assert exe.functions() == ["f"]
    x = rng.standard_normal((5, 7)).astype(np.float32)
    y = rng.standard_normal((5, 7)).astype(np.float32)
    (out,) = exe.run("f", [x, y])
    np.testing.assert_allclose(out, np.tanh(x + y) @ w, **TOL)
    # The result owns the runtime's buffer: no copy, a capsule as base.
    assert not out.flags.owndata and out.base is not None
    assert out.flags.c_contiguous and out.flags.writeable
    # The module stays paddle-level after compile (a clone was lowered).
    assert "paddle.matmul" in str(m)


def test_inferred_types_with_attributes_and_dynamic_dims(ctx, rng):
    m = C.Module(ctx)
    fb = m.add_function("g", ["tensor<?x6xf32>"])
    (x,) = fb.args
    assert x.shape == (None, 6)
    (s,) = fb.op("paddle.reduce_sum", [x],
                 attributes={"axes": "array<i64: 1>", "keepdims": "unit"})
    assert s.shape == (None, 1)
    (t,) = fb.op("paddle.transpose", [x], {"perm": "array<i64: 1, 0>"})
    assert t.type == "tensor<6x?xf32>"
    fb.ret([s, t])
    exe = C.compile(m)
    sig = exe.signature("g")
    assert sig == {"inputs": [("f32", (None, 6))],
                   "outputs": [("f32", (None, 1)), ("f32", (6, None))],
                   "aliases": {}}
    for rows in (1, 3, 8):
        a = rng.standard_normal((rows, 6)).astype(np.float32)
        s_out, t_out = exe.run("g", [a])
        np.testing.assert_allclose(s_out, a.sum(1, keepdims=True), **TOL)
        np.testing.assert_array_equal(t_out, a.T)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16,
                                   np.int8, np.int32, np.int64, np.bool_])
def test_constant_round_trips_every_dtype(ctx, rng, dtype):
    m = C.Module(ctx)
    fb = m.add_function("k", [])
    if dtype == np.bool_:
        value = rng.random((3, 5)) > 0.5
    else:
        value = (rng.standard_normal((3, 5)) * 20).astype(dtype)
    c = fb.constant(value)
    assert c.shape == (3, 5)
    fb.ret([c])
    (out,) = C.compile(m).run("k", [])
    assert out.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(out, value)


def test_explicit_result_types_bool_io_and_erase(ctx, rng):
    m = C.Module(ctx)
    m.add_function("scratch", ["tensor<4xf32>"])
    fb = m.add_function("sel", ["tensor<4xi1>", "tensor<4xf32>",
                                "tensor<4xf32>"])
    (s,) = fb.op("paddle.select", fb.args, result_types=["tensor<4xf32>"])
    fb.ret([s])
    # An unfinished function would not compile; erasing it removes it.
    m.erase_function("scratch")
    assert m.function_names() == ["sel"]
    exe = C.compile(m)
    c = np.array([True, False, False, True])
    a = rng.standard_normal(4).astype(np.float32)
    b = rng.standard_normal(4).astype(np.float32)
    (out,) = exe.run("sel", [c, a, b])
    np.testing.assert_array_equal(out, np.where(c, a, b))


def test_upstream_dialect_ops(ctx, rng):
    """op() builds ops of the upstream dialects too (their traits and type
    inference come from libMLIR): rows of a dynamic tensor as an f32."""
    m = C.Module(ctx)
    fb = m.add_function("rows", ["tensor<?x3xf32>"])
    (x,) = fb.args
    (zero,) = fb.op("arith.constant", [], {"value": "0 : index"})
    (n,) = fb.op("tensor.dim", [x, zero])
    (i,) = fb.op("arith.index_cast", [n], result_types=["i64"])
    (f,) = fb.op("arith.sitofp", [i], result_types=["f32"])
    (t,) = fb.op("tensor.from_elements", [f], result_types=["tensor<1xf32>"])
    (y,) = fb.op("paddle.add", [x, t])
    fb.ret([y])
    exe = C.compile(m)
    a = rng.standard_normal((5, 3)).astype(np.float32)
    np.testing.assert_allclose(exe.run("rows", [a])[0], a + 5.0, **TOL)


def test_values_are_hashable_and_compare_by_identity(ctx):
    m = C.Module(ctx)
    fb = m.add_function("h", ["tensor<2xf32>"])
    (a,) = fb.args
    (a2,) = fb.args
    (n,) = fb.op("paddle.neg", [a])
    assert a == a2 and hash(a) == hash(a2) and a != n
    assert len({a, a2, n}) == 2
    assert a != "not a value"


def test_strided_and_converted_inputs(ctx, rng):
    m = C.Module(ctx)
    fb = m.add_function("f", ["tensor<3x4xf32>", "tensor<3x4xf32>"])
    fb.ret(fb.op("paddle.sub", fb.args))
    exe = C.compile(m)
    big = rng.standard_normal((4, 3)).astype(np.float32)
    x = big.T  # a transposed view: the runtime packs it
    assert not x.flags.c_contiguous
    y = [[1.0] * 4] * 3  # a nested list converts to f32
    (out,) = exe.run("f", [x, y])
    np.testing.assert_allclose(out, x - 1.0, **TOL)


def test_threads():
    n = C.get_num_threads()
    try:
        C.set_num_threads(1)
        assert C.get_num_threads() == 1
        with pytest.raises(ValueError):
            C.set_num_threads(0)
    finally:
        C.set_num_threads(n)


def test_fresh_results_are_handed_over_without_a_copy(ctx, rng):
    # Compiled code allocates a result with the alignment it asks for, so the
    # runtime adopts the buffer. A 1M-element result, where malloc returns a
    # pointer 16 bytes past a page, was copied out on every call before.
    import ctypes
    copied = ctypes.CDLL(C.__file__).paddle_invoke_copied_results
    copied.restype = ctypes.c_int64
    n = 1 << 20
    m = C.Module(ctx)
    fb = m.add_function("f", [f"tensor<{n}xf32>", f"tensor<{n}xf32>"])
    (s,) = fb.op("paddle.add", list(fb.args))
    fb.ret([s])
    exe = C.compile(m)
    x = rng.standard_normal(n).astype(np.float32)
    y = rng.standard_normal(n).astype(np.float32)
    before = copied()
    for _ in range(3):
        (out,) = exe.run("f", [x, y])
        np.testing.assert_array_equal(out, x + y)
    assert copied() == before
