"""pm.nn layers: forward vs an independent numpy reference, eager and compiled.

Random data per test (the `rng` fixture); float32 results are compared with
float64 references at rtol 1e-5 / atol 1e-6 unless stated.
"""

import math

import numpy as np
import pytest

import nn_numpy_reference as R
from nn_testing import MODES, assert_close, forward
from paddle_mlir import nn
from paddle_mlir.nn import functional as F

RTOL, ATOL = 1e-5, 1e-6


def f32(rng, *shape):
    return rng.standard_normal(shape).astype(np.float32)


@pytest.mark.parametrize("mode", MODES)
def test_linear(mode, rng):
    layer = nn.Linear(7, 5, rng=rng)
    x = f32(rng, 3, 4, 7)  # leading dims broadcast through the matmul
    y, _ = forward(mode, layer, x)
    assert y.shape == (3, 4, 5) and y.dtype == np.float32
    assert_close(y, R.linear(x.astype(np.float64), layer.weight, layer.bias), RTOL, ATOL)


def test_linear_init_and_no_bias(rng):
    layer = nn.Linear(16, 4, bias=False, rng=rng)
    assert layer.bias is None and list(layer.named_parameters()) == ["weight"]
    assert np.abs(layer.weight).max() <= 1 / 4  # U(-1/sqrt(in), 1/sqrt(in))
    assert layer.weight.flags.c_contiguous and layer.weight.dtype == np.float32


CONV_CASES = [(m, *c) for m in MODES for c in [(1, 1, 1), (2, 0, 1), (1, 2, 2)]]


@pytest.mark.parametrize("mode,stride,padding,groups", CONV_CASES)
def test_conv2d(mode, stride, padding, groups, rng):
    layer = nn.Conv2D(4, 6, 3, stride=stride, padding=padding, groups=groups, rng=rng)
    x = f32(rng, 2, 4, 9, 8)
    y, _ = forward(mode, layer, x)
    # Reference: direct sum over the window (no im2col), per group.
    xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (padding,) * 2, (padding,) * 2))
    oh = (xp.shape[2] - 3) // stride + 1
    ow = (xp.shape[3] - 3) // stride + 1
    ref = np.zeros((2, 6, oh, ow))
    cg, og = 4 // groups, 6 // groups
    for o in range(6):
        g = o // og
        for i in range(oh):
            for j in range(ow):
                win = xp[:, g * cg:(g + 1) * cg, i * stride:i * stride + 3,
                         j * stride:j * stride + 3]
                ref[:, o, i, j] = (win * layer.weight[o]).sum(axis=(1, 2, 3)) + layer.bias[o]
    assert_close(y, ref, RTOL, ATOL)


@pytest.mark.parametrize("mode", MODES)
def test_pooling(mode, rng):
    x = f32(rng, 2, 3, 8, 6)
    model = nn.Sequential(nn.MaxPool2D(2))
    y, _ = forward(mode, model, x)
    ref, _ = R.maxpool2(x.astype(np.float64))
    assert_close(y, ref, 0, 0)
    y, _ = forward(mode, nn.Sequential(nn.AvgPool2D(2)), x)
    ref = x.reshape(2, 3, 4, 2, 3, 2).mean(axis=(3, 5))
    assert_close(y, ref, RTOL, ATOL)
    # Overlapping padded windows: padding never wins a max, counts as 0 in
    # an average (count_include_pad, PyTorch's default).
    xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (1, 1), (1, 1)), constant_values=np.nan)
    wins = np.stack([xp[:, :, i:i + 7:2, j:j + 5:2] for i in range(3) for j in range(3)])
    y, _ = forward(mode, nn.Sequential(nn.MaxPool2D(3, 2, 1)), x)
    assert_close(y, np.nanmax(wins, axis=0), 0, 0)
    y, _ = forward(mode, nn.Sequential(nn.AvgPool2D(3, 2, 1)), x)
    assert_close(y, np.nansum(wins, axis=0) / 9, RTOL, ATOL)


