"""MobileNetV2's blocks on the oneDNN path: every conv's epilogue fused
(paddle-use-onednn, docs/onednn.md "Fused post-ops").

An inverted residual block as the ONNX importer writes it (folded batch
norm as a bias added through a reshape, relu6 as maximum/minimum with rank-0
constants): a 1x1 expand conv + bias + relu6, a padded 3x3 depthwise conv
(groups = channels) + bias + relu6, a 1x1 projection + bias, plus the
residual where the block keeps its shape. It runs through paddle-run with
--library=onednn and --library=none against a float64 numpy reference
(rtol 1e-4, atol 1e-4 times the largest reference magnitude: sums of up to
~100 products of values in [-1, 1]). The lowered IR must hold the
expected post-op programs, so the test fails when an epilogue stays a
separate loop (the relu6 read only by the next conv's padding, the
depthwise epilogue) or the depthwise conv does not fold into the expand
conv's call as a depthwise post-op (fuse-depthwise; then the expanded
activation is never stored); and that an epilogue stays a loop where
fusing would be wrong (below). The NCHW-collapse form with a per-channel bias is
checked on its own (test_grouped_per_channel_scale and the lit test
paddle-use-onednn-grouped.mlir).
"""

import numpy as np
import pytest
from paddle_testing import run_module, tensor_type
from test_onednn import close, lowered, uniform
from test_onednn_postops import program_counts, programs
from test_weights import constant


def conv_ref(x, w, stride=1, pad=0, groups=1):
    """float64 grouped conv2d, NCHW x OIHW."""
    x = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    n, c, h, wd = x.shape
    f, cg, kh, kw = w.shape
    oh, ow = (h - kh) // stride + 1, (wd - kw) // stride + 1
    out = np.zeros((n, f, oh, ow))
    fg = f // groups
    for g in range(groups):
        xs = x[:, g * cg:(g + 1) * cg]
        ws = w[g * fg:(g + 1) * fg].astype(np.float64)
        for i in range(kh):
            for j in range(kw):
                win = xs[:, :, i:i + stride * oh:stride, j:j + stride * ow:stride]
                out[:, g * fg:(g + 1) * fg] += np.einsum("nchw,fc->nfhw", win, ws[:, :, i, j])
    return out


def block_module(rng, c_in, expand, c_out, hw, stride, zero_bias):
    """Paddle IR of an inverted residual block with constant weights, and
    its float64 reference on input x."""
    hidden = c_in * expand
    ws = {"we": uniform(rng, (hidden, c_in, 1, 1)), "wd": uniform(rng, (hidden, 1, 3, 3)),
          "wp": uniform(rng, (c_out, hidden, 1, 1))}
    bias = {k: (np.zeros(n, np.float32) if zero_bias else uniform(rng, (n,)))
            for k, n in [("be", hidden), ("bd", hidden), ("bp", c_out)]}
    oh = (hw + 2 - 3) // stride + 1
    residual = stride == 1 and c_in == c_out
    X, E = tensor_type((1, c_in, hw, hw), np.float32), tensor_type((1, hidden, hw, hw), np.float32)
    D, P = tensor_type((1, hidden, oh, oh), np.float32), tensor_type((1, c_out, oh, oh), np.float32)
    # Zero biases as the importer gives them for untrained batch norms: a
    # splat, which folds into the epilogue as an add of 0.0.
    lines = [constant(k, v) for k, v in ws.items()]
    lines += [f"  %{k} = paddle.constant dense<0.0> : {tensor_type(v.shape, np.float32)}\n"
              if zero_bias else constant(k, v) for k, v in bias.items()]
    lines.append("  %zero = paddle.constant dense<0.0> : tensor<f32>\n"
                 "  %six = paddle.constant dense<6.0> : tensor<f32>\n")

    def conv(dst, src, w, st, ty, attrs=""):
        return (f"  %{dst}c = paddle.conv2d %{src}, %{w} {attrs} : "
                f"{st}, {tensor_type(ws[w].shape, np.float32)} -> {ty}\n")

    def bias_relu6(dst, b, ty, n, relu6=True):
        b4 = tensor_type((1, n, 1, 1), np.float32)
        text = (f"  %{dst}r = paddle.reshape %{b} shape = [1, -1, 1, 1] : "
                f"{tensor_type((n,), np.float32)} -> {b4}\n"
                f"  %{dst}a = paddle.add %{dst}c, %{dst}r : {ty}, {b4} -> {ty}\n")
        if relu6:
            text += (f"  %{dst}m = paddle.maximum %{dst}a, %zero : {ty}, tensor<f32> -> {ty}\n"
                     f"  %{dst} = paddle.minimum %{dst}m, %six : {ty}, tensor<f32> -> {ty}\n")
        return text

    body = conv("e", "x", "we", X, E) + bias_relu6("e", "be", E, hidden)
    body += conv("d", "e", "wd", E, D,
                 f"{{groups = {hidden} : i64, padding = array<i64: 1, 1, 1, 1>, "
                 f"strides = array<i64: {stride}, {stride}>}}")
    body += bias_relu6("d", "bd", D, hidden)
    body += conv("p", "d", "wp", D, P) + bias_relu6("p", "bp", P, c_out, relu6=False)
    result = "pa"
    if residual:
        body += f"  %y = paddle.add %x, %pa : {X}, {P} -> {P}\n"
        result = "y"
    text = (f"func.func @main(%x: {X}) -> {P} {{\n" + "".join(lines) + body
            + f"  return %{result} : {P}\n}}\n")

    def ref(x):
        def bias4(b):
            return b.astype(np.float64).reshape(1, -1, 1, 1)
        e = np.clip(conv_ref(x, ws["we"]) + bias4(bias["be"]), 0, 6)
        d = np.clip(conv_ref(e, ws["wd"], stride, 1, hidden) + bias4(bias["bd"]), 0, 6)
        p = conv_ref(d, ws["wp"]) + bias4(bias["bp"])
        return p + x if residual else p

    # Post-ops per call, in the order the programs appear in the lowered
    # module (the pass adds each call's globals at the top: the last made
    # first). The depthwise conv folds into the expand conv's call (a
    # depthwise post-op, made after every conv is replaced): expand bias +
    # clip, the depthwise post-op, its bias + clip (a zero bias is an add
    # of 0.0, which merges away; the depthwise padding is oneDNN's). Then
    # the projection: bias (+ sum).
    b = 0 if zero_bias else 1
    counts = [(b + 1) + 1 + (b + 1), b + (1 if residual else 0)]
    return text, ref, counts


