"""grad, value_and_grad, vjp vs analytic gradients and finite differences;
grad of grad; jit and grad composed in both orders.

float32 gradients are compared with analytic ones at rtol 1e-4 / atol 1e-5;
finite differences run in float64 (central, h = 1e-6) at rtol 1e-5.
"""

import numpy as np
import pytest

import paddle_mlir as pm


@pytest.fixture(scope="module", autouse=True)
def fast_compiles():
    # opt_level 0 compiles ~10x faster; test_jit_grad_equals_grad_jit runs
    # the default (3) as well.
    prev = pm.set_default_opt_level(0)
    yield
    pm.set_default_opt_level(prev)


RNG = np.random.default_rng(7)


def _fd(f, args, argnum, h=1e-6):
    """Central finite differences of scalar f wrt args[argnum] (float64)."""
    x = np.array(args[argnum], dtype=np.float64)
    g = np.zeros_like(x)
    for idx in np.ndindex(x.shape):
        xp, xm = x.copy(), x.copy()
        xp[idx] += h
        xm[idx] -= h
        a1, a2 = list(args), list(args)
        a1[argnum], a2[argnum] = xp, xm
        g[idx] = (float(f(*a1)) - float(f(*a2))) / (2 * h)
    return g


def test_grad_tanh_sum():
    x = RNG.standard_normal((3, 4)).astype(np.float32)
    g = pm.grad(lambda x: pm.sum(pm.tanh(x)))(x)
    assert g.dtype == np.float32 and g.shape == x.shape
    np.testing.assert_allclose(g, 1 - np.tanh(x) ** 2, rtol=1e-4, atol=1e-5)


def _mlp_loss(params, x, y):
    w1, b1, w2 = params["w1"], params["b1"], params["w2"]
    h = pm.tanh(x @ w1 + b1)
    out = h @ w2
    return pm.mean((out - y) ** 2)


def _mlp_np(params, x, y):
    h = np.tanh(x @ params["w1"] + params["b1"])
    out = h @ params["w2"]
    d = out - y
    loss = np.mean(d ** 2)
    dout = 2 * d / d.size
    gw2 = h.T @ dout
    dh = dout @ params["w2"].T * (1 - h ** 2)
    return loss, {"w1": x.T @ dh, "b1": dh.sum(0), "w2": gw2}


