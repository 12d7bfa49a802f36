"""paddle-fuse / paddle-lower-fusion end to end: each fusion kind runs through
paddle-run (the CPU pipeline fuses by default) and is compared with a float64
numpy reference; the IR check makes sure the group actually formed (or, for
the must-not-fuse cases, did not), so a test cannot pass on unfused code.

Tolerances: rtol 1e-5 and atol 1e-5 (float32 results of a few dozen
operations per element; exp/erf come from libm or the vector lowering)."""

import subprocess

import numpy as np
import pytest

from paddle_testing import PADDLE_OPT, run_module

RTOL = 1e-5
ATOL = 1e-5


def fusion_kinds(tmp_path, text):
    """The kinds of the paddle.fusion ops paddle-fuse makes of `text`."""
    path = tmp_path / "fuse_input.mlir"
    path.write_text(text)
    proc = subprocess.run([str(PADDLE_OPT), str(path), "--paddle-fuse"],
                          capture_output=True, text=True, check=True)
    kinds = []
    for line in proc.stdout.splitlines():
        if "paddle.fusion" in line:
            kinds.append(line.split("paddle.fusion")[1].split('"')[1])
    return kinds


def gelu(x):
    from math import erf
    return 0.5 * x * (1 + np.vectorize(erf)(x / np.sqrt(2)))


def softmax(x, axis=-1):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def layer_norm(x, g, b, eps=1e-5):
    m = x.mean(axis=-1, keepdims=True)
    v = ((x - m) ** 2).mean(axis=-1, keepdims=True)
    return (x - m) / np.sqrt(v + eps) * g + b


rng = np.random.default_rng(5)


def rand(*shape):
    return rng.standard_normal(shape).astype(np.float32)