@pytest.mark.parametrize("mode", MODES)
def test_batchnorm_train(mode, rng):
    bn = nn.BatchNorm2D(3, momentum=0.2)
    bn.weight[...] = rng.uniform(0.5, 1.5, 3)
    bn.bias[...] = rng.standard_normal(3)
    x = (f32(rng, 4, 3, 5, 5) * 3 + 1).astype(np.float32)
    y, new = forward(mode, bn, x)
    ref, mean, var = R.batchnorm_train(x.astype(np.float64), bn.weight, bn.bias, 1e-5)
    assert_close(y, ref, 1e-4, 1e-5)
    n = 4 * 5 * 5
    assert_close(new["running_mean"], 0.8 * 0 + 0.2 * mean, RTOL, ATOL, "running mean")
    # PyTorch: the running variance takes the unbiased batch variance.
    assert_close(new["running_var"], 0.8 * 1 + 0.2 * var * n / (n - 1), RTOL, ATOL, "running var")
    # functional_call leaves the module's own buffers alone.
    assert (bn.running_mean == 0).all() and (bn.running_var == 1).all()


@pytest.mark.parametrize("mode", MODES)
def test_batchnorm_eval_uses_running_stats(mode, rng):
    bn = nn.BatchNorm2D(2)
    bn.running_mean[...] = [0.5, -1.0]
    bn.running_var[...] = [2.0, 0.25]
    bn.weight[...] = [1.5, 0.5]
    bn.eval()
    x = f32(rng, 3, 2, 4, 4)
    y, new = forward(mode, bn, x)
    rm, rv = bn.running_mean[None, :, None, None], bn.running_var[None, :, None, None]
    ref = (x - rm) / np.sqrt(rv + 1e-5) * bn.weight[None, :, None, None]
    assert_close(y, ref, RTOL, ATOL)
    assert_close(new["running_mean"], [0.5, -1.0], 0, 0)


def test_batchnorm_eager_updates_own_buffers_in_place(rng):
    bn = nn.BatchNorm2D(2)
    ptr = bn.running_mean.ctypes.data
    bn(f32(rng, 4, 2, 3, 3) + 2)
    assert bn.running_mean.ctypes.data == ptr and (bn.running_mean > 0.1).all()


@pytest.mark.parametrize("mode", MODES)
def test_layernorm(mode, rng):
    ln = nn.LayerNorm(6)
    ln.weight[...] = rng.uniform(0.5, 1.5, 6)
    ln.bias[...] = rng.standard_normal(6)
    x = f32(rng, 2, 3, 6) * 2
    y, _ = forward(mode, ln, x)
    assert_close(y, R.layernorm(x.astype(np.float64), ln.weight, ln.bias, 1e-5), 1e-4, 1e-5)


@pytest.mark.parametrize("mode", MODES)
def test_embedding(mode, rng):
    emb = nn.Embedding(10, 4, rng=rng)
    idx = rng.integers(0, 10, (3, 5)).astype(np.int64)
    y, _ = forward(mode, emb, idx)
    assert_close(y, emb.weight[idx], 0, 0)


@pytest.mark.parametrize("mode", MODES)
def test_activations(mode, rng):
    x = f32(rng, 4, 7) * 3
    x64 = x.astype(np.float64)
    cases = [(nn.ReLU(), R.relu(x64)), (nn.GELU(), R.gelu(x64)), (nn.Tanh(), np.tanh(x64)),
             (nn.Sigmoid(), 1 / (1 + np.exp(-x64))), (nn.Softmax(), R.softmax(x64)),
             (nn.LogSoftmax(), R.log_softmax(x64)), (nn.Flatten(), x64)]
    for layer, ref in cases:
        y, _ = forward(mode, layer, x)
        assert_close(y, ref, 1e-5, 2e-6, type(layer).__name__)