@pytest.mark.parametrize("c_in,expand,c_out,hw,stride", [
    (8, 6, 8, 14, 1),    # residual block
    (16, 6, 24, 15, 2),  # downsampling block, odd size
    (24, 4, 32, 7, 1),   # channels that are not a multiple of 8 x 8
])
@pytest.mark.parametrize("zero_bias", [False, True], ids=["bias", "zero_bias"])
def test_inverted_residual_fused(tmp_path, rng, c_in, expand, c_out, hw, stride, zero_bias):
    text, ref, counts = block_module(rng, c_in, expand, c_out, hw, stride, zero_bias)
    ir = lowered(text, "onednn")
    assert "paddle_onednn_conv2d_grouped" not in ir
    assert program_counts(ir) == counts, program_counts(ir)
    # The depthwise post-op (kind 13) after the expand conv's, stride as a
    # double.
    fused = programs(ir)[0]
    at = 2 + 4 * (1 if zero_bias else 2)
    assert fused[at] == 13, fused
    assert np.array(fused[at + 2], np.int64).view(np.float64) == stride, fused
    x = uniform(rng, (1, c_in, hw, hw))
    expected = ref(x)
    for library in ["onednn", "none"]:
        (out,) = run_module(tmp_path, text, [x], extra_args=[f"--library={library}"])
        close(out, expected)


def test_grouped_per_channel_scale(tmp_path, rng):
    """Two channels per group (4 groups): a per-channel scale on the NCHW
    result fuses as a binary mul on oneDNN's channel g * 2 + f."""
    x, w, s = uniform(rng, (1, 8, 9, 9)), uniform(rng, (8, 2, 3, 3)), uniform(rng, (8,))
    X, R = tensor_type(x.shape, np.float32), tensor_type((1, 8, 9, 9), np.float32)
    S4 = tensor_type((1, 8, 1, 1), np.float32)
    text = (f"func.func @main(%x: {X}) -> {R} {{\n" + constant("w", w) + constant("s", s)
            + f"  %c = paddle.conv2d %x, %w {{groups = 4 : i64, padding = array<i64: 1, 1, 1, 1>}}"
            f" : {X}, {tensor_type(w.shape, np.float32)} -> {R}\n"
            f"  %s4 = paddle.reshape %s shape = [1, -1, 1, 1] : tensor<8xf32> -> {S4}\n"
            f"  %y = paddle.mul %c, %s4 : {R}, {S4} -> {R}\n  return %y : {R}\n}}\n")
    assert program_counts(lowered(text, "onednn")) == [1]
    (out,) = run_module(tmp_path, text, [x], extra_args=["--library=onednn"])
    close(out, conv_ref(x, w, 1, 1, 4) * s.astype(np.float64).reshape(1, -1, 1, 1))


def test_concurrent_runs_keep_their_scratchpads_apart(tmp_path, rng):
    """Six threads run a MobileNetV2 downsampling block at once in one
    session (paddle-run --concurrency; paddle-run checks each result bitwise
    against the first run's). They share the cached oneDNN primitives, and
    each call must bring its own scratchpad (docs/onednn.md, "Threads"):
    with the primitive's own, this failed in 3 runs of 4 (20 sessions
    each), and the GoogleTest
    OneDnn.ConcurrentCallsOfOnePrimitiveKeepTheirScratchpadsApart in 6 of
    6."""
    text, ref, _ = block_module(rng, 16, 6, 24, 112, 2, False)
    x = uniform(rng, (1, 16, 112, 112))
    for session in range(20):
        (out,) = run_module(tmp_path, text, [x], extra_args=[
            "--library=onednn", "--threads=1", "--concurrency=6"])
    close(out, ref(x))
