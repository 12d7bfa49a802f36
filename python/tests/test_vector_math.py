"""Transcendentals on vectors (paddle-tile-and-vectorize, docs/fusion.md,
"Vectorized transcendentals"): exp, log, tanh, erf and the ops built on them
(sigmoid, both gelus) over a [64, 256] tensor, which the pass vectorizes,
run through paddle-run and compared with float64 numpy.

The vector code evaluates upstream's polynomial approximations instead of
libm. The tolerance, rtol 2e-6 and atol 1e-7 (atol 1e-6 for the gelus,
whose products of two rounded factors near 0 cancel), is a few f32 ulp: it
would catch a wrong coefficient or a broken range reduction, which are off
by far more. The inputs cover each function's range reduction: exp from
-87 to 88 (its clamped range), log over 60 binades, tanh and erf through
their saturation. test_vector_math_leaves_no_libm_calls checks that the
vector kernels no longer call libm, so these tests exercise the
approximations rather than libm."""

import math
import subprocess

import numpy as np
import pytest

from paddle_testing import PADDLE_OPT, run_module

SHAPE = (64, 256)
T = "tensor<64x256xf32>"

rng = np.random.default_rng(11)


def spread(lo, hi):
    """SHAPE values from lo to hi, evenly spaced and shuffled (each SIMD
    lane sees a mix), with a few exact points: 0 where lo < 0 < hi."""
    x = np.linspace(lo, hi, SHAPE[0] * SHAPE[1])
    rng.shuffle(x)
    if lo < 0 < hi:
        x[:4] = [0.0, -0.0, lo, hi]
    return x.astype(np.float32).reshape(SHAPE)


def log_spread():
    x = np.exp2(np.linspace(-30, 30, SHAPE[0] * SHAPE[1]))
    rng.shuffle(x)
    x[:2] = [1.0, 2.0]
    return x.astype(np.float32).reshape(SHAPE)


erf64 = np.vectorize(math.erf)


def gelu(x):
    return 0.5 * x * (1 + erf64(x / math.sqrt(2)))


def gelu_tanh(x):
    return 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3)))


CASES = {
    "exp": ("paddle.exp %x", lambda: spread(-87, 88), np.exp, 1e-7),
    "exp-small": ("paddle.exp %x", lambda: spread(-4, 4), np.exp, 1e-7),
    "log": ("paddle.log %x", log_spread, np.log, 1e-7),
    "tanh": ("paddle.tanh %x", lambda: spread(-12, 12), np.tanh, 1e-7),
    "tanh-small": ("paddle.tanh %x", lambda: spread(-0.5, 0.5), np.tanh, 1e-7),
    "erf": ("paddle.erf %x", lambda: spread(-6, 6), erf64, 1e-7),
    "erf-small": ("paddle.erf %x", lambda: spread(-0.5, 0.5), erf64, 1e-7),
    "sigmoid": ("paddle.sigmoid %x", lambda: spread(-30, 30),
                lambda x: 1 / (1 + np.exp(-x)), 1e-7),
    "gelu": ("paddle.gelu %x", lambda: spread(-8, 8), gelu, 1e-6),
    "gelu-tanh": ("paddle.gelu %x {approximate}", lambda: spread(-8, 8),
                  gelu_tanh, 1e-6),
}


def module(op):
    return f"""
func.func @main(%x: {T}) -> {T} {{
  %y = {op} : {T} -> {T}
  return %y : {T}
}}"""


@pytest.mark.parametrize("name", sorted(CASES))
def test_vector_math_matches_numpy(tmp_path, name):
    op, make, reference, atol = CASES[name]
    x = make()
    (y,) = run_module(tmp_path, module(op), [x])
    expected = reference(x.astype(np.float64))
    assert y.dtype == np.float32 and y.shape == SHAPE
    np.testing.assert_allclose(y, expected, rtol=2e-6, atol=atol)


@pytest.mark.parametrize("op", ["paddle.exp %x", "paddle.log %x",
                                "paddle.tanh %x", "paddle.erf %x"])
def test_vector_math_leaves_no_libm_calls(tmp_path, op):
    path = tmp_path / "in.mlir"
    path.write_text(module(op))
    llvm = subprocess.run([str(PADDLE_OPT), str(path), "--paddle-cpu-pipeline"],
                          capture_output=True, text=True, check=True).stdout
    assert "llvm.func @main" in llvm
    for fn in ["expf", "logf", "tanhf", "erff"]:
        assert f"@{fn}(" not in llvm, f"{op}: a call of {fn} is left"
