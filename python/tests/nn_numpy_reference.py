"""Plain numpy models, gradients and optimizers: the reference for pm.nn/optim.

Written from the textbook formulas (PyTorch semantics), independent of
paddle_mlir: nothing here imports it. Everything computes in float64 so the
reference error is far below the float32 tolerances the tests use.
"""

import math

import numpy as np


# ----------------------------------------------------------------- layers
def linear(x, w, b):
    """PyTorch layout: w is [out, in]."""
    return x @ w.T + b


def linear_backward(x, w, dy):
    return dy @ w, dy.T @ x, dy.sum(axis=0)  # dx, dw, db


def relu(x):
    return np.maximum(x, 0.0)


def gelu(x):
    erf = np.vectorize(math.erf)
    return 0.5 * x * (1.0 + erf(x / math.sqrt(2.0)))


def log_softmax(z):
    m = z.max(axis=-1, keepdims=True)
    return z - m - np.log(np.exp(z - m).sum(axis=-1, keepdims=True))


def softmax(z, axis=-1):
    e = np.exp(z - z.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def cross_entropy(logits, labels):
    """Mean negative log-likelihood; returns (loss, dlogits)."""
    n = logits.shape[0]
    lp = log_softmax(logits)
    loss = -lp[np.arange(n), labels].mean()
    d = np.exp(lp)
    d[np.arange(n), labels] -= 1.0
    return loss, d / n


def mse(pred, target):
    diff = pred - target
    return (diff ** 2).mean(), 2.0 * diff / diff.size


def im2col(x, kh, kw, pad):
    """x [N,C,H,W] -> columns [N, OH, OW, C*kh*kw] (stride 1)."""
    n, c, h, w = x.shape
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    oh, ow = h + 2 * pad - kh + 1, w + 2 * pad - kw + 1
    cols = np.empty((n, oh, ow, c, kh, kw), x.dtype)
    for i in range(kh):
        for j in range(kw):
            cols[:, :, :, :, i, j] = xp[:, :, i:i + oh, j:j + ow].transpose(0, 2, 3, 1)
    return cols.reshape(n, oh, ow, c * kh * kw)


def conv2d(x, w, b, pad):
    o, c, kh, kw = w.shape
    cols = im2col(x, kh, kw, pad)
    y = cols @ w.reshape(o, -1).T + b  # [N, OH, OW, O]
    return y.transpose(0, 3, 1, 2), cols


def conv2d_backward(x_shape, w, cols, pad, dy):
    n, c, h, wd = x_shape
    o, _, kh, kw = w.shape
    dyt = dy.transpose(0, 2, 3, 1)  # [N, OH, OW, O]
    dw = (dyt.reshape(-1, o).T @ cols.reshape(-1, c * kh * kw)).reshape(w.shape)
    db = dyt.sum(axis=(0, 1, 2))
    dcols = (dyt @ w.reshape(o, -1)).reshape(n, dy.shape[2], dy.shape[3], c, kh, kw)
    dxp = np.zeros((n, c, h + 2 * pad, wd + 2 * pad))
    oh, ow = dy.shape[2], dy.shape[3]
    for i in range(kh):
        for j in range(kw):
            dxp[:, :, i:i + oh, j:j + ow] += dcols[:, :, :, :, i, j].transpose(0, 3, 1, 2)
    return dxp[:, :, pad:pad + h, pad:pad + wd], dw, db


def maxpool2(x):
    """2x2 window, stride 2; returns (y, argmax mask) for the backward."""
    n, c, h, w = x.shape
    win = x.reshape(n, c, h // 2, 2, w // 2, 2).transpose(0, 1, 2, 4, 3, 5)
    win = win.reshape(n, c, h // 2, w // 2, 4)
    y = win.max(axis=-1)
    first = win.argmax(axis=-1)  # ties go to the first element, as PyTorch
    mask = np.zeros_like(win)
    np.put_along_axis(mask, first[..., None], 1.0, axis=-1)
    return y, mask


def maxpool2_backward(x_shape, mask, dy):
    n, c, h, w = x_shape
    d = (mask * dy[..., None]).reshape(n, c, h // 2, w // 2, 2, 2)
    return d.transpose(0, 1, 2, 4, 3, 5).reshape(x_shape)


def batchnorm_train(x, gamma, beta, eps):
    axes = (0, 2, 3)
    mean = x.mean(axis=axes)
    var = x.var(axis=axes)
    xhat = (x - mean[None, :, None, None]) / np.sqrt(var + eps)[None, :, None, None]
    return xhat * gamma[None, :, None, None] + beta[None, :, None, None], mean, var


def layernorm(x, gamma, beta, eps):
    mean = x.mean(axis=-1, keepdims=True)
    var = x.var(axis=-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * gamma + beta


def multi_head_attention(q, k, v, in_w, in_b, out_w, out_b, heads, attn_mask=None,
                         key_padding_mask=None):
    """PyTorch nn.MultiheadAttention(batch_first=True); boolean masks are
    True where attention is NOT allowed. Returns (out, head-averaged weights)."""
    b, lq, e = q.shape
    s = k.shape[1]
    d = e // heads
    wq, wk, wv = in_w[:e], in_w[e:2 * e], in_w[2 * e:]
    bq, bk, bv = in_b[:e], in_b[e:2 * e], in_b[2 * e:]
    qh = linear(q, wq, bq).reshape(b, lq, heads, d).transpose(0, 2, 1, 3)
    kh = linear(k, wk, bk).reshape(b, s, heads, d).transpose(0, 2, 1, 3)
    vh = linear(v, wv, bv).reshape(b, s, heads, d).transpose(0, 2, 1, 3)
    scores = qh @ kh.transpose(0, 1, 3, 2) / math.sqrt(d)
    if attn_mask is not None:
        if attn_mask.dtype == np.bool_:
            scores = np.where(attn_mask, -np.inf, scores)
        else:
            scores = scores + attn_mask
    if key_padding_mask is not None:
        scores = np.where(key_padding_mask[:, None, None, :], -np.inf, scores)
    p = softmax(scores)
    o = (p @ vh).transpose(0, 2, 1, 3).reshape(b, lq, e)
    return linear(o, out_w, out_b), p.mean(axis=1)


# ------------------------------------------------------------- optimizers
class SGD:
    def __init__(self, lr, momentum=0.0, weight_decay=0.0, nesterov=False):
        self.lr, self.momentum, self.wd, self.nesterov = lr, momentum, weight_decay, nesterov
        self.buf = {}

    def step(self, params, grads):
        for name, p in params.items():
            g = grads[name] + self.wd * p
            if self.momentum:
                buf = self.momentum * self.buf.get(name, 0.0) + g
                self.buf[name] = buf
                g = g + self.momentum * buf if self.nesterov else buf
            params[name] = p - self.lr * g


class Adam:
    """Adam (L2 weight decay added to the gradient) or, with decoupled=True,
    AdamW (the parameter shrinks by lr * weight_decay before the update)."""

    def __init__(self, lr, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0, decoupled=False):
        self.lr, self.b1, self.b2, self.eps = lr, betas[0], betas[1], eps
        self.wd, self.decoupled = weight_decay, decoupled
        self.m, self.v, self.t = {}, {}, 0

    def step(self, params, grads):
        self.t += 1
        for name, p in params.items():
            g = grads[name]
            if self.decoupled:
                p = p * (1.0 - self.lr * self.wd)
            else:
                g = g + self.wd * p
            m = self.b1 * self.m.get(name, 0.0) + (1 - self.b1) * g
            v = self.b2 * self.v.get(name, 0.0) + (1 - self.b2) * g * g
            self.m[name], self.v[name] = m, v
            mhat = m / (1 - self.b1 ** self.t)
            vhat = v / (1 - self.b2 ** self.t)
            params[name] = p - self.lr * mhat / (np.sqrt(vhat) + self.eps)


# ----------------------------------------------------------------- models
def mlp_loss_and_grads(p, x, labels):
    """Linear(fc1) -> ReLU -> Linear(fc2) -> cross-entropy."""
    h = linear(x, p["fc1.weight"], p["fc1.bias"])
    a = relu(h)
    logits = linear(a, p["fc2.weight"], p["fc2.bias"])
    loss, dl = cross_entropy(logits, labels)
    da, dw2, db2 = linear_backward(a, p["fc2.weight"], dl)
    dh = da * (h > 0)
    _, dw1, db1 = linear_backward(x, p["fc1.weight"], dh)
    return loss, logits, {"fc1.weight": dw1, "fc1.bias": db1,
                          "fc2.weight": dw2, "fc2.bias": db2}


def cnn_loss_and_grads(p, x, labels):
    """Conv2D(3x3, padding 1) -> ReLU -> MaxPool(2) -> flatten -> Linear."""
    c, cols = conv2d(x, p["conv.weight"], p["conv.bias"], 1)
    r = relu(c)
    m, mask = maxpool2(r)
    f = m.reshape(m.shape[0], -1)
    logits = linear(f, p["fc.weight"], p["fc.bias"])
    loss, dl = cross_entropy(logits, labels)
    df, dwf, dbf = linear_backward(f, p["fc.weight"], dl)
    dr = maxpool2_backward(r.shape, mask, df.reshape(m.shape)) * (c > 0)
    _, dwc, dbc = conv2d_backward(x.shape, p["conv.weight"], cols, 1, dr)
    return loss, logits, {"conv.weight": dwc, "conv.bias": dbc,
                          "fc.weight": dwf, "fc.bias": dbf}
