"""Fused epilogues and cached constant weights on the oneDNN path
(paddle-use-onednn, docs/onednn.md "Fused post-ops").

A conv2d, matmul or batched-lhs matmul (a Linear layer) followed by an elementwise epilogue (bias, folded batch
norm, relu, clamp, gelu in both forms, sigmoid, tanh, a residual add) runs
through paddle-run with --library=onednn and is compared with a float64
numpy reference: rtol 1e-4, atol 1e-4 times the largest reference magnitude
(sums of up to ~300 products of values in [-1, 1]; oneDNN's gelu/tanh/
sigmoid approximations are within a few ulp). The lowered IR must hold a
post-op program with the expected number of post-ops, so a test cannot pass
by silently not fusing. Weights are paddle.constant so the weight cache is
used; a second test runs a module twice in one process and a module with
other weights of the same shape, which must not see the first one's
reordered weights.
"""

import math
import re

import numpy as np
import pytest
from paddle_testing import run_module, tensor_type
from test_onednn import close, lowered, uniform
from test_weights import constant

N, C, H, W, F = 1, 8, 12, 12, 16  # conv: x [N, C, H, W], w [F, C, 3, 3], pad 1


def conv_ref(x, w):
    xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (1, 1), (1, 1)))
    out = np.zeros((x.shape[0], w.shape[0], x.shape[2], x.shape[3]))
    for i in range(3):
        for j in range(3):
            out += np.einsum("nchw,fc->nfhw", xp[:, :, i:i + x.shape[2], j:j + x.shape[3]],
                             w[:, :, i, j])
    return out


def erf(v):
    return np.vectorize(math.erf)(v)


# name, epilogue (paddle ops on %y of type {R}; %p0/%p1 per-channel params of
# type {P}, %r a residual of type {R}), reference, expected post-op count.
EPILOGUES = [
    ("bias_relu",
     "%a = paddle.add %y, %p0 : {R}, {P} -> {R}\n%z = paddle.relu %a : {R} -> {R}",
     lambda y, p0, p1, r: np.maximum(y + p0, 0), 2),
    ("batchnorm",
     "%m = paddle.mul %y, %p0 : {R}, {P} -> {R}\n%z = paddle.add %m, %p1 : {R}, {P} -> {R}",
     lambda y, p0, p1, r: y * p0 + p1, 2),
    # Scaled first so the clamp bites on both sides: linear x4, clip.
    ("relu6",
     "%four = paddle.constant dense<4.0> : {R}\n%y4 = paddle.mul %y, %four : {R}, {R} -> {R}\n"
     "%lo = paddle.constant dense<0.0> : {R}\n%hi = paddle.constant dense<6.0> : {R}\n"
     "%a = paddle.maximum %y4, %lo : {R}, {R} -> {R}\n"
     "%z = paddle.minimum %a, %hi : {R}, {R} -> {R}",
     lambda y, p0, p1, r: np.clip(4 * y, 0, 6), 2),
    # Two scalar scales around the clamp: oneDNN 2.6 would apply the first's
    # scalars to both, so this chain stays unfused (0 post-ops).
    ("two_scales",
     "%four = paddle.constant dense<4.0> : {R}\n%y4 = paddle.mul %y, %four : {R}, {R} -> {R}\n"
     "%lo = paddle.constant dense<0.0> : {R}\n%hi = paddle.constant dense<6.0> : {R}\n"
     "%a = paddle.maximum %y4, %lo : {R}, {R} -> {R}\n"
     "%q = paddle.minimum %a, %hi : {R}, {R} -> {R}\n"
     "%quarter = paddle.constant dense<0.25> : {R}\n%z = paddle.mul %q, %quarter : {R}, {R} -> {R}",
     lambda y, p0, p1, r: np.clip(4 * y, 0, 6) / 4, 0),
    ("gelu", "%z = paddle.gelu %y : {R} -> {R}",
     lambda y, p0, p1, r: 0.5 * y * (1 + erf(y / math.sqrt(2))), 1),
    ("gelu_tanh", "%z = paddle.gelu %y {{approximate}} : {R} -> {R}",
     lambda y, p0, p1, r: 0.5 * y * (1 + np.tanh(math.sqrt(2 / math.pi)
                                                 * (y + 0.044715 * y ** 3))), 1),
    ("sigmoid", "%z = paddle.sigmoid %y : {R} -> {R}", lambda y, p0, p1, r: 1 / (1 + np.exp(-y)), 1),
    ("tanh", "%z = paddle.tanh %y : {R} -> {R}", lambda y, p0, p1, r: np.tanh(y), 1),
    ("residual_relu",
     "%a = paddle.add %y, %r : {R}, {R} -> {R}\n%z = paddle.relu %a : {R} -> {R}",
     lambda y, p0, p1, r: np.maximum(y + r, 0), 2),
]


def program_counts(text):
    """Post-op counts of the oneDNN calls' programs in lowered IR. The
    programs are i64 arrays (flags, count, ...); paddle-flatten-constant-globals
    turns them into byte globals, so both forms are read."""
    return [p[1] for p in programs(text)]


def programs(text):
    """The programs (i64 words) of the oneDNN calls in lowered IR, in the
    order of the module. Large byte globals print as hex strings, which
    are read too."""
    found = []
    for m in re.finditer(r"@__paddle_onednn_program\w*\(dense<(?:\[([-\d, ]+)\]|\"0x([0-9A-Fa-f]+)\")>"
                         r" : tensor<\d+x(i\d+)>", text):
        if m.group(2):
            raw = bytes.fromhex(m.group(2))
        elif m.group(3) == "i8":
            raw = bytes(int(v) & 0xFF for v in m.group(1).split(","))
        else:
            found.append([int(v) for v in m.group(1).split(",")])
            continue
        found.append([int.from_bytes(raw[i:i + 8], "little", signed=True)
                      for i in range(0, len(raw), 8)])
    return found


