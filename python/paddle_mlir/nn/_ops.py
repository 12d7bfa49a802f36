"""The array operations pm.nn and pm.optim are written in.

Every layer, loss and optimizer computes through these functions only, so
the same code runs two ways:

- eagerly on numpy arrays (no compiler involved: handy for inspection, and
  the behaviour the compiled code must reproduce), and
- traced, on the frontend's tracer values inside `pm.jit` / `pm.grad`,
  where each call becomes paddle ops.

Dispatch is by argument type: any non-numpy argument means "traced". The
numpy side follows the paddle op semantics documented in
docs/generated/PaddleDialect.md (notably `rng_uniform`, bit for bit), so an
eager run and a compiled run of a model agree.
"""

import math

import numpy as np

_NUMPY_TYPES = (np.ndarray, np.generic, int, float, bool)


def _is_numpy(*xs):
    return all(isinstance(x, _NUMPY_TYPES) or x is None for x in xs)


def _pm():
    # Imported lazily: the package's __init__ imports pm.nn.
    import paddle_mlir

    return paddle_mlir


# ------------------------------------------------------------- elementwise
def exp(x):
    return np.exp(x) if _is_numpy(x) else _pm().exp(x)


def log(x):
    return np.log(x) if _is_numpy(x) else _pm().log(x)


def sqrt(x):
    return np.sqrt(x) if _is_numpy(x) else _pm().sqrt(x)


def tanh(x):
    return np.tanh(x) if _is_numpy(x) else _pm().tanh(x)


def erf(x):
    if _is_numpy(x):
        return np.vectorize(math.erf, otypes=[x.dtype])(x)
    return _pm().erf(x)


def sigmoid(x):
    if _is_numpy(x):
        return (1.0 / (1.0 + np.exp(-x))).astype(x.dtype)
    return 1.0 / (1.0 + _pm().exp(-x))


def gelu(x):
    """The exact (erf) GELU. Traced: one paddle.gelu, whose gradient rule
    recomputes from x; the decomposed form saved its erf and products for
    the backward pass, four tensors each read again there."""
    if _is_numpy(x):
        return (0.5 * x * (1.0 + erf(x * (1.0 / math.sqrt(2.0))))).astype(x.dtype)
    return _pm().gelu(x)


def softmax(x, axis=-1):
    if _is_numpy(x):
        e = np.exp(x - np.max(x, axis=axis, keepdims=True))
        return e / np.sum(e, axis=axis, keepdims=True)
    return _pm().softmax(x, axis=axis)


def log_softmax(x, axis=-1):
    if _is_numpy(x):
        shifted = x - np.max(x, axis=axis, keepdims=True)
        return shifted - np.log(np.sum(np.exp(shifted), axis=axis, keepdims=True))
    return _pm().log_softmax(x, axis=axis)


def layer_norm(x, axes, weight=None, bias=None, eps=1e-5):
    """(x - mean) / sqrt(var + eps) [* weight + bias] over `axes` (the biased
    variance); weight and bias broadcast against x."""
    if _is_numpy(x, weight, bias):
        mean = np.mean(x, axis=axes, keepdims=True)
        centered = x - mean
        var = np.mean(centered * centered, axis=axes, keepdims=True)
        y = centered / np.sqrt(var + eps)
        if weight is not None:
            y = y * weight
        if bias is not None:
            y = y + bias
        return y.astype(x.dtype)
    return _pm().layer_norm(x, weight, bias, axis=axes, epsilon=eps)


def maximum(a, b):
    return np.maximum(a, b) if _is_numpy(a, b) else _pm().maximum(a, b)


def where(cond, a, b):
    if _is_numpy(cond, a, b):
        return np.where(cond, a, b).astype(np.result_type(a, b))
    return _pm().where(cond, a, b)


def take(x, indices, axis):
    """numpy.take: an index outside [-n, n) raises (IndexError in numpy, a
    run-time error of the compiled gather)."""
    if _is_numpy(x, indices):
        return np.take(x, indices, axis=axis)
    return _pm().take(x, indices, axis=axis)


def equal(a, b):
    return np.equal(a, b) if _is_numpy(a, b) else _pm().equal(a, b)


def greater_equal(a, b):
    return np.greater_equal(a, b) if _is_numpy(a, b) else _pm().greater_equal(a, b)


def astype(x, dtype):
    if _is_numpy(x):
        return np.asarray(x).astype(dtype)
    return _pm().astype(x, dtype)


# --------------------------------------------------------------- reductions
def sum(x, axis=None, keepdims=False):  # noqa: A001 (numpy name on purpose)
    if _is_numpy(x):
        return np.sum(x, axis=axis, keepdims=keepdims)
    return _pm().sum(x, axis=axis, keepdims=keepdims)


def mean(x, axis=None, keepdims=False):
    if _is_numpy(x):
        return np.mean(x, axis=axis, keepdims=keepdims)
    return _pm().mean(x, axis=axis, keepdims=keepdims)


