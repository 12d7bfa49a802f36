"""The array operations pm.nn and pm.optim are written in.

Every layer, loss and optimizer computes through these functions only. Each
is the frontend op of the same name (paddle_mlir._ops), so there is one
behaviour: traced inside `pm.jit` / `pm.grad` a call becomes paddle ops; on
numpy arrays it runs eagerly the way every frontend op does, compiled once
per signature (arrays as arguments, the rest static) and run, so an eager
forward computes what the compiled model computes, the dropout masks of
`rng_uniform` included. The tests compare both with an independent numpy
reference (python/tests/nn_numpy_reference.py).
"""

import numpy as np


def _pm():
    # Imported lazily: the package's __init__ imports pm.nn.
    import paddle_mlir

    return paddle_mlir


# ------------------------------------------------------------- elementwise
def exp(x):
    return _pm().exp(x)


def log(x):
    return _pm().log(x)


def sqrt(x):
    return _pm().sqrt(x)


def tanh(x):
    return _pm().tanh(x)


def erf(x):
    return _pm().erf(x)


def sigmoid(x):
    return 1.0 / (1.0 + _pm().exp(-x))


def gelu(x):
    """The exact (erf) GELU: one paddle.gelu, whose gradient rule recomputes
    from x (the decomposed form saved its erf and products for the backward
    pass, four tensors each read again there)."""
    return _pm().gelu(x)


def softmax(x, axis=-1):
    return _pm().softmax(x, axis=axis)


def log_softmax(x, axis=-1):
    return _pm().log_softmax(x, axis=axis)


def layer_norm(x, axes, weight=None, bias=None, eps=1e-5):
    """(x - mean) / sqrt(var + eps) [* weight + bias] over `axes` (the biased
    variance); weight and bias broadcast against x."""
    return _pm().layer_norm(x, weight, bias, axis=axes, epsilon=eps)


def maximum(a, b):
    return _pm().maximum(a, b)


def where(cond, a, b):
    return _pm().where(cond, a, b)


def take(x, indices, axis):
    """numpy.take; an index outside [-n, n) is an error of the gather."""
    return _pm().take(x, indices, axis=axis)


def equal(a, b):
    return _pm().equal(a, b)


def greater_equal(a, b):
    return _pm().greater_equal(a, b)


def astype(x, dtype):
    return _pm().astype(x, dtype)


# --------------------------------------------------------------- reductions
def sum(x, axis=None, keepdims=False):  # noqa: A001 (numpy name on purpose)
    return _pm().sum(x, axis=axis, keepdims=keepdims)


def mean(x, axis=None, keepdims=False):
    return _pm().mean(x, axis=axis, keepdims=keepdims)


def max(x, axis=None, keepdims=False):  # noqa: A001
    return _pm().max(x, axis=axis, keepdims=keepdims)


# -------------------------------------------------------------------- shape
def shape(x):
    return tuple(x.shape)


def reshape(x, new_shape):
    return _pm().reshape(x, tuple(new_shape))


def transpose(x, axes):
    return _pm().transpose(x, tuple(axes))


def slice_axis(x, axis, start, stop):
    """x[..., start:stop, ...] along `axis` (static bounds)."""
    index = [slice(None)] * len(x.shape)
    index[axis] = slice(start, stop)
    return x[tuple(index)]


def matmul(a, b):
    return _pm().matmul(a, b)


def arange(n, dtype=np.int64):
    """[0, n) as a constant: the same array in both modes."""
    return np.arange(n, dtype=dtype)


# --------------------------------------------------------------- nn kernels
def conv2d(x, w, stride=(1, 1), padding=(0, 0, 0, 0), dilation=(1, 1), groups=1):
    """NCHW / OIHW cross-correlation; padding is [top, left, bottom, right]."""
    return _pm().conv2d(x, w, stride=stride, padding=padding, dilation=dilation,
                        groups=groups)


def max_pool2d(x, kernel, stride, padding=(0, 0, 0, 0)):
    return _pm().max_pool2d(x, kernel, stride=stride, padding=padding)


def avg_pool2d(x, kernel, stride, padding=(0, 0, 0, 0)):
    """Padded zeros count in the average (PyTorch count_include_pad=True)."""
    return _pm().avg_pool2d(x, kernel, stride=stride, padding=padding)


# ---------------------------------------------------------------------- rng
def rng_uniform(seed, shape_, dtype=np.float32):
    """`paddle.rng_uniform` in [0, 1): a pure function of the i64 `seed`
    (a rank-0 array) and of each element's position."""
    return _pm().random_uniform(seed, tuple(shape_), dtype=dtype)