def epilogue_module(kind, name, body, rng):
    """The module, its inputs and the params of one case."""
    if kind == "conv":
        x, w = uniform(rng, (N, C, H, W)), uniform(rng, (F, C, 3, 3))
        rshape, pshape = (N, F, H, W), (1, F, 1, 1)
        op = (f"%y = paddle.conv2d %x, %w {{{{padding = array<i64: 1, 1, 1, 1>}}}} : "
              f"{tensor_type(x.shape, np.float32)}, {tensor_type(w.shape, np.float32)} -> {{R}}")
    elif kind == "matmul":
        x, w = uniform(rng, (48, 96)), uniform(rng, (96, 40))
        rshape, pshape = (48, 40), (40,)
    else:
        # A Linear layer on [batch, seq, features]: the matmul runs over the
        # folded rows and the epilogue is collapsed to match.
        x, w = uniform(rng, (2, 24, 96)), uniform(rng, (96, 40))
        rshape, pshape = (2, 24, 40), (40,)
    if kind != "conv":
        op = (f"%y = paddle.matmul %x, %w : {tensor_type(x.shape, np.float32)}, "
              f"{tensor_type(w.shape, np.float32)} -> {{R}}")
    p0, p1, r = uniform(rng, pshape), uniform(rng, pshape), uniform(rng, rshape)
    R, P = tensor_type(rshape, np.float32), tensor_type(pshape, np.float32)
    lines = (op + "\n" + body).format(R=R, P=P)
    text = (f"func.func @main(%x: {tensor_type(x.shape, np.float32)}, %p0: {P}, %p1: {P}, "
            f"%r: {R}) -> {R} {{\n" + constant("w", w) +
            "\n".join("  " + line for line in lines.splitlines()) + f"\n  return %z : {R}\n}}\n")
    return text, x, w, p0, p1, r


@pytest.mark.parametrize("kind", ["conv", "matmul", "linear3d"])
@pytest.mark.parametrize("name,body,ref,count", EPILOGUES, ids=[e[0] for e in EPILOGUES])
def test_fused_epilogue(tmp_path, rng, kind, name, body, ref, count):
    text, x, w, p0, p1, r = epilogue_module(kind, name, body, rng)
    counts = program_counts(lowered(text, "onednn"))
    assert counts == [count], counts
    (out,) = run_module(tmp_path, text, [x, p0, p1, r], extra_args=["--library=onednn"])
    y = conv_ref(x, w) if kind == "conv" else x.astype(np.float64) @ w
    close(out, ref(y, p0.astype(np.float64), p1.astype(np.float64), r.astype(np.float64)))
    # Unfused (fuse off is --library=none's loops): the same numbers.
    (plain,) = run_module(tmp_path, text, [x, p0, p1, r], extra_args=["--library=none"])
    close(plain, ref(y, p0.astype(np.float64), p1.astype(np.float64), r.astype(np.float64)))


def test_constant_weights_cache(ctx, rng):
    """Two calls give the same result; a module with other constant
    weights of the same shape gives its own (no stale cached weights)."""
    from paddle_mlir import _core
    x = uniform(rng, (N, C, H, W))
    results = []
    for seed in range(3):
        w = np.random.default_rng(seed).uniform(-1, 1, (F, C, 3, 3)).astype(np.float32)
        R = tensor_type((N, F, H, W), np.float32)
        text = (f"func.func @main(%x: {tensor_type(x.shape, np.float32)}) -> {R} {{\n"
                + constant("w", w) +
                f"  %y = paddle.conv2d %x, %w {{padding = array<i64: 1, 1, 1, 1>}} : "
                f"{tensor_type(x.shape, np.float32)}, {tensor_type(w.shape, np.float32)} -> {R}\n"
                f"  %z = paddle.relu %y : {R} -> {R}\n  return %z : {R}\n}}\n")
        exe = _core.compile(_core.Module.parse(ctx, text), options="library=onednn")
        (first,) = exe.run("main", [x])
        (second,) = exe.run("main", [x])
        np.testing.assert_array_equal(first, second)
        close(first, np.maximum(conv_ref(x, w), 0))
        results.append(first)
        del exe
    assert not np.array_equal(results[0], results[1])


@pytest.mark.parametrize("n", [1024, 2048, 1000])
def test_constant_weights_padded_rows(ctx, rng, n):
    """Constant matmul weights whose rows are a multiple of 4 KiB (1024 and
    2048 floats) are cached with padded rows (4K aliasing); the result must
    not change, on the first call and from the cache, and rows of other
    lengths (1000) keep oneDNN's own layout."""
    from paddle_mlir import _core
    x, w, b = uniform(rng, (16, 96)), uniform(rng, (96, n)), uniform(rng, (n,))
    R = tensor_type((16, n), np.float32)
    text = (f"func.func @main(%x: {tensor_type(x.shape, np.float32)}, "
            f"%b: {tensor_type(b.shape, np.float32)}) -> {R} {{\n" + constant("w", w) +
            f"  %y = paddle.matmul %x, %w : {tensor_type(x.shape, np.float32)}, "
            f"{tensor_type(w.shape, np.float32)} -> {R}\n"
            f"  %z = paddle.add %y, %b : {R}, {tensor_type(b.shape, np.float32)} -> {R}\n"
            f"  return %z : {R}\n}}\n")
    assert program_counts(lowered(text, "onednn")) == [1]
    exe = _core.compile(_core.Module.parse(ctx, text), options="library=onednn")
    ref = x.astype(np.float64) @ w.astype(np.float64) + b
    for _ in range(2):
        (out,) = exe.run("main", [x, b])
        close(out, ref)