def max(x, axis=None, keepdims=False):  # noqa: A001
    if _is_numpy(x):
        return np.max(x, axis=axis, keepdims=keepdims)
    return _pm().max(x, axis=axis, keepdims=keepdims)


# -------------------------------------------------------------------- shape
def shape(x):
    return tuple(x.shape)


def reshape(x, new_shape):
    if _is_numpy(x):
        return np.reshape(x, new_shape)
    return _pm().reshape(x, tuple(new_shape))


def transpose(x, axes):
    if _is_numpy(x):
        return np.transpose(x, axes)
    return _pm().transpose(x, tuple(axes))


def slice_axis(x, axis, start, stop):
    """x[..., start:stop, ...] along `axis` (static bounds)."""
    index = [slice(None)] * len(x.shape)
    index[axis] = slice(start, stop)
    return x[tuple(index)]


def matmul(a, b):
    return np.matmul(a, b) if _is_numpy(a, b) else _pm().matmul(a, b)


def arange(n, dtype=np.int64):
    """[0, n) as a constant: the same array in both modes."""
    return np.arange(n, dtype=dtype)


# --------------------------------------------------------------- nn kernels
# Traced, these emit the paddle ops (the autodiff pass has their gradient
# rules); on numpy arrays they compute the reference directly.


def conv2d(x, w, stride=(1, 1), padding=(0, 0, 0, 0), dilation=(1, 1), groups=1):
    """NCHW / OIHW cross-correlation; padding is [top, left, bottom, right]."""
    if not _is_numpy(x, w):
        return _pm().conv2d(x, w, stride=stride, padding=padding, dilation=dilation,
                            groups=groups)
    n, c, h, wd = x.shape
    o, cg, kh, kw = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (padding[0], padding[2]), (padding[1], padding[3])))
    sh, sw = stride
    dh, dw = dilation
    oh = (xp.shape[2] - dh * (kh - 1) - 1) // sh + 1
    ow = (xp.shape[3] - dw * (kw - 1) - 1) // sw + 1
    out = np.zeros((n, o, oh, ow), np.result_type(x, w))
    og = o // groups
    for g in range(groups):
        xs = xp[:, g * cg:(g + 1) * cg]
        ws = w[g * og:(g + 1) * og]
        for i in range(kh):
            for j in range(kw):
                patch = xs[:, :, i * dh:i * dh + sh * (oh - 1) + 1:sh,
                           j * dw:j * dw + sw * (ow - 1) + 1:sw]
                out[:, g * og:(g + 1) * og] += np.einsum("nchw,oc->nohw", patch, ws[:, :, i, j])
    return out


def _pool_windows(x, kernel, stride, padding, fill):
    n, c, h, w = x.shape
    xp = np.pad(x, ((0, 0), (0, 0), (padding[0], padding[2]), (padding[1], padding[3])),
                constant_values=fill)
    kh, kw = kernel
    sh, sw = stride
    oh = (xp.shape[2] - kh) // sh + 1
    ow = (xp.shape[3] - kw) // sw + 1
    return [xp[:, :, i:i + sh * (oh - 1) + 1:sh, j:j + sw * (ow - 1) + 1:sw]
            for i in range(kh) for j in range(kw)]


def max_pool2d(x, kernel, stride, padding=(0, 0, 0, 0)):
    if not _is_numpy(x):
        return _pm().max_pool2d(x, kernel, stride=stride, padding=padding)
    return np.max(np.stack(_pool_windows(x, kernel, stride, padding, -np.inf)), axis=0)


def avg_pool2d(x, kernel, stride, padding=(0, 0, 0, 0)):
    """Padded zeros count in the average (PyTorch count_include_pad=True)."""
    if not _is_numpy(x):
        return _pm().avg_pool2d(x, kernel, stride=stride, padding=padding)
    return np.mean(np.stack(_pool_windows(x, kernel, stride, padding, 0.0)), axis=0)


# ---------------------------------------------------------------------- rng
_GOLDEN = 0x9E3779B97F4A7C15


def rng_uniform(seed, shape_, dtype=np.float32):
    """`paddle.rng_uniform` in [0, 1): a pure function of the i64 `seed`
    (a rank-0 array) and of each element's position."""
    if not _is_numpy(seed):
        return _pm().random_uniform(seed, tuple(shape_), dtype=dtype)
    with np.errstate(over="ignore"):
        s = np.asarray(seed, np.int64).astype(np.uint64)
        i = np.arange(int(np.prod(shape_, dtype=np.int64)), dtype=np.uint64)
        z = s ^ (i * np.uint64(_GOLDEN))
        z = z + np.uint64(_GOLDEN)
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        z = z ^ (z >> np.uint64(31))
    if np.dtype(dtype) == np.float64:
        u = (z >> np.uint64(11)).astype(np.float64) * 2.0 ** -53
    else:
        u = (z >> np.uint64(40)).astype(np.float64) * 2.0 ** -24
    return u.astype(dtype).reshape(shape_)
