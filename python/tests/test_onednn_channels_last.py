"""Channels-last activations between oneDNN convolutions (paddle-use-onednn,
docs/onednn.md "Channels-last activations").

Buffers that only oneDNN convs read and write are stored NHWC, so a conv
chain runs without per-call plain <-> NHWC reorders. These tests run whole
conv chains on real data through paddle-run (--library=onednn, and
--library=none as a second path) against a float64 numpy reference (rtol
1e-4, atol 1e-4 times the largest reference magnitude), and check in the IR
after paddle-use-onednn which buffers changed layout, so they fail both
when the layout is wrong and when the rewrite silently stops applying.
"""

import re
import subprocess

import numpy as np
import pytest
from paddle_testing import PADDLE_OPT, run_module, tensor_type
from test_onednn import close, uniform
from test_onednn_grouped import block_module, conv_ref
from test_weights import constant


def channels_last_buffers(text, out):
    """The buffers stored channels-last after paddle-use-onednn (the
    sources of its NHWC reinterpret_casts), and the IR at that point."""
    proc = subprocess.run([str(PADDLE_OPT), "-", "--paddle-cpu-pipeline=library=onednn",
                           "--mlir-print-ir-after=paddle-use-onednn",
                           "--mlir-elide-elementsattrs-if-larger=64", "-o", str(out)],
                          input=text, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    ir = proc.stderr
    found = set(re.findall(r"memref\.reinterpret_cast (%\w+) to offset: \[0\], sizes: "
                           r"\[[\d, ]+\], strides: \[\d+, (?:\d+, )?1, \d+, \d+\]", ir))
    return found, ir


def program_flags(ir):
    """The flags word of every oneDNN call's post-op program in `ir` (after
    paddle-use-onednn): bit 0 constant weights, bit 1 Winograd allowed."""
    return [int(m.group(1)) for m in re.finditer(
        r"@__paddle_onednn_program\w* : memref<\d+xi64> = dense<\[(\d+),", ir)]


def depthwise_post_ops(ir):
    """The (operand, stride) of every depthwise post-op (kind 13) in the
    post-op programs of `ir` (after paddle-use-onednn)."""
    found = []
    for m in re.finditer(r"@__paddle_onednn_program\w* : memref<\d+xi64> = dense<\[([-\d, ]+)\]>", ir):
        words = [int(w) for w in m.group(1).split(",")]
        for i in range(words[1]):
            kind, operand, alpha = words[2 + 4 * i:5 + 4 * i]
            if kind == 13:
                found.append((operand, np.array([alpha], np.int64).view(np.float64)[0]))
    return found


def resnet_blocks_module(rng, c, hw, blocks):
    """`blocks` ResNet basic blocks (3x3 conv + bias + relu, 3x3 conv +
    bias + the block's input, relu) with constant weights, and their
    float64 reference."""
    T = tensor_type((1, c, hw, hw), np.float32)
    W = tensor_type((c, c, 3, 3), np.float32)
    B4 = tensor_type((1, c, 1, 1), np.float32)
    ws, lines, body = {}, [], []
    for i in range(blocks):
        for j in range(2):
            ws[f"w{i}{j}"], ws[f"b{i}{j}"] = uniform(rng, (c, c, 3, 3)) * 0.3, uniform(rng, (c,))
    lines = [constant(k, v) for k, v in ws.items()]
    lines.append("  %zero = paddle.constant dense<0.0> : tensor<f32>\n")
    src = "x"

    def conv(dst, x, w):
        return (f"  %c{dst} = paddle.conv2d %{x}, %w{w} {{padding = array<i64: 1, 1, 1, 1>}}"
                f" : {T}, {W} -> {T}\n"
                f"  %r{dst} = paddle.reshape %b{w} shape = [1, -1, 1, 1] : tensor<{c}xf32> -> {B4}\n"
                f"  %{dst} = paddle.add %c{dst}, %r{dst} : {T}, {B4} -> {T}\n")
    for i in range(blocks):
        body.append(conv(f"a{i}", src, f"{i}0")
                    + f"  %h{i} = paddle.maximum %a{i}, %zero : {T}, tensor<f32> -> {T}\n"
                    + conv(f"d{i}", f"h{i}", f"{i}1")
                    + f"  %s{i} = paddle.add %d{i}, %{src} : {T}, {T} -> {T}\n"
                    f"  %y{i} = paddle.maximum %s{i}, %zero : {T}, tensor<f32> -> {T}\n")
        src = f"y{i}"
    text = (f"func.func @main(%x: {T}) -> {T} {{\n" + "".join(lines) + "".join(body)
            + f"  return %{src} : {T}\n}}\n")

    def ref(x):
        y = x.astype(np.float64)
        for i in range(blocks):
            def conv(v, j):
                return conv_ref(v, ws[f"w{i}{j}"], 1, 1) + ws[f"b{i}{j}"].astype(np.float64).reshape(1, -1, 1, 1)
            h = np.maximum(conv(y, 0), 0)
            y = np.maximum(conv(h, 1) + y, 0)
        return y
    return text, ref


@pytest.mark.parametrize("c,hw", [(16, 10), (24, 7), (64, 9)])
def test_resnet_blocks(tmp_path, rng, c, hw):
    """Three basic blocks: every activation but the input and the result
    is only convs'. The second conv of each block adds its residual as a
    sum post-op, accumulating into the residual's own channels-last buffer
    (the first block's into the input reordered there): no copies. With 64
    channels every conv may run as Winograd (program flag 2; oneDNN's
    kernel on AVX-512), whose results must match the reference as well."""
    text, ref = resnet_blocks_module(rng, c, hw, blocks=3)
    found, ir = channels_last_buffers(text, tmp_path / "out.mlir")
    flags = program_flags(ir)
    assert len(flags) == 6, ir
    assert all(f == (3 if c >= 64 else 1) for f in flags), flags
    # Block 0: h0 and y0; block 1: h1 and y1; block 2: h2 (y2 is the result).
    assert len(found) == 5, (found, ir)
    assert "memref.copy" not in ir, ir
    # A program is [flags, n, then kind, operand, alpha, beta per post-op].
    programs = [[int(w) for w in p.split(",")] for p in re.findall(
        r"@__paddle_onednn_program\w* : memref<\d+xi64> = dense<\[([-\d, ]+)\]>", ir)]
    sums = [p for p in programs if 12 in p[2::4][:p[1]]]  # PADDLE_ONEDNN_POST_SUM
    assert len(sums) == 3, programs
    x = uniform(rng, (1, c, hw, hw))
    expected = ref(x)
    for library in ["onednn", "none"]:
        (out,) = run_module(tmp_path, text, [x], extra_args=[f"--library={library}"])
        close(out, expected)


@pytest.mark.parametrize("c_in,expand,c_out,hw,stride", [
    (8, 6, 8, 14, 1),    # residual block
    (16, 6, 24, 15, 2),  # downsampling block, odd size
])
def test_inverted_residual(tmp_path, rng, c_in, expand, c_out, hw, stride):
    """MobileNetV2's block: the depthwise conv folds into the expanding 1x1
    conv's call as a depthwise post-op (its filter is extra operand 1, after
    the 1x1 bias), so the expanded activation is never stored; the
    depthwise output (read by the projection through the NCHW collapse) is
    channels-last; the input and the result are the caller's and stay
    plain."""
    text, ref, _ = block_module(rng, c_in, expand, c_out, hw, stride, zero_bias=False)
    found, ir = channels_last_buffers(text, tmp_path / "out.mlir")
    assert depthwise_post_ops(ir) == [(1, float(stride))], ir
    assert "call @paddle_onednn_conv2d_grouped" not in ir
    assert len(found) == 1, (found, ir)
    x = uniform(rng, (1, c_in, hw, hw))
    (out,) = run_module(tmp_path, text, [x], extra_args=["--library=onednn"])
    close(out, ref(x))


def test_avg_pooled_output_stays_plain(tmp_path, rng):
    """A conv output that an average pool (our generated loops) reads keeps
    the plain layout the loops index; the conv before it still gets NHWC."""
    c, hw = 8, 12
    T, P = tensor_type((1, c, hw, hw), np.float32), tensor_type((1, c, hw // 2, hw // 2), np.float32)
    w1, w2 = uniform(rng, (c, c, 3, 3)), uniform(rng, (c, c, 3, 3))
    W = tensor_type(w1.shape, np.float32)
    text = (f"func.func @main(%x: {T}) -> {P} {{\n" + constant("w1", w1) + constant("w2", w2)
            + f"  %a = paddle.conv2d %x, %w1 {{padding = array<i64: 1, 1, 1, 1>}} : {T}, {W} -> {T}\n"
            f"  %b = paddle.conv2d %a, %w2 {{padding = array<i64: 1, 1, 1, 1>}} : {T}, {W} -> {T}\n"
            f"  %p = paddle.avg_pool2d %b {{kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>}}"
            f" : {T} -> {P}\n  return %p : {P}\n}}\n")
    found, ir = channels_last_buffers(text, tmp_path / "out.mlir")
    assert len(found) == 1, (found, ir)
    assert "linalg.pooling_nchw_sum" in ir
    x = uniform(rng, (1, c, hw, hw))
    b = conv_ref(conv_ref(x, w1, 1, 1), w2, 1, 1)
    expected = b.reshape(1, c, hw // 2, 2, hw // 2, 2).mean(axis=(3, 5))
    (out,) = run_module(tmp_path, text, [x], extra_args=["--library=onednn"])
    close(out, expected)


def tail_module(rng, c, hw, residual_from_input):
    """A ResNet tail: two 3x3 convs with biases, the second's output plus a
    residual, relu, then a global average pool (reduce_mean over H and W),
    which fuses with the add and relu into one generic. The residual is
    the first conv's output, or with `residual_from_input` the input
    multiplied in (a full-size operand the caller owns)."""
    T, P = tensor_type((1, c, hw, hw), np.float32), tensor_type((1, c, 1, 1), np.float32)
    B4 = tensor_type((1, c, 1, 1), np.float32)
    ws = {"w1": uniform(rng, (c, c, 3, 3)) * 0.3, "w2": uniform(rng, (c, c, 3, 3)) * 0.3,
          "b1": uniform(rng, (c,)), "b2": uniform(rng, (c,))}
    W = tensor_type((c, c, 3, 3), np.float32)
    lines = "".join(constant(k, v) for k, v in ws.items())
    body = "  %zero = paddle.constant dense<0.0> : tensor<f32>\n"
    for dst, src, i in [("a", "x", 1), ("b", "a", 2)]:
        body += (f"  %{dst}c = paddle.conv2d %{src}, %w{i} {{padding = array<i64: 1, 1, 1, 1>}}"
                 f" : {T}, {W} -> {T}\n"
                 f"  %{dst}r = paddle.reshape %b{i} shape = [1, -1, 1, 1] : "
                 f"tensor<{c}xf32> -> {B4}\n"
                 f"  %{dst} = paddle.add %{dst}c, %{dst}r : {T}, {B4} -> {T}\n")
    if residual_from_input:
        body += f"  %s = paddle.mul %b, %x : {T}, {T} -> {T}\n"
    else:
        body += f"  %s = paddle.add %b, %a : {T}, {T} -> {T}\n"
    body += (f"  %y = paddle.maximum %s, %zero : {T}, tensor<f32> -> {T}\n"
             f"  %p = paddle.reduce_mean %y axes = [2, 3] keepdims : {T} -> {P}\n")
    text = f"func.func @main(%x: {T}) -> {P} {{\n" + lines + body + f"  return %p : {P}\n}}\n"

    def ref(x):
        def conv(v, i):
            return conv_ref(v, ws[f"w{i}"], 1, 1) + ws[f"b{i}"].astype(np.float64).reshape(1, -1, 1, 1)
        a = conv(x.astype(np.float64), 1)
        b = conv(a, 2)
        s = b * x if residual_from_input else b + a
        return np.maximum(s, 0).mean(axis=(2, 3), keepdims=True)
    return text, ref


@pytest.mark.parametrize("c,hw", [(16, 7), (40, 9)])
def test_global_pool_reads_channels_last(tmp_path, rng, c, hw):
    """The pool (fused with the residual add and relu) reads the two conv
    outputs channels-last: both buffers change layout with it, the generic
    reads them as [1, H, W, C] views with its loops in that order (C, the
    contiguous dim, innermost), and no reorder is left. Before, the pool
    kept both buffers plain and each call reordered them."""
    text, ref = tail_module(rng, c, hw, residual_from_input=False)
    found, ir = channels_last_buffers(text, tmp_path / "out.mlir")
    assert len(found) == 2, (found, ir)
    assert "paddle_onednn_reorder" not in ir
    generics = re.findall(r"iterator_types = \[([^\]]*)\]\} ins\(([^)]*)\)", ir)
    pools = [ins for its, ins in generics if "reduction" in its]
    assert len(pools) == 1, generics
    assert pools[0].count(f"memref<1x{hw}x{hw}x{c}xf32>") == 2, pools
    assert re.search(r'iterator_types = \["parallel", "reduction", "reduction", "parallel"\]', ir)
    x = uniform(rng, (1, c, hw, hw))
    for library in ["onednn", "none"]:
        (out,) = run_module(tmp_path, text, [x], extra_args=[f"--library={library}"])
        close(out, ref(x))


def test_pool_reading_a_callers_buffer_keeps_plain_layouts(tmp_path, rng):
    """Where the fused pool also reads the caller's input (plain, not the
    compiled function's to change), the conv output it reads stays plain
    too and the generic keeps its loops: the operands a generic maps by the
    identity change layout together or not at all."""
    c, hw = 16, 7
    text, ref = tail_module(rng, c, hw, residual_from_input=True)
    found, ir = channels_last_buffers(text, tmp_path / "out.mlir")
    pools = re.findall(r'iterator_types = \["parallel", "parallel", "reduction", "reduction"\]', ir)
    assert len(pools) == 1, ir
    assert len(found) == 1, (found, ir)  # a: between the two convs only
    x = uniform(rng, (1, c, hw, hw))
    (out,) = run_module(tmp_path, text, [x], extra_args=["--library=onednn"])
    close(out, ref(x))


@pytest.mark.parametrize("threads", [1, 2])
def test_max_pool_between_convs(tmp_path, rng, threads):
    """A ResNet stem: conv + bias + relu, a 3x3 stride-2 max pool padded by
    1, then a conv. The pool is a oneDNN call whose padding copy folded
    away, and it reads and writes channels-last buffers, so the relu output
    and the pool output are NHWC; checked against numpy."""
    c, hw = 16, 14
    T, P = tensor_type((1, c, hw, hw), np.float32), tensor_type((1, c, hw // 2, hw // 2), np.float32)
    w1, b1, w2 = uniform(rng, (c, 3, 3, 3)), uniform(rng, (c,)), uniform(rng, (c, c, 1, 1))
    X = tensor_type((1, 3, hw, hw), np.float32)
    B4 = tensor_type((1, c, 1, 1), np.float32)
    text = (f"func.func @main(%x: {X}) -> {P} {{\n" + constant("w1", w1) + constant("b1", b1)
            + constant("w2", w2)
            + "  %zero = paddle.constant dense<0.0> : tensor<f32>\n"
            f"  %r = paddle.reshape %b1 shape = [1, -1, 1, 1] : tensor<{c}xf32> -> {B4}\n"
            f"  %a = paddle.conv2d %x, %w1 {{padding = array<i64: 1, 1, 1, 1>}}"
            f" : {X}, {tensor_type(w1.shape, np.float32)} -> {T}\n"
            f"  %ab = paddle.add %a, %r : {T}, {B4} -> {T}\n"
            f"  %h = paddle.maximum %ab, %zero : {T}, tensor<f32> -> {T}\n"
            f"  %p = paddle.max_pool2d %h {{kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>,"
            f" padding = array<i64: 1, 1, 1, 1>}} : {T} -> {P}\n"
            f"  %y = paddle.conv2d %p, %w2 : {P}, {tensor_type(w2.shape, np.float32)} -> {P}\n"
            f"  return %y : {P}\n}}\n")
    found, ir = channels_last_buffers(text, tmp_path / "out.mlir")
    assert len(found) == 2, (found, ir)
    assert "call @paddle_onednn_max_pool2d" in ir
    assert "linalg.pooling_nchw_max" not in ir and "paddle.max_pool_pad" not in ir
    x = uniform(rng, (1, 3, hw, hw))
    h = np.maximum(conv_ref(x, w1, 1, 1) + b1.astype(np.float64).reshape(1, -1, 1, 1), 0)
    padded = np.pad(h, ((0, 0), (0, 0), (1, 1), (1, 1)), constant_values=-np.inf)
    pooled = np.stack([np.stack([padded[:, :, 2 * i:2 * i + 3, 2 * j:2 * j + 3].max(axis=(2, 3))
                                 for j in range(hw // 2)], axis=-1) for i in range(hw // 2)], axis=-2)
    expected = conv_ref(pooled, w2, 1, 0)
    (out,) = run_module(tmp_path, text, [x], extra_args=["--library=onednn", f"--threads={threads}"])
    close(out, expected)


def test_downsampling_block(tmp_path, rng):
    """A ResNet downsampling block as the ONNX importer gives it for an
    untrained model (zero biases): the shortcut conv's epilogue adds the
    main branch plus its own zero bias, which fuses as a sum (r + 0.0 is r),
    so no loop of ours is left and the block's output, read by the next
    conv, is channels-last."""
    c, hw = 8, 12
    X, Y = tensor_type((1, c, hw, hw), np.float32), tensor_type((1, 2 * c, hw // 2, hw // 2), np.float32)
    B4 = tensor_type((1, 2 * c, 1, 1), np.float32)
    ws = {"w1": uniform(rng, (2 * c, c, 3, 3)), "w2": uniform(rng, (2 * c, 2 * c, 3, 3)),
          "ws": uniform(rng, (2 * c, c, 1, 1)), "w3": uniform(rng, (2 * c, 2 * c, 3, 3))}
    T = {k: tensor_type(v.shape, np.float32) for k, v in ws.items()}
    text = (f"func.func @main(%x: {X}) -> {Y} {{\n" + "".join(constant(k, v) for k, v in ws.items())
            + f"  %b = paddle.constant dense<0.0> : tensor<{2 * c}xf32>\n"
            f"  %zero = paddle.constant dense<0.0> : tensor<f32>\n"
            f"  %b4 = paddle.reshape %b shape = [1, -1, 1, 1] : tensor<{2 * c}xf32> -> {B4}\n"
            f"  %c1 = paddle.conv2d %x, %w1 {{padding = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>}}"
            f" : {X}, {T['w1']} -> {Y}\n"
            f"  %a1 = paddle.add %c1, %b4 : {Y}, {B4} -> {Y}\n"
            f"  %h = paddle.maximum %a1, %zero : {Y}, tensor<f32> -> {Y}\n"
            f"  %c2 = paddle.conv2d %h, %w2 {{padding = array<i64: 1, 1, 1, 1>}} : {Y}, {T['w2']} -> {Y}\n"
            f"  %a2 = paddle.add %c2, %b4 : {Y}, {B4} -> {Y}\n"
            f"  %cs = paddle.conv2d %x, %ws {{strides = array<i64: 2, 2>}} : {X}, {T['ws']} -> {Y}\n"
            f"  %as = paddle.add %cs, %b4 : {Y}, {B4} -> {Y}\n"
            f"  %s = paddle.add %a2, %as : {Y}, {Y} -> {Y}\n"
            f"  %y = paddle.maximum %s, %zero : {Y}, tensor<f32> -> {Y}\n"
            f"  %c3 = paddle.conv2d %y, %w3 {{padding = array<i64: 1, 1, 1, 1>}} : {Y}, {T['w3']} -> {Y}\n"
            f"  return %c3 : {Y}\n}}\n")
    found, ir = channels_last_buffers(text, tmp_path / "out.mlir")
    main = ir[ir.index("func.func @main"):]
    assert "linalg.generic" not in main, main
    # h, the shortcut's output (the block's output after the fused add) and
    # the main branch's second output, which the shortcut's call sums.
    assert len(found) == 3, (found, ir)
    x = uniform(rng, (1, c, hw, hw))
    h = np.maximum(conv_ref(x, ws["w1"], 2, 1), 0)
    y = np.maximum(conv_ref(h, ws["w2"], 1, 1) + conv_ref(x, ws["ws"], 2, 0), 0)
    expected = conv_ref(y, ws["w3"], 1, 1)
    for library in ["onednn", "none"]:
        (out,) = run_module(tmp_path, text, [x], extra_args=[f"--library={library}"])
        close(out, expected)