@pytest.mark.parametrize("mode", MODES)
def test_multihead_attention(mode, rng):
    mha = nn.MultiHeadAttention(8, 2, rng=rng)
    mha.in_proj_bias[...] = rng.standard_normal(24) * 0.1
    q, k, v = f32(rng, 2, 3, 8), f32(rng, 2, 5, 8), f32(rng, 2, 5, 8)
    args = (mha.in_proj_weight, mha.in_proj_bias, mha.out_proj.weight, mha.out_proj.bias, 2)
    # Boolean masks: True = not allowed (PyTorch). Keep one key per row open.
    am = rng.random((3, 5)) < 0.4
    am[:, 0] = False
    kpm = np.zeros((2, 5), bool)
    kpm[1, 3:] = True

    class Both(nn.Module):  # one compiled function for both calls
        def __init__(self):
            super().__init__()
            self.mha = mha

        def forward(self, q, k, v):
            return (*self.mha(q, k, v),
                    *self.mha(q, k, v, attn_mask=am, key_padding_mask=kpm))

    (o, w, om, wm), _ = forward(mode, Both(), q, k, v)
    ro, rw = R.multi_head_attention(q, k, v, *args)
    assert_close(o, ro, 1e-4, 1e-5, "output")
    assert_close(w, rw, 1e-4, 1e-6, "weights")
    ro, rw = R.multi_head_attention(q, k, v, *args, attn_mask=am, key_padding_mask=kpm)
    assert_close(om, ro, 1e-4, 1e-5, "masked output")
    assert_close(wm, rw, 1e-4, 1e-6, "masked weights")
    assert (wm[:, am] == 0).all() and (wm[1, :, 3:] == 0).all()


def test_multihead_attention_errors(rng):
    with pytest.raises(ValueError, match="not divisible by num_heads"):
        nn.MultiHeadAttention(10, 3)
    mha = nn.MultiHeadAttention(8, 2)
    with pytest.raises(ValueError, match="attn_mask must be"):
        mha(f32(rng, 1, 3, 8), f32(rng, 1, 4, 8), f32(rng, 1, 4, 8),
            attn_mask=np.zeros((3, 3), bool))
    with pytest.raises(ValueError, match="embed_dim is 8"):
        mha(f32(rng, 1, 3, 6), f32(rng, 1, 4, 6), f32(rng, 1, 4, 6))


@pytest.mark.parametrize("mode", MODES)
def test_losses(mode, rng):
    logits = f32(rng, 6, 4) * 2
    labels = rng.integers(0, 4, 6).astype(np.int64)

    class CE(nn.Module):
        def forward(self, z, t):
            return F.cross_entropy(z, t), F.mse_loss(z, z * 0.5)

    (ce, mse), _ = forward(mode, CE(), logits, labels)
    assert_close(ce, R.cross_entropy(logits.astype(np.float64), labels)[0], RTOL, ATOL)
    assert_close(mse, R.mse(logits.astype(np.float64), logits * 0.5)[0], RTOL, ATOL)


def test_loss_errors(rng):
    with pytest.raises(ValueError, match=r"labels must be \[N\] = \[3\]"):
        F.cross_entropy(f32(rng, 3, 4), np.zeros(4, np.int64))
    with pytest.raises(ValueError, match=r"logits must be \[N, C\]"):
        F.cross_entropy(f32(rng, 3), np.zeros(3, np.int64))
    with pytest.raises(ValueError, match="differs from target shape"):
        F.mse_loss(f32(rng, 3), f32(rng, 4))
    with pytest.raises(ValueError, match="reduction must be"):
        F.mse_loss(f32(rng, 3), f32(rng, 3), reduction="avg")


def test_layer_shape_errors(rng):
    with pytest.raises(ValueError, match=r"Linear\(4, 2\): input has 3 features"):
        nn.Linear(4, 2)(f32(rng, 5, 3))
    with pytest.raises(ValueError, match=r"Conv2D: expected input \[N, 3, H, W\]"):
        nn.Conv2D(3, 4, 3)(f32(rng, 1, 2, 5, 5))
    with pytest.raises(ValueError, match="not divisible by groups"):
        nn.Conv2D(3, 4, 3, groups=2)
    with pytest.raises(ValueError, match=r"BatchNorm2D: expected input \[N, 2, H, W\]"):
        nn.BatchNorm2D(2)(f32(rng, 4, 3, 2, 2))
    with pytest.raises(ValueError, match="more than one value per channel"):
        nn.BatchNorm2D(2)(f32(rng, 1, 2, 1, 1))
    with pytest.raises(ValueError, match="does not end with the normalized shape"):
        nn.LayerNorm(4)(f32(rng, 2, 5))
    with pytest.raises(ValueError, match=r"p must be in \[0, 1\)"):
        nn.Dropout(1.0)