CASES = {
    "elementwise": (
        """
func.func @main(%x: tensor<64x128xf32>, %b: tensor<128xf32>) -> tensor<64x128xf32> {
  %c = paddle.constant dense<2.0> : tensor<f32>
  %0 = paddle.add %x, %b : tensor<64x128xf32>, tensor<128xf32> -> tensor<64x128xf32>
  %1 = paddle.relu %0 : tensor<64x128xf32> -> tensor<64x128xf32>
  %2 = paddle.mul %1, %c : tensor<64x128xf32>, tensor<f32> -> tensor<64x128xf32>
  return %2 : tensor<64x128xf32>
}""",
        lambda: [rand(64, 128), rand(128)],
        lambda x, b: np.maximum(x + b, 0) * 2,
        ["elementwise"]),
    "softmax with scale and mask": (
        """
func.func @main(%x: tensor<4x64x96xf32>, %mask: tensor<64x96xf32>) -> tensor<4x64x96xf32> {
  %c = paddle.constant dense<0.125> : tensor<f32>
  %t = paddle.mul %x, %c : tensor<4x64x96xf32>, tensor<f32> -> tensor<4x64x96xf32>
  %m = paddle.add %t, %mask : tensor<4x64x96xf32>, tensor<64x96xf32> -> tensor<4x64x96xf32>
  %p = paddle.softmax %m axis = -1 : tensor<4x64x96xf32> -> tensor<4x64x96xf32>
  return %p : tensor<4x64x96xf32>
}""",
        lambda: [rand(4, 64, 96) * 4, rand(64, 96)],
        lambda x, m: softmax(x * 0.125 + m),
        ["softmax"]),
    "softmax over a middle axis": (
        """
func.func @main(%x: tensor<8x32x16xf32>) -> tensor<8x32x16xf32> {
  %e = paddle.neg %x : tensor<8x32x16xf32> -> tensor<8x32x16xf32>
  %p = paddle.softmax %e axis = 1 : tensor<8x32x16xf32> -> tensor<8x32x16xf32>
  return %p : tensor<8x32x16xf32>
}""",
        lambda: [rand(8, 32, 16)],
        lambda x: softmax(-x, axis=1),
        ["softmax"]),
    "layer_norm with residual": (
        """
func.func @main(%x: tensor<32x768xf32>, %r: tensor<32x768xf32>, %g: tensor<768xf32>, %b: tensor<768xf32>) -> tensor<32x768xf32> {
  %a = paddle.add %x, %r : tensor<32x768xf32>, tensor<32x768xf32> -> tensor<32x768xf32>
  %y = paddle.layer_norm %a scale %g bias %b axes = [-1] : tensor<32x768xf32>, tensor<768xf32>, tensor<768xf32> -> tensor<32x768xf32>
  return %y : tensor<32x768xf32>
}""",
        lambda: [rand(32, 768), rand(32, 768), rand(768), rand(768)],
        lambda x, r, g, b: layer_norm(x + r, g, b),
        ["layer_norm"]),
    "decomposed layer norm": (
        """
func.func @main(%x: tensor<16x64xf32>) -> tensor<16x64xf32> {
  %eps = paddle.constant dense<1.0e-5> : tensor<f32>
  %m = paddle.reduce_mean %x axes = [1] keepdims : tensor<16x64xf32> -> tensor<16x1xf32>
  %d = paddle.sub %x, %m : tensor<16x64xf32>, tensor<16x1xf32> -> tensor<16x64xf32>
  %sq = paddle.mul %d, %d : tensor<16x64xf32>, tensor<16x64xf32> -> tensor<16x64xf32>
  %v = paddle.reduce_mean %sq axes = [1] keepdims : tensor<16x64xf32> -> tensor<16x1xf32>
  %ve = paddle.add %v, %eps : tensor<16x1xf32>, tensor<f32> -> tensor<16x1xf32>
  %r = paddle.rsqrt %ve : tensor<16x1xf32> -> tensor<16x1xf32>
  %y = paddle.mul %d, %r : tensor<16x64xf32>, tensor<16x1xf32> -> tensor<16x64xf32>
  return %y : tensor<16x64xf32>
}""",
        lambda: [rand(16, 64)],
        lambda x: layer_norm(x, 1.0, 0.0),
        # The final scale reads rsqrt(var) broadcast over the columns: the
        # cost model will not recompute it per element, so the mean and
        # the variance end up in two groups (see test/Transforms/fuse.mlir).
        ["reduction", "reduction"]),
    "rms norm (final scale left out)": (
        """
func.func @main(%x: tensor<32x256xf32>) -> tensor<32x256xf32> {
  %eps = paddle.constant dense<1.0e-6> : tensor<f32>
  %0 = paddle.mul %x, %x : tensor<32x256xf32>, tensor<32x256xf32> -> tensor<32x256xf32>
  %1 = paddle.reduce_mean %0 axes = [1] keepdims : tensor<32x256xf32> -> tensor<32x1xf32>
  %2 = paddle.add %1, %eps : tensor<32x1xf32>, tensor<f32> -> tensor<32x1xf32>
  %3 = paddle.rsqrt %2 : tensor<32x1xf32> -> tensor<32x1xf32>
  %4 = paddle.mul %x, %3 : tensor<32x256xf32>, tensor<32x1xf32> -> tensor<32x256xf32>
  return %4 : tensor<32x256xf32>
}""",
        lambda: [rand(32, 256)],
        lambda x: x / np.sqrt((x * x).mean(axis=1, keepdims=True) + 1e-6),
        ["reduction"]),
    "reductions of two shapes": (
        """
func.func @main(%x: tensor<16x64xf32>) -> tensor<f32> {
  %e = paddle.exp %x : tensor<16x64xf32> -> tensor<16x64xf32>
  %s = paddle.reduce_sum %e axes = [1] : tensor<16x64xf32> -> tensor<16xf32>
  %t = paddle.reduce_sum %s axes = [0] : tensor<16xf32> -> tensor<f32>
  return %t : tensor<f32>
}""",
        lambda: [rand(16, 64)],
        lambda x: np.exp(x).sum(),
        ["reduction"]),
    "matmul epilogue": (
        """
func.func @main(%x: tensor<64x96xf32>, %w: tensor<96x96xf32>, %b: tensor<96xf32>) -> tensor<64x96xf32> {
  %0 = paddle.matmul %x, %w : tensor<64x96xf32>, tensor<96x96xf32> -> tensor<64x96xf32>
  %1 = paddle.add %0, %b : tensor<64x96xf32>, tensor<96xf32> -> tensor<64x96xf32>
  %2 = paddle.gelu %1 : tensor<64x96xf32> -> tensor<64x96xf32>
  %3 = paddle.add %2, %x : tensor<64x96xf32>, tensor<64x96xf32> -> tensor<64x96xf32>
  return %3 : tensor<64x96xf32>
}""",
        lambda: [rand(64, 96), rand(96, 96) * 0.1, rand(96)],
        lambda x, w, b: gelu(x @ w + b) + x,
        ["matmul"]),
    "conv epilogue": (
        """
func.func @main(%x: tensor<1x8x10x10xf32>, %w: tensor<16x8x3x3xf32>, %b: tensor<16x1x1xf32>) -> tensor<1x16x8x8xf32> {
  %0 = paddle.conv2d %x, %w : tensor<1x8x10x10xf32>, tensor<16x8x3x3xf32> -> tensor<1x16x8x8xf32>
  %1 = paddle.add %0, %b : tensor<1x16x8x8xf32>, tensor<16x1x1xf32> -> tensor<1x16x8x8xf32>
  %2 = paddle.relu %1 : tensor<1x16x8x8xf32> -> tensor<1x16x8x8xf32>
  return %2 : tensor<1x16x8x8xf32>
}""",
        lambda: [rand(1, 8, 10, 10), rand(16, 8, 3, 3), rand(16, 1, 1)],
        lambda x, w, b: np.maximum(conv2d(x, w) + b, 0),
        ["conv"]),
    "expensive broadcast producer stays out": (
        """
func.func @main(%x: tensor<512x128xf32>, %b: tensor<128xf32>) -> tensor<512x128xf32> {
  %0 = paddle.exp %b : tensor<128xf32> -> tensor<128xf32>
  %1 = paddle.add %x, %0 : tensor<512x128xf32>, tensor<128xf32> -> tensor<512x128xf32>
  return %1 : tensor<512x128xf32>
}""",
        lambda: [rand(512, 128), rand(128)],
        lambda x, b: x + np.exp(b),
        []),
}


