"""Stateless layer functions (pm.nn.functional), PyTorch semantics.

They take arrays (numpy or traced) and return arrays; layers in
pm.nn.layers hold the parameters and call these. Everything is written with
differentiable primitives (matmul, elementwise ops, reductions, reshapes),
so pm.grad through a model needs no gradient rule beyond those.
"""

import math

import numpy as np

from . import _ops

__all__ = [
    "linear", "relu", "gelu", "tanh", "sigmoid", "softmax", "log_softmax",
    "conv2d", "max_pool2d", "avg_pool2d", "flatten", "batch_norm", "layer_norm",
    "embedding", "one_hot", "dropout", "dropout_seed", "scaled_dot_product_attention",
    "cross_entropy", "mse_loss",
]


def _pair(v, name):
    if isinstance(v, int):
        return (v, v)
    v = tuple(int(i) for i in v)
    if len(v) != 2:
        raise ValueError(f"{name} must be an int or a pair, got {v}")
    return v


def _padding4(padding):
    """PyTorch padding (int or (ph, pw)) -> [top, left, bottom, right]."""
    ph, pw = _pair(padding, "padding")
    return (ph, pw, ph, pw)


# ------------------------------------------------------------- activations
def relu(x):
    return _ops.maximum(x, 0.0)


def gelu(x):
    """The exact (erf) GELU, as torch.nn.GELU()."""
    return _ops.gelu(x)


def tanh(x):
    return _ops.tanh(x)


def sigmoid(x):
    return _ops.sigmoid(x)


def log_softmax(x, axis=-1):
    return _ops.log_softmax(x, axis=axis)


def softmax(x, axis=-1):
    return _ops.softmax(x, axis=axis)


# ------------------------------------------------------------------ layers
def linear(x, weight, bias=None):
    """x @ weight.T + bias, weight [out, in] (PyTorch layout)."""
    y = _ops.matmul(x, _ops.transpose(weight, (1, 0)))
    return y if bias is None else y + bias