@pytest.fixture(scope="module")
def mlp_data():
    p = {"w1": RNG.standard_normal((5, 8)) * 0.5,
         "b1": RNG.standard_normal(8) * 0.1,
         "w2": RNG.standard_normal((8, 3)) * 0.5}
    x, y = RNG.standard_normal((6, 5)), RNG.standard_normal((6, 3))
    return p, x, y


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_mlp_value_and_grad(mlp_data, dtype):
    p, x, y = mlp_data
    p = {k: v.astype(dtype) for k, v in p.items()}
    x, y = x.astype(dtype), y.astype(dtype)
    loss, g = pm.value_and_grad(_mlp_loss)(p, x, y)
    want_loss, want_g = _mlp_np(p, x, y)
    tol = dict(rtol=1e-4, atol=1e-5) if dtype == np.float32 else \
        dict(rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(loss, want_loss, **tol)
    assert set(g) == {"w1", "b1", "w2"}
    for k in g:
        assert g[k].dtype == dtype
        np.testing.assert_allclose(g[k], want_g[k], **tol)


def test_mlp_grad_vs_finite_differences(mlp_data):
    p, x, y = mlp_data
    g = pm.grad(_mlp_loss, argnums=(0, 1))(p, x, y)
    fd_w1 = _fd(lambda w1, x: _mlp_np({**p, "w1": w1}, x, y)[0],
                [p["w1"], x], 0)
    fd_x = _fd(lambda w1, x: _mlp_np(p, x, y)[0], [p["w1"], x], 1)
    np.testing.assert_allclose(g[0]["w1"], fd_w1, rtol=1e-5, atol=1e-8)
    np.testing.assert_allclose(g[1], fd_x, rtol=1e-5, atol=1e-8)


def _xent(logits, labels):
    logp = pm.log_softmax(logits, axis=-1)
    return -pm.mean(pm.sum(logp * pm.one_hot(labels, logits.shape[-1],
                                             logits.dtype), axis=-1))


def test_softmax_cross_entropy():
    logits = RNG.standard_normal((5, 4))
    labels = np.array([0, 3, 1, 1, 2])
    g = pm.grad(_xent)(logits, labels)
    e = np.exp(logits - logits.max(-1, keepdims=True))
    sm = e / e.sum(-1, keepdims=True)
    want = (sm - np.eye(4)[labels]) / 5
    np.testing.assert_allclose(g, want, rtol=1e-10, atol=1e-12)

    def np_xent(lg):
        lp = lg - np.log(np.exp(lg).sum(-1, keepdims=True))
        return -np.mean(lp[np.arange(5), labels])

    np.testing.assert_allclose(g, _fd(np_xent, [logits], 0), rtol=1e-5,
                               atol=1e-8)
    # float32 too
    g32 = pm.grad(_xent)(logits.astype(np.float32), labels)
    np.testing.assert_allclose(g32, want, rtol=1e-4, atol=1e-6)


def test_grad_of_grad():
    x = np.linspace(-2, 2, 7)
    d1 = pm.grad(lambda x: pm.sum(pm.tanh(x)))
    d2 = pm.grad(lambda x: pm.sum(d1(x)))
    t = np.tanh(x)
    np.testing.assert_allclose(d2(x), -2 * t * (1 - t ** 2), rtol=1e-10,
                               atol=1e-12)
    cube = pm.grad(pm.grad(lambda x: x ** 3))
    np.testing.assert_allclose(cube(1.5), 9.0, rtol=1e-12)
    third = pm.grad(pm.grad(pm.grad(lambda x: x ** 3)))
    np.testing.assert_allclose(third(0.3), 6.0, rtol=1e-12)


def test_jit_grad_equals_grad_jit():
    def f(w, x):
        return pm.sum(pm.sigmoid(x @ w) ** 2)

    w = RNG.standard_normal((4, 3)).astype(np.float32)
    x = RNG.standard_normal((5, 4)).astype(np.float32)
    a = pm.jit(pm.grad(f), opt_level=3)(w, x)
    b = pm.grad(pm.jit(f))(w, x)
    c = pm.grad(f)(w, x)
    np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(a, c, rtol=1e-6, atol=1e-7)
    jg = pm.jit(pm.grad(f))
    jg(w, x)
    assert jg.cache_size() == 1


def test_grad_inside_jit_with_closure():
    # The differentiated function closes over a traced value of the
    # enclosing jit: it becomes an extra, non-differentiated argument.
    @pm.jit
    def step(w, x):
        g = pm.grad(lambda w: pm.sum((x @ w) ** 2))(w)
        return w - 0.1 * g

    w = RNG.standard_normal((3, 2))
    x = RNG.standard_normal((4, 3))
    want = w - 0.1 * (2 * x.T @ (x @ w))
    np.testing.assert_allclose(step(w, x), want, rtol=1e-10)


def test_vjp_pytrees():
    def f(a, b):
        return {"s": pm.sin(a) * b, "p": a @ b}

    a = RNG.standard_normal((3, 3))
    b = RNG.standard_normal((3, 3))
    out, vjp_fn = pm.vjp(f, a, b)
    np.testing.assert_allclose(out["s"], np.sin(a) * b)
    np.testing.assert_allclose(out["p"], a @ b)
    cs, cp = RNG.standard_normal((3, 3)), RNG.standard_normal((3, 3))
    ga, gb = vjp_fn({"s": cs, "p": cp})
    np.testing.assert_allclose(ga, np.cos(a) * b * cs + cp @ b.T,
                               rtol=1e-10)
    np.testing.assert_allclose(gb, np.sin(a) * cs + a.T @ cp, rtol=1e-10)

    # Inside jit too.
    @pm.jit
    def g(a, b, cs, cp):
        _, fn = pm.vjp(f, a, b)
        return fn({"s": cs, "p": cp})

    ga2, gb2 = g(a, b, cs, cp)
    np.testing.assert_allclose(ga2, ga, rtol=1e-12)
    np.testing.assert_allclose(gb2, gb, rtol=1e-12)


def test_argnums_and_has_aux():
    def f(x, y, z):
        r = pm.sum(x * y + pm.exp(z))
        return r, {"r2": r * 2}

    x, y, z = (RNG.standard_normal(4) for _ in range(3))
    (v, aux), (gx, gz) = pm.value_and_grad(f, argnums=(0, 2),
                                           has_aux=True)(x, y, z)
    np.testing.assert_allclose(v, np.sum(x * y + np.exp(z)))
    np.testing.assert_allclose(aux["r2"], 2 * v)
    np.testing.assert_allclose(gx, y)
    np.testing.assert_allclose(gz, np.exp(z))
    g, aux2 = pm.grad(f, argnums=1, has_aux=True)(x, y, z)
    np.testing.assert_allclose(g, x)
    np.testing.assert_allclose(aux2["r2"], 2 * v)