# --------------------------------------------------------------- dropout
@pytest.mark.parametrize("mode", MODES)
def test_dropout_masks(mode):
    x = np.ones((64, 32), np.float32)
    d = nn.Dropout(0.25, seed=7)
    y, new = forward(mode, d, x)
    kept = y != 0
    # Kept values are scaled by 1 / (1 - p); the drop rate is near p.
    assert_close(y[kept], np.full(kept.sum(), 1 / 0.75), 1e-6, 0)
    assert abs(1 - kept.mean() - 0.25) < 0.03
    assert int(new["step"]) == 1
    # The mask is the documented rng_uniform stream, so eager and compiled
    # runs draw the same one.
    u = _splitmix_uniform(7, x.size).reshape(x.shape)
    assert (kept == (u >= 0.25)).all()


def _splitmix_uniform(seed, n):
    """paddle.rng_uniform (f32) written out again from its documentation."""
    mask = (1 << 64) - 1
    out = np.empty(n)
    for i in range(n):
        z = (seed ^ (i * 0x9E3779B97F4A7C15)) & mask
        z = (z + 0x9E3779B97F4A7C15) & mask
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & mask
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & mask
        z ^= z >> 31
        out[i] = (z >> 40) * 2.0 ** -24
    return out


def test_dropout_determinism_and_steps():
    x = np.ones((16, 16), np.float32)
    a, b = nn.Dropout(0.5, seed=1), nn.Dropout(0.5, seed=1)
    first = [a(x).copy() for _ in range(3)]
    second = [b(x).copy() for _ in range(3)]
    for m1, m2 in zip(first, second):
        assert (m1 == m2).all()  # same seed, same masks, step by step
    assert not (first[0] == first[1]).all()  # a new mask each step
    assert not (nn.Dropout(0.5, seed=2)(x) == first[0]).all()  # seed matters
    assert int(a.step) == 3
    a.eval()
    assert a(x) is x and int(a.step) == 3  # eval: identity, no step


# ------------------------------------------------------------- Module API
def test_module_api(rng):
    model = nn.Sequential(nn.Conv2D(1, 2, 3, rng=rng), nn.BatchNorm2D(2), nn.ReLU(),
                          nn.Flatten(), nn.Linear(8, 3, rng=rng))
    assert list(model.named_parameters()) == ["0.weight", "0.bias", "1.weight", "1.bias",
                                              "4.weight", "4.bias"]
    assert list(model.named_buffers()) == ["1.running_mean", "1.running_var"]
    assert model.num_parameters() == 2 * 9 + 2 + 2 + 2 + 24 + 3
    sd = model.state_dict()
    model.eval()
    assert not any(m.training for m in model.modules())
    model.train()
    assert all(m.training for m in model.modules())

    other = nn.Sequential(nn.Conv2D(1, 2, 3), nn.BatchNorm2D(2), nn.ReLU(), nn.Flatten(),
                          nn.Linear(8, 3))
    ptr = other[0].weight.ctypes.data
    other.load_state_dict(sd)
    assert other[0].weight.ctypes.data == ptr  # loaded in place
    x = f32(rng, 2, 1, 4, 4)
    np.testing.assert_array_equal(other(x), model(x))
    sd["0.weight"][...] = 0  # state_dict returns copies
    assert (model[0].weight != 0).any()

    with pytest.raises(KeyError, match=r"missing keys \['4.bias'\]"):
        other.load_state_dict({k: v for k, v in sd.items() if k != "4.bias"})
    bad = dict(sd)
    bad["4.weight"] = np.zeros((2, 2), np.float32)
    with pytest.raises(ValueError, match=r"'4.weight' has shape \(2, 2\)"):
        other.load_state_dict(bad)
    with pytest.raises(KeyError, match="no parameter named 'nope'"):
        nn.functional_call(model, {"nope": np.zeros(1)}, {}, (x,))
    with pytest.raises(TypeError, match=r"Linear.weight is a parameter: assign nn.Parameter"):
        model[4].weight = np.zeros((3, 8), np.float32)
    with pytest.raises(TypeError, match="item 1 is a int"):
        nn.Sequential(nn.ReLU(), 3)