def conv2d(x, w):
    n, c, h, wd = x.shape
    f, _, kh, kw = w.shape
    out = np.zeros((n, f, h - kh + 1, wd - kw + 1))
    for i in range(kh):
        for j in range(kw):
            patch = x[:, :, i:i + h - kh + 1, j:j + wd - kw + 1].astype(np.float64)
            out += np.einsum("nchw,fc->nfhw", patch, w[:, :, i, j])
    return out


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("name", list(CASES))
def test_fused_kernel_matches_numpy(tmp_path, name, threads):
    text, make_inputs, reference, kinds = CASES[name]
    assert fusion_kinds(tmp_path, text) == kinds
    inputs = make_inputs()
    (got,) = run_module(tmp_path, text, inputs,
                        extra_args=["--threads", str(threads)])
    want = reference(*[x.astype(np.float64) for x in inputs])
    np.testing.assert_allclose(got, want, rtol=RTOL, atol=ATOL)


def test_dynamic_rows_are_not_tiled_but_correct(tmp_path):
    # A dynamic row count: paddle-lower-fusion does not tile (the sizes are
    # not known), the group's ops still run, fused where elementwise.
    text = """
func.func @main(%x: tensor<?x48xf32>, %g: tensor<48xf32>, %b: tensor<48xf32>) -> tensor<?x48xf32> {
  %a = paddle.relu %x : tensor<?x48xf32> -> tensor<?x48xf32>
  %y = paddle.layer_norm %a scale %g bias %b axes = [-1] : tensor<?x48xf32>, tensor<48xf32>, tensor<48xf32> -> tensor<?x48xf32>
  return %y : tensor<?x48xf32>
}"""
    assert fusion_kinds(tmp_path, text) == ["layer_norm"]
    x, g, b = rand(7, 48), rand(48), rand(48)
    (got,) = run_module(tmp_path, text, [x, g, b])
    want = layer_norm(np.maximum(x.astype(np.float64), 0), g, b)
    np.testing.assert_allclose(got, want, rtol=RTOL, atol=ATOL)


def test_fusion_in_cost_report(tmp_path):
    # A group is one kernel in the report: one line with its predicted
    # time, its members listed below it, and the total counts the group.
    text = CASES["layer_norm with residual"][0]
    path = tmp_path / "m.mlir"
    path.write_text(text)
    proc = subprocess.run(
        [str(PADDLE_OPT), str(path), "--paddle-fuse",
         "--paddle-cost-report", "-o", str(tmp_path / "out.mlir")],
        capture_output=True, text=True, check=True)
    lines = proc.stdout.splitlines()
    group = [l for l in lines if "group layer_norm" in l]
    assert len(group) == 1
    # Boundary traffic only: x, r, g, b in and y out, float32.
    assert int(group[0].split()[-3]) == 4 * (3 * 32 * 768 + 2 * 768)
    assert any("paddle.layer_norm" in l for l in lines)
    assert "(1 ops)" in lines[-1]


@pytest.mark.parametrize("name", ["softmax with scale and mask",
                                  "layer_norm with residual",
                                  "matmul epilogue"])
def test_fuse_off_matches(tmp_path, name):
    # --fuse=0 (upstream elementwise fusion only) and the default agree with
    # each other and with numpy; _core.compile(options="fuse=false") is the same switch.
    text, make_inputs, reference, _ = CASES[name]
    inputs = make_inputs()
    (tmp_path / "on").mkdir()
    (tmp_path / "off").mkdir()
    (on,) = run_module(tmp_path / "on", text, inputs)
    (off,) = run_module(tmp_path / "off", text, inputs, extra_args=["--fuse=0"])
    want = reference(*[x.astype(np.float64) for x in inputs])
    np.testing.assert_allclose(off, want, rtol=RTOL, atol=ATOL)
    np.testing.assert_allclose(on, off, rtol=RTOL, atol=ATOL)

    from paddle_mlir import _core
    ctx = _core.Context()
    module = _core.Module.parse(ctx, text)
    got = _core.compile(module, options="fuse=false").run("main", inputs)[0]
    np.testing.assert_allclose(got, want, rtol=RTOL, atol=ATOL)


