"""Layers: Modules holding parameters/buffers that call pm.nn.functional."""

import math
import numbers

import numpy as np

from . import _ops
from . import functional as F
from .module import Module, Parameter

# Parameter initialisation draws from one numpy Generator; manual_seed makes
# model construction reproducible (the demo and the tests rely on it).
_init_rng = [np.random.default_rng(0)]


def manual_seed(seed):
    """Seeds the generator layers draw their initial parameters from."""
    _init_rng[0] = np.random.default_rng(seed)


def _check_sizes(layer, **sizes):
    """Sizes (features, channels, kernel dims) must be ints >= 1."""
    for name, v in sizes.items():
        vs = v if isinstance(v, tuple) else (v,)
        if not all(isinstance(d, numbers.Integral) and not isinstance(d, bool) and d >= 1
                   for d in vs):
            raise ValueError(f"{layer}: {name} must be an int >= 1, got {v!r}")


def _uniform(shape, bound, rng):
    rng = rng if rng is not None else _init_rng[0]
    return rng.uniform(-bound, bound, size=shape).astype(np.float32)


# ------------------------------------------------------------- activations
class ReLU(Module):
    def forward(self, x):
        return F.relu(x)


class GELU(Module):
    def forward(self, x):
        return F.gelu(x)


class Tanh(Module):
    def forward(self, x):
        return F.tanh(x)


class Sigmoid(Module):
    def forward(self, x):
        return F.sigmoid(x)


class Softmax(Module):
    def __init__(self, dim=-1):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        return F.softmax(x, axis=self.dim)


class LogSoftmax(Softmax):
    def forward(self, x):
        return F.log_softmax(x, axis=self.dim)


class Flatten(Module):
    def __init__(self, start_dim=1):
        super().__init__()
        self.start_dim = start_dim

    def forward(self, x):
        return F.flatten(x, self.start_dim)


class Identity(Module):
    def forward(self, x):
        return x


# ------------------------------------------------------------------ layers
class Linear(Module):
    """y = x @ weight.T + bias; weight [out, in], PyTorch's initialisation
    U(-1/sqrt(in), 1/sqrt(in))."""

    def __init__(self, in_features, out_features, bias=True, rng=None):
        super().__init__()
        _check_sizes("Linear", in_features=in_features, out_features=out_features)
        self.in_features, self.out_features = in_features, out_features
        bound = 1.0 / math.sqrt(in_features)
        self.weight = Parameter(_uniform((out_features, in_features), bound, rng))
        self.bias = Parameter(_uniform((out_features,), bound, rng)) if bias else None

    def forward(self, x):
        last = _ops.shape(x)[-1]
        if last != self.in_features:
            raise ValueError(f"Linear({self.in_features}, {self.out_features}): input has "
                             f"{last} features in its last dim (shape {_ops.shape(x)})")
        return F.linear(x, self.weight, self.bias)

    def extra_repr(self):
        return f"{self.in_features}, {self.out_features}, bias={self.bias is not None}"


