"""Buffer donation (`paddle.aliasing_output = N`): the compiled call writes
result N into the donated argument's numpy buffer and returns the other
results only. Numbers are compared with numpy (float32, rtol 1e-6)."""

import numpy as np
import pytest

from paddle_mlir import _core as C

TOL = dict(rtol=1e-6, atol=1e-6)


def sgd_module(ctx, also_return_update=False):
    """w' = w - 0.5 * g, donated to w; returns (sum(g), w')."""
    m = C.Module(ctx)
    fb = m.add_function("step", ["tensor<64x32xf32>", "tensor<64x32xf32>"])
    w, g = fb.args
    half = fb.constant(np.array(0.5, np.float32))
    (scaled,) = fb.op("paddle.mul", [g, half])
    (new_w,) = fb.op("paddle.sub", [w, scaled])
    (total,) = fb.op("paddle.reduce_sum", [g], {"axes": "array<i64: 0, 1>"})
    results = [total, new_w] + ([new_w] if also_return_update else [])
    fb.ret(results)
    m.set_arg_attr("step", 0, "paddle.aliasing_output", "1 : i64")
    return m


def test_update_is_written_in_place(rng):
    exe = C.compile(sgd_module(C.Context()))
    assert exe.signature("step")["aliases"] == {0: 1}
    assert len(exe.signature("step")["outputs"]) == 1
    w = rng.standard_normal((64, 32)).astype(np.float32)
    g = rng.standard_normal((64, 32)).astype(np.float32)
    w0, g0, address = w.copy(), g.copy(), w.ctypes.data
    for step in range(3):
        (total,) = exe.run("step", [w, g])
        np.testing.assert_allclose(total, g0.sum(), rtol=1e-5)
        np.testing.assert_allclose(w, w0 - 0.5 * (step + 1) * g0, **TOL)
    assert w.ctypes.data == address
    np.testing.assert_array_equal(g, g0)  # not donated: never written


def test_donated_result_also_returned(rng):
    """The update is returned a second time: that result is a copy of the
    updated argument, which still receives it in place."""
    exe = C.compile(sgd_module(C.Context(), also_return_update=True))
    w = rng.standard_normal((64, 32)).astype(np.float32)
    g = rng.standard_normal((64, 32)).astype(np.float32)
    expected = w - 0.5 * g
    total, again = exe.run("step", [w, g])
    np.testing.assert_allclose(w, expected, **TOL)
    np.testing.assert_allclose(again, expected, **TOL)
    assert again.ctypes.data != w.ctypes.data


def test_invalid_donation_is_a_compile_error():
    m = sgd_module(C.Context())
    m.set_arg_attr("step", 1, "paddle.aliasing_output", "1 : i64")
    with pytest.raises(C.MLIRError,
                       match="argument 1: result 1 is already donated"):
        C.compile(m)