def conv2d(x, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    y = _ops.conv2d(x, weight, stride=_pair(stride, "stride"), padding=_padding4(padding),
                    dilation=_pair(dilation, "dilation"), groups=groups)
    if bias is not None:
        y = y + _ops.reshape(bias, (1, -1, 1, 1))
    return y


def max_pool2d(x, kernel_size, stride=None, padding=0):
    kernel = _pair(kernel_size, "kernel_size")
    stride = kernel if stride is None else _pair(stride, "stride")
    return _ops.max_pool2d(x, kernel, stride, _padding4(padding))


def avg_pool2d(x, kernel_size, stride=None, padding=0):
    kernel = _pair(kernel_size, "kernel_size")
    stride = kernel if stride is None else _pair(stride, "stride")
    return _ops.avg_pool2d(x, kernel, stride, _padding4(padding))


def flatten(x, start_dim=1):
    shape = _ops.shape(x)
    start_dim %= len(shape)
    return _ops.reshape(x, tuple(shape[:start_dim]) + (-1,))


def batch_norm(x, running_mean, running_var, weight, bias, training, momentum=0.1, eps=1e-5):
    """Returns (y, new_running_mean, new_running_var).

    Training: normalizes with the batch statistics (biased variance) and
    moves the running stats towards them, the running variance using the
    unbiased estimate (PyTorch). Eval: normalizes with the running stats,
    which stay as they are.
    """
    shape = _ops.shape(x)
    if len(shape) < 2:
        raise ValueError(f"batch_norm: input must be [N, C, ...], got shape {shape}")
    c = shape[1]
    axes = (0,) + tuple(range(2, len(shape)))
    bshape = (1, c) + (1,) * (len(shape) - 2)
    if training:
        count = int(np.prod([shape[a] for a in axes]))
        if count < 2:
            raise ValueError(
                f"batch_norm: training needs more than one value per channel, got shape {shape}")
        mean = _ops.mean(x, axis=axes)
        centered = x - _ops.reshape(mean, bshape)
        var = _ops.mean(centered * centered, axis=axes)
        m = momentum
        new_mean = (1 - m) * running_mean + m * mean
        new_var = (1 - m) * running_var + m * (var * (count / (count - 1)))
    else:
        mean, var = running_mean, running_var
        centered = x - _ops.reshape(mean, bshape)
        new_mean, new_var = running_mean, running_var
    inv = 1.0 / _ops.sqrt(var + eps)
    y = centered * _ops.reshape(inv, bshape)
    if weight is not None:
        y = y * _ops.reshape(weight, bshape) + _ops.reshape(bias, bshape)
    return y, new_mean, new_var


def layer_norm(x, normalized_shape, weight=None, bias=None, eps=1e-5):
    k = len(tuple(normalized_shape))
    return _ops.layer_norm(x, tuple(range(-k, 0)), weight, bias, eps)


def one_hot(labels, num_classes, dtype=np.float32):
    """[..., num_classes] with 1 at each label: compare against 0..C-1."""
    classes = _ops.arange(num_classes, dtype=np.int64)
    labels = _ops.astype(labels, np.int64)
    hits = _ops.equal(_ops.reshape(labels, _ops.shape(labels) + (1,)), classes)
    return _ops.astype(hits, dtype)


def embedding(indices, weight):
    """Rows of `weight` [V, D] by integer indices in [-V, V): a gather, whose
    gradient is a scatter-add. An index outside that range is a run-time
    error naming this line (PyTorch raises too; a one-hot product gave a
    zero row)."""
    return _ops.take(weight, indices, axis=0)


# Multipliers for folding a step counter and a layer seed into one i64 key:
# odd constants, so distinct (seed, step) pairs rarely collide.
_STEP_MULT = np.int64(0x5851F42D4C957F2D)


def dropout_seed(seed, step):
    """The key of one dropout mask: the layer's seed folded with its step."""
    with np.errstate(over="ignore"):  # wrapping i64 arithmetic is intended
        return step * _STEP_MULT + int(seed)


def dropout(x, p, key, training=True):
    """Zeroes each element with probability p (mask from rng_uniform(key)),
    scales the rest by 1 / (1 - p). Identity when not training or p == 0."""
    if not 0.0 <= p < 1.0:
        raise ValueError(f"dropout: p must be in [0, 1), got {p}")
    if not training or p == 0.0:
        return x
    u = _ops.rng_uniform(key, _ops.shape(x), np.float32)
    keep = _ops.greater_equal(u, p)
    return _ops.where(keep, x * (1.0 / (1.0 - p)), 0.0)


def scaled_dot_product_attention(q, k, v, mask=None):
    """softmax(q k^T / sqrt(d) + mask) v over the last two dims; `mask` is
    additive (0 or -inf style, already broadcastable to the scores)."""
    d = _ops.shape(q)[-1]
    nd = len(_ops.shape(k))
    kt = _ops.transpose(k, tuple(range(nd - 2)) + (nd - 1, nd - 2))
    scores = _ops.matmul(q, kt) * (1.0 / math.sqrt(d))
    if mask is not None:
        scores = scores + mask
    weights = softmax(scores, axis=-1)
    return _ops.matmul(weights, v), weights


# ------------------------------------------------------------------ losses
def cross_entropy(logits, labels, reduction="mean"):
    """Softmax cross-entropy from logits [N, C] and integer labels [N]."""
    shape = _ops.shape(logits)
    if len(shape) != 2:
        raise ValueError(f"cross_entropy: logits must be [N, C], got shape {shape}")
    if tuple(_ops.shape(labels)) != (shape[0],):
        raise ValueError(
            f"cross_entropy: labels must be [N] = [{shape[0]}], got shape {_ops.shape(labels)}")
    nll = -_ops.sum(log_softmax(logits, axis=-1) * one_hot(labels, shape[1]), axis=-1)
    return _reduce(nll, reduction, "cross_entropy")


def mse_loss(pred, target, reduction="mean"):
    if tuple(_ops.shape(pred)) != tuple(_ops.shape(target)):
        raise ValueError(f"mse_loss: prediction shape {_ops.shape(pred)} differs from "
                         f"target shape {_ops.shape(target)}")
    diff = pred - target
    return _reduce(diff * diff, reduction, "mse_loss")


def _reduce(values, reduction, who):
    if reduction == "mean":
        return _ops.mean(values)
    if reduction == "sum":
        return _ops.sum(values)
    if reduction == "none":
        return values
    raise ValueError(f"{who}: reduction must be 'mean', 'sum' or 'none', got '{reduction}'")