class Conv2D(Module):
    """NCHW convolution, weight [out, in / groups, kh, kw]."""

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0,
                 dilation=1, groups=1, bias=True, rng=None):
        super().__init__()
        _check_sizes("Conv2D", in_channels=in_channels, out_channels=out_channels, groups=groups)
        if in_channels % groups or out_channels % groups:
            raise ValueError(f"Conv2D: channels {in_channels} -> {out_channels} are not "
                             f"divisible by groups={groups}")
        kh, kw = F._pair(kernel_size, "kernel_size")
        _check_sizes("Conv2D", kernel_size=(kh, kw))
        self.in_channels, self.out_channels = in_channels, out_channels
        self.kernel_size, self.stride, self.padding = (kh, kw), stride, padding
        self.dilation, self.groups = dilation, groups
        bound = 1.0 / math.sqrt(in_channels // groups * kh * kw)
        self.weight = Parameter(_uniform((out_channels, in_channels // groups, kh, kw), bound,
                                         rng))
        self.bias = Parameter(_uniform((out_channels,), bound, rng)) if bias else None

    def forward(self, x):
        shape = _ops.shape(x)
        if len(shape) != 4 or shape[1] != self.in_channels:
            raise ValueError(f"Conv2D: expected input [N, {self.in_channels}, H, W], "
                             f"got shape {shape}")
        return F.conv2d(x, self.weight, self.bias, self.stride, self.padding, self.dilation,
                        self.groups)

    def extra_repr(self):
        return (f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, "
                f"stride={self.stride}, padding={self.padding}")


class MaxPool2D(Module):
    def __init__(self, kernel_size, stride=None, padding=0):
        super().__init__()
        self.kernel_size, self.stride, self.padding = kernel_size, stride, padding

    def forward(self, x):
        return F.max_pool2d(x, self.kernel_size, self.stride, self.padding)


class AvgPool2D(MaxPool2D):
    def forward(self, x):
        return F.avg_pool2d(x, self.kernel_size, self.stride, self.padding)


class BatchNorm2D(Module):
    """Training: batch statistics; running stats move by `momentum` (the
    running variance with the unbiased estimate). Eval: running stats."""

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True):
        super().__init__()
        _check_sizes("BatchNorm2D", num_features=num_features)
        self.num_features, self.eps, self.momentum = num_features, eps, momentum
        if affine:
            self.weight = Parameter(np.ones(num_features, np.float32))
            self.bias = Parameter(np.zeros(num_features, np.float32))
        else:
            self.weight = self.bias = None
        self.register_buffer("running_mean", np.zeros(num_features, np.float32))
        self.register_buffer("running_var", np.ones(num_features, np.float32))

    def forward(self, x):
        shape = _ops.shape(x)
        if len(shape) != 4 or shape[1] != self.num_features:
            raise ValueError(f"BatchNorm2D: expected input [N, {self.num_features}, H, W], "
                             f"got shape {shape}")
        y, mean, var = F.batch_norm(x, self.running_mean, self.running_var, self.weight,
                                    self.bias, self.training, self.momentum, self.eps)
        if self.training:
            self.update_buffer("running_mean", mean)
            self.update_buffer("running_var", var)
        return y

    def extra_repr(self):
        return f"{self.num_features}, eps={self.eps}, momentum={self.momentum}"


class LayerNorm(Module):
    def __init__(self, normalized_shape, eps=1e-5, elementwise_affine=True):
        super().__init__()
        if isinstance(normalized_shape, int):
            normalized_shape = (normalized_shape,)
        self.normalized_shape, self.eps = tuple(normalized_shape), eps
        _check_sizes("LayerNorm", normalized_shape=self.normalized_shape)
        if elementwise_affine:
            self.weight = Parameter(np.ones(self.normalized_shape, np.float32))
            self.bias = Parameter(np.zeros(self.normalized_shape, np.float32))
        else:
            self.weight = self.bias = None

    def forward(self, x):
        shape = _ops.shape(x)
        k = len(self.normalized_shape)
        if tuple(shape[-k:]) != self.normalized_shape:
            raise ValueError(f"LayerNorm{self.normalized_shape}: input shape {shape} does not "
                             "end with the normalized shape")
        return F.layer_norm(x, self.normalized_shape, self.weight, self.bias, self.eps)


class Embedding(Module):
    """Lookup table [num_embeddings, dim], initialised N(0, 1) as PyTorch."""

    def __init__(self, num_embeddings, embedding_dim, rng=None):
        super().__init__()
        _check_sizes("Embedding", num_embeddings=num_embeddings, embedding_dim=embedding_dim)
        rng = rng if rng is not None else _init_rng[0]
        self.num_embeddings, self.embedding_dim = num_embeddings, embedding_dim
        self.weight = Parameter(
            rng.standard_normal((num_embeddings, embedding_dim)).astype(np.float32))

    def forward(self, indices):
        return F.embedding(indices, self.weight)


class Dropout(Module):
    """Zeroes elements with probability p in training, identity in eval.

    Masks are deterministic: mask k (the k-th training forward) comes from
    rng_uniform(seed + k * C). The counter k is a buffer (`step`), so a
    compiled train step advances it in place and every step draws a new
    mask, while two models built with the same seed draw the same ones.
    """

    def __init__(self, p=0.5, seed=0):
        super().__init__()
        if not 0.0 <= p < 1.0:
            raise ValueError(f"Dropout: p must be in [0, 1), got {p}")
        self.p, self.seed = float(p), int(seed)
        self.register_buffer("step", np.zeros((), np.int64))

    def forward(self, x):
        if not self.training or self.p == 0.0:
            return x
        y = F.dropout(x, self.p, F.dropout_seed(self.seed, self.step), True)
        self.update_buffer("step", self.step + np.int64(1))
        return y

    def extra_repr(self):
        return f"p={self.p}, seed={self.seed}"


class MultiHeadAttention(Module):
    """torch.nn.MultiheadAttention(embed_dim, num_heads, batch_first=True).

    forward(query [B, L, E], key [B, S, E], value [B, S, E], attn_mask=None,
    key_padding_mask=None) -> (output [B, L, E], weights [B, L, S] averaged
    over heads). Masks follow PyTorch: a boolean mask is True where
    attention is NOT allowed; a float attn_mask is added to the scores.
    attn_mask is [L, S] or [B * num_heads, L, S]; key_padding_mask [B, S].
    Parameters: in_proj_weight [3E, E], in_proj_bias [3E], out_proj
    (Linear(E, E)); state_dict names match PyTorch's.
    """

    def __init__(self, embed_dim, num_heads, bias=True, rng=None):
        super().__init__()
        if embed_dim % num_heads:
            raise ValueError(f"MultiHeadAttention: embed_dim {embed_dim} is not divisible by "
                             f"num_heads {num_heads}")
        self.embed_dim, self.num_heads = embed_dim, num_heads
        # xavier_uniform over the packed [3E, E] matrix, as PyTorch.
        bound = math.sqrt(6.0 / (embed_dim + 3 * embed_dim))
        self.in_proj_weight = Parameter(_uniform((3 * embed_dim, embed_dim), bound, rng))
        self.in_proj_bias = Parameter(np.zeros(3 * embed_dim, np.float32)) if bias else None
        self.out_proj = Linear(embed_dim, embed_dim, bias=bias, rng=rng)
        if bias:
            self.out_proj.bias[...] = 0.0

    def _project(self, x, i):
        e = self.embed_dim
        w = _ops.slice_axis(self.in_proj_weight, 0, i * e, (i + 1) * e)
        b = self.in_proj_bias
        b = None if b is None else _ops.slice_axis(b, 0, i * e, (i + 1) * e)
        b_, n, _ = _ops.shape(x)
        y = F.linear(x, w, b)
        d = e // self.num_heads
        return _ops.transpose(_ops.reshape(y, (b_, n, self.num_heads, d)), (0, 2, 1, 3))

    def forward(self, query, key, value, attn_mask=None, key_padding_mask=None):
        b, lq, e = _ops.shape(query)
        s = _ops.shape(key)[1]
        if e != self.embed_dim or _ops.shape(key)[-1] != e or _ops.shape(value)[-1] != e:
            raise ValueError(f"MultiHeadAttention: embed_dim is {self.embed_dim}, got query "
                             f"{_ops.shape(query)}, key {_ops.shape(key)}, value "
                             f"{_ops.shape(value)}")
        q, k, v = self._project(query, 0), self._project(key, 1), self._project(value, 2)
        mask = None
        if attn_mask is not None:
            mask = _additive_mask(attn_mask, query.dtype)
            mshape = _ops.shape(attn_mask)
            if tuple(mshape) == (b * self.num_heads, lq, s):
                mask = _ops.reshape(mask, (b, self.num_heads, lq, s))
            elif tuple(mshape) != (lq, s):
                raise ValueError(f"MultiHeadAttention: attn_mask must be [{lq}, {s}] or "
                                 f"[{b * self.num_heads}, {lq}, {s}], got {mshape}")
        if key_padding_mask is not None:
            if tuple(_ops.shape(key_padding_mask)) != (b, s):
                raise ValueError(f"MultiHeadAttention: key_padding_mask must be [{b}, {s}], "
                                 f"got {_ops.shape(key_padding_mask)}")
            pad = _ops.reshape(_additive_mask(key_padding_mask, query.dtype), (b, 1, 1, s))
            mask = pad if mask is None else mask + pad
        o, weights = F.scaled_dot_product_attention(q, k, v, mask)
        o = _ops.reshape(_ops.transpose(o, (0, 2, 1, 3)), (b, lq, e))
        return self.out_proj(o), _ops.mean(weights, axis=1)


def _additive_mask(mask, dtype):
    """Boolean (True = masked) -> 0 / -inf of the scores' `dtype` (a numpy
    bool mask would otherwise give float64 and promote the attention);
    float masks as given."""
    if str(getattr(mask, "dtype", None)) in ("bool", "i1"):
        return _ops.where(mask, np.array(-np.inf, dtype), np.array(0.0, dtype))
    return mask


# ------------------------------------------------------------------ losses
class CrossEntropyLoss(Module):
    def __init__(self, reduction="mean"):
        super().__init__()
        self.reduction = reduction

    def forward(self, logits, labels):
        return F.cross_entropy(logits, labels, self.reduction)


class MSELoss(CrossEntropyLoss):
    def forward(self, pred, target):
        return F.mse_loss(pred, target, self.reduction)
