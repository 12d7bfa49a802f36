"""paddle-simplify end to end: an attention as ONNX exports of BERT write it
(the QKV projection split by a transpose and three constant gathers, k
transposed twice around a unit-dim reshape, q and k each scaled by
1/sqrt(sqrt(d))) runs through paddle-run and is compared with a float64
numpy reference; the IR check makes sure the rewrites fired, so the test
cannot pass on the unsimplified module.

Tolerances: rtol 1e-5, atol 1e-5 (float32; the scale moves behind the
products, which changes the rounding but not the value)."""

import subprocess

import numpy as np

from paddle_testing import PADDLE_OPT, run_module

RTOL = 1e-5
ATOL = 1e-5

# s tokens, h heads of d, the ONNX layout [s, 1, 3 * h * d] of the
# projection (sequence-major, batch 1).
S, H, D = 16, 4, 8
E = H * D

ATTENTION = f"""
func.func @main(%qkv: tensor<{S}x1x{3 * E}xf32>) -> tensor<{S}x{E}xf32> {{
  %0 = paddle.reshape %qkv shape = [{S}, 1, 3, {E}] : tensor<{S}x1x{3 * E}xf32> -> tensor<{S}x1x3x{E}xf32>
  %1 = paddle.reshape %0 shape = [1, {S}, 1, 3, {E}] : tensor<{S}x1x3x{E}xf32> -> tensor<1x{S}x1x3x{E}xf32>
  %2 = paddle.transpose %1 perm = [3, 1, 2, 0, 4] : tensor<1x{S}x1x3x{E}xf32> -> tensor<3x{S}x1x1x{E}xf32>
  %3 = paddle.reshape %2 shape = [3, {S}, 1, {E}] : tensor<3x{S}x1x1x{E}xf32> -> tensor<3x{S}x1x{E}xf32>
  %i0 = paddle.constant dense<0> : tensor<i64>
  %i1 = paddle.constant dense<1> : tensor<i64>
  %i2 = paddle.constant dense<2> : tensor<i64>
  %q = paddle.gather %3, %i0 axis = 0 : tensor<3x{S}x1x{E}xf32>, tensor<i64> -> tensor<{S}x1x{E}xf32>
  %k = paddle.gather %3, %i1 axis = 0 : tensor<3x{S}x1x{E}xf32>, tensor<i64> -> tensor<{S}x1x{E}xf32>
  %v = paddle.gather %3, %i2 axis = 0 : tensor<3x{S}x1x{E}xf32>, tensor<i64> -> tensor<{S}x1x{E}xf32>
  %q1 = paddle.reshape %q shape = [{S}, {H}, {D}] : tensor<{S}x1x{E}xf32> -> tensor<{S}x{H}x{D}xf32>
  %k1 = paddle.reshape %k shape = [{S}, {H}, {D}] : tensor<{S}x1x{E}xf32> -> tensor<{S}x{H}x{D}xf32>
  %v1 = paddle.reshape %v shape = [{S}, {H}, {D}] : tensor<{S}x1x{E}xf32> -> tensor<{S}x{H}x{D}xf32>
  %q2 = paddle.transpose %q1 perm = [1, 0, 2] : tensor<{S}x{H}x{D}xf32> -> tensor<{H}x{S}x{D}xf32>
  %k2 = paddle.transpose %k1 perm = [1, 0, 2] : tensor<{S}x{H}x{D}xf32> -> tensor<{H}x{S}x{D}xf32>
  %v2 = paddle.transpose %v1 perm = [1, 0, 2] : tensor<{S}x{H}x{D}xf32> -> tensor<{H}x{S}x{D}xf32>
  %q3 = paddle.reshape %q2 shape = [1, {H}, {S}, {D}] : tensor<{H}x{S}x{D}xf32> -> tensor<1x{H}x{S}x{D}xf32>
  %k3 = paddle.reshape %k2 shape = [1, {H}, {S}, {D}] : tensor<{H}x{S}x{D}xf32> -> tensor<1x{H}x{S}x{D}xf32>
  %v3 = paddle.reshape %v2 shape = [1, {H}, {S}, {D}] : tensor<{H}x{S}x{D}xf32> -> tensor<1x{H}x{S}x{D}xf32>
  %d = paddle.constant dense<{float(D)}> : tensor<1xf32>
  %sd = paddle.sqrt %d : tensor<1xf32> -> tensor<1xf32>
  %one = paddle.constant dense<1.0> : tensor<1xf32>
  %inv = paddle.div %one, %sd : tensor<1xf32>, tensor<1xf32> -> tensor<1xf32>
  %c = paddle.sqrt %inv : tensor<1xf32> -> tensor<1xf32>
  %kt = paddle.transpose %k3 perm = [0, 1, 3, 2] : tensor<1x{H}x{S}x{D}xf32> -> tensor<1x{H}x{D}x{S}xf32>
  %qs = paddle.mul %q3, %c : tensor<1x{H}x{S}x{D}xf32>, tensor<1xf32> -> tensor<1x{H}x{S}x{D}xf32>
  %ks = paddle.mul %kt, %c : tensor<1x{H}x{D}x{S}xf32>, tensor<1xf32> -> tensor<1x{H}x{D}x{S}xf32>
  %s = paddle.matmul %qs, %ks : tensor<1x{H}x{S}x{D}xf32>, tensor<1x{H}x{D}x{S}xf32> -> tensor<1x{H}x{S}x{S}xf32>
  %p = paddle.softmax %s axis = 3 : tensor<1x{H}x{S}x{S}xf32> -> tensor<1x{H}x{S}x{S}xf32>
  %o = paddle.matmul %p, %v3 : tensor<1x{H}x{S}x{S}xf32>, tensor<1x{H}x{S}x{D}xf32> -> tensor<1x{H}x{S}x{D}xf32>
  %ot = paddle.transpose %o perm = [2, 0, 1, 3] : tensor<1x{H}x{S}x{D}xf32> -> tensor<{S}x1x{H}x{D}xf32>
  %r = paddle.reshape %ot shape = [{S}, {E}] : tensor<{S}x1x{H}x{D}xf32> -> tensor<{S}x{E}xf32>
  return %r : tensor<{S}x{E}xf32>
}}"""