# An Adam-like step, the parameter and both moments donated: m' and v' are
# returned (written into m and v) and read by the parameter update, which
# multi-output fusion makes one loop writing all three.
ADAM_STEP = """
func.func @main(%p: tensor<96x160xf32> {paddle.aliasing_output = 0 : i64},
                %m: tensor<96x160xf32> {paddle.aliasing_output = 1 : i64},
                %v: tensor<96x160xf32> {paddle.aliasing_output = 2 : i64},
                %g: tensor<96x160xf32>)
    -> (tensor<96x160xf32>, tensor<96x160xf32>, tensor<96x160xf32>) {
  %b1 = paddle.constant dense<0.9> : tensor<f32>
  %c1 = paddle.constant dense<0.1> : tensor<f32>
  %b2 = paddle.constant dense<0.999> : tensor<f32>
  %c2 = paddle.constant dense<0.001> : tensor<f32>
  %lr = paddle.constant dense<0.01> : tensor<f32>
  %eps = paddle.constant dense<1.0e-8> : tensor<f32>
  %m0 = paddle.mul %m, %b1 : tensor<96x160xf32>, tensor<f32> -> tensor<96x160xf32>
  %m1 = paddle.mul %g, %c1 : tensor<96x160xf32>, tensor<f32> -> tensor<96x160xf32>
  %mn = paddle.add %m0, %m1 : tensor<96x160xf32>, tensor<96x160xf32> -> tensor<96x160xf32>
  %g2 = paddle.mul %g, %g : tensor<96x160xf32>, tensor<96x160xf32> -> tensor<96x160xf32>
  %v0 = paddle.mul %v, %b2 : tensor<96x160xf32>, tensor<f32> -> tensor<96x160xf32>
  %v1 = paddle.mul %g2, %c2 : tensor<96x160xf32>, tensor<f32> -> tensor<96x160xf32>
  %vn = paddle.add %v0, %v1 : tensor<96x160xf32>, tensor<96x160xf32> -> tensor<96x160xf32>
  %r = paddle.sqrt %vn : tensor<96x160xf32> -> tensor<96x160xf32>
  %d = paddle.add %r, %eps : tensor<96x160xf32>, tensor<f32> -> tensor<96x160xf32>
  %q = paddle.div %mn, %d : tensor<96x160xf32>, tensor<96x160xf32> -> tensor<96x160xf32>
  %s = paddle.mul %q, %lr : tensor<96x160xf32>, tensor<f32> -> tensor<96x160xf32>
  %pn = paddle.sub %p, %s : tensor<96x160xf32>, tensor<96x160xf32> -> tensor<96x160xf32>
  return %pn, %mn, %vn : tensor<96x160xf32>, tensor<96x160xf32>, tensor<96x160xf32>
}"""


def test_multi_output_fusion_is_one_loop(tmp_path):
    path = tmp_path / "adam.mlir"
    path.write_text(ADAM_STEP)
    proc = subprocess.run(
        [str(PADDLE_OPT), str(path), "--paddle-fuse", "--paddle-convert-paddle-to-linalg",
         "--canonicalize", "--cse", "--paddle-lower-fusion"],
        capture_output=True, text=True, check=True)
    generics = [l for l in proc.stdout.splitlines() if "linalg.generic" in l]
    assert len(generics) == 1 and ":3 = linalg.generic" in generics[0], proc.stdout


@pytest.mark.parametrize("threads", [1, 2])
def test_multi_output_fusion_updates_in_place(threads):
    # Three steps in place against float64 numpy (rtol 1e-5: a few float32
    # operations per element and step).
    from paddle_mlir import _core
    exe = _core.compile(_core.Module.parse(_core.Context(), ADAM_STEP))
    shape = (96, 160)
    p, m, g = rand(*shape), rand(*shape), rand(*shape)
    v = np.abs(rand(*shape))
    want = [a.astype(np.float64) for a in (p, m, v)]
    addresses = [a.ctypes.data for a in (p, m, v)]
    old = _core.get_num_threads()
    _core.set_num_threads(threads)
    try:
        for _ in range(3):
            assert exe.run("main", [p, m, v, g]) == []
            wp, wm, wv = want
            gd = g.astype(np.float64)
            wm = 0.9 * wm + 0.1 * gd
            wv = 0.999 * wv + 0.001 * gd * gd
            wp = wp - 0.01 * wm / (np.sqrt(wv) + 1e-8)
            want = [wp, wm, wv]
            for got, ref in zip((p, m, v), want):
                np.testing.assert_allclose(got, ref, rtol=RTOL, atol=ATOL)
    finally:
        _core.set_num_threads(old)
    assert [a.ctypes.data for a in (p, m, v)] == addresses
