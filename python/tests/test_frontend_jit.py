"""pm.jit: pytrees, the per-signature cache, static arguments, lower(),
export/save, donation."""

import collections

import numpy as np
import pytest

import paddle_mlir as pm
from paddle_mlir import _core

RTOL = 1e-5


def test_pytrees_in_and_out():
    Pair = collections.namedtuple("Pair", "a b")

    @pm.jit
    def f(params, batch):
        h = pm.tanh(batch["x"] @ params[0]["w"] + params[0]["b"])
        return {"y": h @ params[1], "n": Pair(pm.sum(h), None),
                "l": [h.shape[0] * 1.0, batch["x"]]}

    rng = np.random.default_rng(0)
    w = rng.standard_normal((3, 4)).astype(np.float32)
    b = rng.standard_normal(4).astype(np.float32)
    v = rng.standard_normal((4, 2)).astype(np.float32)
    x = rng.standard_normal((5, 3)).astype(np.float32)
    out = f([{"w": w, "b": b}, v], {"x": x})
    h = np.tanh(x @ w + b)
    assert set(out) == {"y", "n", "l"}
    np.testing.assert_allclose(out["y"], h @ v, rtol=RTOL, atol=1e-6)
    assert isinstance(out["n"], Pair) and out["n"].b is None
    np.testing.assert_allclose(out["n"].a, h.sum(), rtol=RTOL)
    assert isinstance(out["l"], list)
    assert out["l"][0] == 5.0
    np.testing.assert_array_equal(out["l"][1], x)
    assert isinstance(out["y"], np.ndarray)


def test_cache_hits_and_misses():
    calls = []

    @pm.jit
    def f(x, y):
        calls.append(1)
        return x * y + 1

    a = np.ones((2, 3), np.float32)
    n = pm.compile_count()
    f(a, a)
    f(a + 1, a * 2)           # same signature: hit
    assert f.cache_size() == 1 and len(calls) == 1
    f(np.ones((3, 3), np.float32), a[:1])   # new shapes
    f(a.astype(np.float64), a)              # new dtype
    f(a, 2.0)                               # weak scalar: new signature
    f(a, 3.0)                               # same signature: hit
    assert f.cache_size() == 4 and len(calls) == 4
    assert pm.compile_count() == n + 4
    f.clear_cache()
    f(a, a)
    assert f.cache_size() == 1 and len(calls) == 5


def test_static_args():
    @pm.jit(static_argnums=1, static_argnames="mode")
    def f(x, axis, mode="sum"):
        return pm.sum(x, axis=axis) if mode == "sum" else pm.max(x, axis)

    x = np.random.default_rng(1).standard_normal((3, 4)).astype(np.float32)
    np.testing.assert_allclose(f(x, 0), x.sum(0), rtol=RTOL)
    np.testing.assert_allclose(f(x, 1), x.sum(1), rtol=RTOL)
    np.testing.assert_allclose(f(x, 1, mode="max"), x.max(1), rtol=RTOL)
    f(x, 1, mode="max")
    assert f.cache_size() == 3


def test_non_array_argument_needs_static():
    f = pm.jit(lambda x, name: x)
    with pytest.raises(TypeError, match="static_argnums"):
        f(np.ones(2, np.float32), "relu")


def test_lower_text():
    def mlp(x, w):
        return pm.tanh(x @ w).sum()

    text = pm.jit(mlp).lower(np.ones((2, 3), np.float32),
                             np.ones((3, 4), np.float32))
    assert "func.func @mlp(" in text
    assert "tensor<2x3xf32>" in text and "tensor<3x4xf32>" in text
    for op in ("paddle.matmul", "paddle.tanh", "paddle.reduce_sum"):
        assert op in text, op
    assert pm.lower(mlp, np.ones((2, 3), np.float32),
                    np.ones((3, 4), np.float32)) == text
    # With locations: this file's name and the lines of mlp.
    dbg = pm.jit(mlp).lower(np.ones((2, 3), np.float32),
                            np.ones((3, 4), np.float32), debug_info=True)
    assert "test_frontend_jit.py" in dbg


def test_save_and_load(tmp_path):
    def f(x):
        return pm.exp(x) * 2.0

    path = tmp_path / "model.mlirbc"
    pm.save(f, np.ones((4,), np.float32), path=str(path))
    data = path.read_bytes()
    assert data[:4] == b"ML\xefR"  # MLIR bytecode magic
    m = _core.Module.load(_core.Context(), str(path))
    assert "paddle.exp" in str(m)
    exe = _core.compile(m)
    x = np.arange(4, dtype=np.float32)
    np.testing.assert_allclose(exe.run("f", [x])[0], np.exp(x) * 2,
                               rtol=RTOL)
    txt = tmp_path / "model.mlir"
    pm.jit(f).export(str(txt), np.ones((4,), np.float32))
    assert "paddle.exp" in txt.read_text()


def test_inputs_not_copied_results_numpy():
    f = pm.jit(lambda x: x + 1.0)
    x = np.arange(6, dtype=np.float32)
    r = f(x)
    assert isinstance(r, np.ndarray) and r.dtype == np.float32
    # Non-contiguous and other-dtype inputs are converted, not rejected.
    y = np.arange(12, dtype=np.float32)[::2]
    np.testing.assert_array_equal(f(y), y + 1)
    z = np.arange(6, dtype=np.float64)
    assert f(z).dtype == np.float64


def test_jit_inside_jit_and_closures():
    inner = pm.jit(lambda x: x * 2)
    w = np.full((3,), 0.5, np.float32)

    @pm.jit
    def outer(x):
        return inner(x) + w  # w: a constant in the trace

    x = np.arange(3, dtype=np.float32)
    np.testing.assert_allclose(outer(x), x * 2 + 0.5)
    assert inner.cache_size() == 0  # traced inline, never compiled alone


def test_donation():
    f = pm.jit(lambda x, g: x - 0.1 * g, donate_argnums=0)
    x = np.ones(5, np.float32)
    g = np.arange(5, dtype=np.float32)
    r = f(x, g)
    want = 1 - 0.1 * np.arange(5, dtype=np.float32)
    np.testing.assert_allclose(r, want, rtol=RTOL)
    if "paddle.aliasing_output" in f.lower(x, g):
        assert r is x  # the result was written into the donated buffer


def test_saved_bytecode_runs_in_paddle_run(tmp_path):
    # The AOT hand-off: what pm.save writes, paddle-run executes.
    import subprocess

    from paddle_testing import PADDLE_RUN

    def predict(x, w):
        return pm.softmax(x @ w, axis=-1)

    rng = np.random.default_rng(3)
    x = rng.standard_normal((4, 3)).astype(np.float32)
    w = rng.standard_normal((3, 5)).astype(np.float32)
    path = tmp_path / "predict.mlirbc"
    pm.save(predict, x, w, path=str(path))
    np.save(tmp_path / "x.npy", x)
    np.save(tmp_path / "w.npy", w)
    out = tmp_path / "out"
    proc = subprocess.run(
        [str(PADDLE_RUN), str(path), "--function", "predict", "--input",
         str(tmp_path / "x.npy"), "--input", str(tmp_path / "w.npy"),
         "--output-dir", str(out)], capture_output=True, text=True,
        timeout=300)
    assert proc.returncode == 0, proc.stderr
    (res,) = sorted(out.glob("*.npy"))
    np.testing.assert_allclose(np.load(res), pm.jit(predict)(x, w),
                               rtol=1e-5, atol=1e-7)