def attention_reference(qkv):
    x = qkv.astype(np.float64).reshape(S, 3, H, D)
    q, k, v = (x[:, i].transpose(1, 0, 2) for i in range(3))
    scores = q @ k.transpose(0, 2, 1) / np.sqrt(D)
    e = np.exp(scores - scores.max(axis=-1, keepdims=True))
    p = e / e.sum(axis=-1, keepdims=True)
    return (p @ v).transpose(1, 0, 2).reshape(S, E)


def simplified(tmp_path, text):
    path = tmp_path / "simplify_input.mlir"
    path.write_text(text)
    return subprocess.run([str(PADDLE_OPT), str(path), "--paddle-simplify"],
                          capture_output=True, text=True, check=True).stdout


def test_attention_head_split_matches_numpy(tmp_path):
    qkv = np.random.default_rng(7).standard_normal(
        (S, 1, 3 * E)).astype(np.float32)
    (out,) = run_module(tmp_path, ATTENTION, [qkv])
    np.testing.assert_allclose(out, attention_reference(qkv[:, 0]),
                               rtol=RTOL, atol=ATOL)


def test_attention_head_split_is_simplified(tmp_path):
    ir = simplified(tmp_path, ATTENTION)
    transposes = [line for line in ir.splitlines() if "paddle.transpose" in line]
    # q and v heads-major, k heads-major and transposed (one op), the
    # output back to sequence-major: none of the whole projection.
    assert len(transposes) == 4, ir
    assert not any(f"3x{S}" in line for line in transposes), ir
    assert ir.count("paddle.gather") == 3, ir
    # One scale, 1/sqrt(d), after the scores' matmul.
    muls = [line for line in ir.splitlines() if "paddle.mul" in line]
    assert len(muls) == 1 and f"tensor<1x{H}x{S}x{S}xf32>, tensor<1xf32>" \
        in muls[0], ir
    scale = [line for line in ir.splitlines()
             if "paddle.constant" in line and "xf32>" in line]
    assert len(scale) == 1, ir
    value = float(scale[0].split("dense<")[1].split(">")[0])
    assert abs(value - 1 / np.sqrt(D)) < 1e-7, ir


# A Linear layer's weight gradient as reverse-mode autodiff writes it,
# transpose(transpose(x) @ dy), 2-D and batched.
WEIGHT_GRAD = """
func.func @main(%x: tensor<64x96xf32>, %dy: tensor<64x40xf32>, %p: tensor<3x16x48xf32>, %q: tensor<3x16x8xf32>) -> (tensor<40x96xf32>, tensor<3x8x48xf32>) {
  %xt = paddle.transpose %x perm = [1, 0] : tensor<64x96xf32> -> tensor<96x64xf32>
  %g = paddle.matmul %xt, %dy : tensor<96x64xf32>, tensor<64x40xf32> -> tensor<96x40xf32>
  %w = paddle.transpose %g perm = [1, 0] : tensor<96x40xf32> -> tensor<40x96xf32>
  %pt = paddle.transpose %p perm = [0, 2, 1] : tensor<3x16x48xf32> -> tensor<3x48x16xf32>
  %h = paddle.matmul %pt, %q : tensor<3x48x16xf32>, tensor<3x16x8xf32> -> tensor<3x48x8xf32>
  %b = paddle.transpose %h perm = [0, 2, 1] : tensor<3x48x8xf32> -> tensor<3x8x48xf32>
  return %w, %b : tensor<40x96xf32>, tensor<3x8x48xf32>
}"""


def test_transpose_of_matmul_matches_numpy(tmp_path):
    # The rewrite fired (one transpose of dy and one of q left, the products'
    # operands swapped), and the results still equal float64 numpy.
    path = tmp_path / "g.mlir"
    path.write_text(WEIGHT_GRAD)
    out = subprocess.run([str(PADDLE_OPT), str(path), "--paddle-simplify"],
                         capture_output=True, text=True, check=True).stdout
    assert "paddle.transpose %arg1 perm = [1, 0]" in out, out
    assert "paddle.transpose %arg3 perm = [0, 2, 1]" in out, out
    assert out.count("paddle.transpose") == 2, out
    rng = np.random.default_rng(11)
    x, dy = rng.standard_normal((64, 96)), rng.standard_normal((64, 40))
    p, q = rng.standard_normal((3, 16, 48)), rng.standard_normal((3, 16, 8))
    inputs = [a.astype(np.float32) for a in (x, dy, p, q)]
    w, b = run_module(tmp_path, WEIGHT_GRAD, inputs)
    np.testing.assert_allclose(w, (x.T @ dy).T, rtol=RTOL, atol=ATOL)
    np.testing.assert_allclose(b, np.swapaxes(np.swapaxes(p, 1, 2) @ q, 1, 2),
                               rtol=RTOL, atol=ATOL)
