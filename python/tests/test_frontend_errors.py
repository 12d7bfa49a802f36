"""Errors in user code raise Python exceptions naming the user's file:line."""

import numpy as np
import pytest

import paddle_mlir as pm

HERE = __file__


def _line_of(marker):
    for i, line in enumerate(open(HERE), 1):
        if marker in line and "_line_of" not in line:
            return i
    raise AssertionError(marker)


def _starts_with_location(exc, marker):
    msg = str(exc.value)
    want = f"{HERE}:{_line_of(marker)}"
    assert msg.startswith(want), (msg, want)


def test_shape_mismatch_names_user_line():
    def f(x, y):
        return x + y  # MARK-add

    with pytest.raises(pm.ShapeError) as e:
        pm.jit(f)(np.ones(3, np.float32), np.ones(4, np.float32))
    _starts_with_location(e, "MARK-add")
    assert "(3,) (4,)" in str(e.value)


def test_matmul_mismatch():
    def f(x, y):
        return x @ y  # MARK-matmul

    with pytest.raises(pm.ShapeError) as e:
        pm.jit(f)(np.ones((2, 3), np.float32), np.ones((4, 5), np.float32))
    _starts_with_location(e, "MARK-matmul")


def test_unsupported_dtype():
    with pytest.raises(pm.DTypeError) as e:
        pm.jit(lambda x: x * 2)(np.ones(3, np.complex64))  # MARK-complex
    _starts_with_location(e, "MARK-complex")
    assert "complex64" in str(e.value)
    with pytest.raises(pm.DTypeError) as e:
        pm.exp(np.ones(3, np.uint16))  # MARK-uint
    _starts_with_location(e, "MARK-uint")


def test_dtype_rejected_as_numpy_does():
    def f(x):
        return x & x  # MARK-and

    with pytest.raises(pm.DTypeError) as e:
        pm.jit(f)(np.ones(3, np.float32))
    _starts_with_location(e, "MARK-and")


def test_wrong_number_of_args():
    def f(x, y):
        return x + y

    with pytest.raises(TypeError) as e:
        pm.jit(f)(np.ones(3, np.float32))  # MARK-nargs
    _starts_with_location(e, "MARK-nargs")
    assert "y" in str(e.value)


def test_reshape_and_axis_errors():
    with pytest.raises(pm.ShapeError) as e:
        pm.jit(lambda x: x.reshape(4, 4))(np.ones(6, np.float32))  # MARK-r
    _starts_with_location(e, "MARK-r")
    with pytest.raises(pm.ShapeError, match="out of bounds"):
        pm.sum(np.ones((2, 3), np.float32), axis=2)


def test_unsupported_indexing():
    x = np.ones((4, 4), np.float32)
    with pytest.raises(pm.ShapeError, match="negative or zero strides"):
        pm.jit(lambda a: a[::-1])(x)
    with pytest.raises(pm.ShapeError, match="boolean mask"):
        pm.jit(lambda a: a[a > 0])(x)
    with pytest.raises(pm.ShapeError, match="out of bounds"):
        pm.jit(lambda a: a[4])(x)
    with pytest.raises(pm.ShapeError, match="too many indices"):
        pm.jit(lambda a: a[0, 0, 0])(x)


def test_tracer_needs_concrete_value():
    def f(x):
        if x.sum() > 0:  # MARK-bool
            return x
        return -x

    with pytest.raises(pm.TracerError) as e:
        pm.jit(f)(np.ones(3, np.float32))
    _starts_with_location(e, "MARK-bool")
    assert "pm.where" in str(e.value)


def test_leaked_tracer():
    leaked = []

    @pm.jit
    def f(x):
        leaked.append(x)
        return x

    f(np.ones(2, np.float32))
    with pytest.raises(pm.TracerError, match="escaped"):
        pm.jit(lambda y: y + leaked[0])(np.ones(2, np.float32))


def test_grad_errors():
    with pytest.raises(pm.ShapeError, match="one scalar"):
        pm.grad(lambda x: x * 2)(np.ones(3, np.float32))
    with pytest.raises(pm.DTypeError, match="float"):
        pm.grad(lambda x: pm.sum(x))(np.ones(3, np.int32))


def test_error_in_op_verifier_has_location():
    # A case only the op verifier catches: conv2d with a too-large kernel.
    def f(x, w):
        return pm.conv2d(x, w)  # MARK-conv

    with pytest.raises(pm.ShapeError) as e:
        pm.jit(f)(np.ones((1, 1, 2, 2), np.float32),
                  np.ones((1, 1, 3, 3), np.float32))
    _starts_with_location(e, "MARK-conv")