def test_module_forgot_super_init():
    class Bad(nn.Module):
        def __init__(self):
            self.w = nn.Parameter(np.zeros(2))

    with pytest.raises(RuntimeError, match=r"call super\(\).__init__\(\)"):
        Bad()


def test_gelu_matches_erf_formula():
    x = np.linspace(-4, 4, 33).astype(np.float32)
    ref = 0.5 * x * (1 + np.array([math.erf(v / math.sqrt(2)) for v in x]))
    assert_close(F.gelu(x), ref, 1e-6, 1e-7)


def _vjp_reference(name, x, g, w=None, b=None, eps=1e-5):
    """The float64 gradient of sum(layer(x) * g) by the textbook formulas:
    dx, and for the layer norm (dx, dweight, dbias)."""
    if name == "gelu":
        cdf = 0.5 * (1.0 + np.vectorize(math.erf)(x / math.sqrt(2.0)))
        pdf = np.exp(-0.5 * x * x) / math.sqrt(2.0 * math.pi)
        return (g * (cdf + x * pdf),)
    if name == "softmax":
        y = R.softmax(x)
        return (y * (g - (g * y).sum(axis=-1, keepdims=True)),)
    if name == "log_softmax":
        return (g - R.softmax(x) * g.sum(axis=-1, keepdims=True),)
    mean = x.mean(axis=-1, keepdims=True)
    inv = 1.0 / np.sqrt(x.var(axis=-1, keepdims=True) + eps)
    xhat = (x - mean) * inv
    d = g * w
    dx = inv * (d - d.mean(axis=-1, keepdims=True)
                - xhat * (d * xhat).mean(axis=-1, keepdims=True))
    return dx, (g * xhat).sum(axis=(0, 1)), g.sum(axis=(0, 1))


@pytest.mark.parametrize("name", ["gelu", "softmax", "log_softmax", "layer_norm"])
def test_traced_layers_are_single_ops_with_exact_gradients(name, rng):
    """GELU, Softmax, LogSoftmax and LayerNorm trace to one paddle op each
    (their fused kernels and their gradient rules, which recompute from x,
    rather than a chain of exp/erf/mean ops whose intermediates the
    backward pass reads again), and pm.grad through them matches the
    float64 formulas."""
    import paddle_mlir as pm

    x = f32(rng, 2, 3, 8) * 2
    g = f32(rng, 2, 3, 8)
    w = rng.uniform(0.5, 1.5, 8).astype(np.float32)
    b = f32(rng, 8)
    layer = {"gelu": F.gelu, "softmax": F.softmax, "log_softmax": F.log_softmax,
             "layer_norm": lambda v, w_, b_: F.layer_norm(v, (8,), w_, b_)}[name]
    args = (x, w, b) if name == "layer_norm" else (x,)

    def loss(*a):
        return pm.sum(layer(*a) * g)

    text = pm.lower(loss, *args)
    assert text.count(f"paddle.{name} ") == 1, text
    for decomposed in ("paddle.erf", "paddle.exp", "paddle.reduce_mean", "paddle.sqrt"):
        assert decomposed not in text, text
    got = pm.jit(pm.grad(loss, argnums=tuple(range(len(args)))))(*args)
    ref = _vjp_reference(name, x.astype(np.float64), g.astype(np.float64),
                         w.astype(np.float64), b.astype(np.float64))
    for i, (actual, expected) in enumerate(zip(got, ref)):
        assert_close(np.asarray(actual), expected, 1e-4, 1e-5, f"{name} gradient {i}")
