"""Static memory planning (paddle-plan-memory) end to end.

Each model here is planned so that buffers share memory (disjoint lifetimes,
and in place where an elementwise op overwrites its input); the test checks
from the plan that sharing really happens and that no two buffers live at
the same time overlap, then runs the model through paddle-run (which plans
the same way) and compares with a float64 numpy reference.

Tolerances: rtol 1e-4, atol 1e-5 (f32 compute against a float64 reference;
the sums here have at most 2048 terms of moderate size).
"""

import json
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from paddle_testing import PADDLE_OPT, REPO, run_module

MODELS = REPO / "benchmarks" / "models"
RTOL, ATOL = 1e-4, 1e-5
erf = np.vectorize(math.erf)


def memory_plan(tmp_path, module_path):
    """Runs `paddle-opt --paddle-memory-report` and returns the JSON plan."""
    out = Path(tmp_path) / "plan.json"
    proc = subprocess.run(
        [str(PADDLE_OPT), str(module_path), f"--paddle-memory-report=json={out}",
         "-o", str(Path(tmp_path) / "out.mlir")], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return {f["name"]: f for f in json.loads(out.read_text())["functions"]}


def check_plan_is_valid(plan):
    """No two buffers whose lifetimes meet overlap in memory, except a buffer
    written in place over the one that dies at its first op; returns the
    number of pairs of buffers that share memory."""
    buffers = {b["id"]: b for b in plan["buffers"]}
    shared = 0
    for a in buffers.values():
        assert a["offset"] % 64 == 0
        assert a["offset"] + a["size"] <= plan["planned"]
        for b in buffers.values():
            if a["id"] >= b["id"]:
                continue
            overlap = (a["offset"] < b["offset"] + b["size"]
                       and b["offset"] < a["offset"] + a["size"])
            if not overlap:
                continue
            shared += 1
            meet = a["first"] <= b["last"] and b["first"] <= a["last"]
            if not meet:
                continue
            # Only the in-place case may meet: the later buffer starts at
            # the op where the earlier one (or its in-place chain) ends.
            early, late = (a, b) if a["first"] <= b["first"] else (b, a)
            chain = early
            while chain is not None and chain["id"] != late.get("in_place_of"):
                nxt = [c for c in buffers.values() if c.get("in_place_of") == chain["id"]]
                chain = nxt[0] if nxt else None
            assert chain is not None and late["first"] == chain["last"], (a, b)
            assert early["last"] <= late["first"], (a, b)
    assert plan["lower_bound"] <= plan["planned"] <= plan["naive"]
    return shared


def gelu(x):
    return 0.5 * x * (1 + erf(x / math.sqrt(2)))


def softmax(x):
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def layer_norm(x, g, b, eps=1e-5):
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * g + b


def conv2d_same(x, k):
    """3x3 convolution, stride 1, padding 1 (NCHW, OIHW)."""
    n, c, h, w = x.shape
    xp = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
    out = np.zeros((n, k.shape[0], h, w))
    for i in range(3):
        for j in range(3):
            out += np.einsum("nchw,oc->nohw", xp[:, :, i:i + h, j:j + w], k[:, :, i, j])
    return out


def max_pool2(x):
    n, c, h, w = x.shape
    return x.reshape(n, c, h // 2, 2, w // 2, 2).max(axis=(3, 5))


def f32(rng, *shape, scale=1.0):
    return (rng.standard_normal(shape) * scale).astype(np.float32)


def test_transformer_block_shares_memory_in_place(tmp_path, rng):
    path = MODELS / "transformer_block.mlir"
    plan = memory_plan(tmp_path, path)["transformer_block"]
    assert plan["in_place"] >= 1
    assert plan["planned"] < plan["naive"]
    assert check_plan_is_valid(plan) > 0

    d, f = 64, 256
    x = f32(rng, 128, d)
    g1, be1, g2, be2 = (f32(rng, d) for _ in range(4))
    wq, wk, wv, wo = (f32(rng, d, d, scale=d ** -0.5) for _ in range(4))
    w1, b1 = f32(rng, d, f, scale=d ** -0.5), f32(rng, f)
    w2, b2 = f32(rng, f, d, scale=f ** -0.5), f32(rng, d)
    inputs = [x, g1, be1, wq, wk, wv, wo, g2, be2, w1, b1, w2, b2]
    (got,) = run_module(tmp_path, path.read_text(), inputs)

    X = [a.astype(np.float64) for a in inputs]
    x, g1, be1, wq, wk, wv, wo, g2, be2, w1, b1, w2, b2 = X
    n1 = layer_norm(x, g1, be1)
    q, k, v = n1 @ wq, n1 @ wk, n1 @ wv
    h = x + (softmax(q @ k.T * 0.125) @ v) @ wo
    want = h + gelu(layer_norm(h, g2, be2) @ w1 + b1) @ w2 + b2
    np.testing.assert_allclose(got, want, rtol=RTOL, atol=ATOL)


def test_cnn_reuses_dead_activations(tmp_path, rng):
    path = MODELS / "cnn.mlir"
    plan = memory_plan(tmp_path, path)["cnn"]
    assert plan["planned"] < plan["naive"]
    assert check_plan_is_valid(plan) > 0

    x = f32(rng, 8, 3, 32, 32)
    k1, c1 = f32(rng, 16, 3, 3, 3, scale=0.3), f32(rng, 16, 1, 1)
    k2, c2 = f32(rng, 32, 16, 3, 3, scale=0.1), f32(rng, 32, 1, 1)
    w, b = f32(rng, 2048, 10, scale=0.02), f32(rng, 10)
    inputs = [x, k1, c1, k2, c2, w, b]
    (got,) = run_module(tmp_path, path.read_text(), inputs)

    x, k1, c1, k2, c2, w, b = [a.astype(np.float64) for a in inputs]
    p1 = max_pool2(np.maximum(conv2d_same(x, k1) + c1, 0))
    p2 = max_pool2(np.maximum(conv2d_same(p1, k2) + c2, 0))
    want = p2.reshape(8, 2048) @ w + b
    np.testing.assert_allclose(got, want, rtol=RTOL, atol=ATOL)


NESTED = """
func.func private @helper(%x: tensor<16x16xf32>) -> tensor<16x16xf32> {
  %t = paddle.transpose %x perm = [1, 0] : tensor<16x16xf32> -> tensor<16x16xf32>
  %e = paddle.tanh %t : tensor<16x16xf32> -> tensor<16x16xf32>
  %m = paddle.matmul %e, %x : tensor<16x16xf32>, tensor<16x16xf32> -> tensor<16x16xf32>
  return %m : tensor<16x16xf32>
}
func.func @main(%x: tensor<16x16xf32>) -> tensor<16x16xf32> {
  %t = paddle.transpose %x perm = [1, 0] : tensor<16x16xf32> -> tensor<16x16xf32>
  %s = paddle.sin %t : tensor<16x16xf32> -> tensor<16x16xf32>
  %m = paddle.matmul %s, %x : tensor<16x16xf32>, tensor<16x16xf32> -> tensor<16x16xf32>
  %h = func.call @helper(%m) : (tensor<16x16xf32>) -> tensor<16x16xf32>
  %u = paddle.transpose %h perm = [1, 0] : tensor<16x16xf32> -> tensor<16x16xf32>
  %r = paddle.matmul %u, %s : tensor<16x16xf32>, tensor<16x16xf32> -> tensor<16x16xf32>
  return %r : tensor<16x16xf32>
}
"""


def test_planned_function_calls_planned_function(tmp_path, rng):
    # Both functions take a workspace; the callee's frame nests in the
    # caller's, which must survive the call.
    module = Path(tmp_path) / "nested.mlir"
    module.write_text(NESTED)
    plans = memory_plan(tmp_path, module)
    assert plans["main"]["buffers"] and plans["helper"]["buffers"]
    for name in ("main", "helper"):
        check_plan_is_valid(plans[name])

    x = f32(rng, 16, 16, scale=0.5)
    (got,) = run_module(tmp_path, NESTED, [x], function="main")
    x = x.astype(np.float64)
    s = np.sin(x.T)
    m = s @ x
    h = np.tanh(m.T) @ m
    np.testing.assert_allclose(got, h.T @ s, rtol=RTOL, atol=ATOL)


MLP = """
func.func @mlp(%x: tensor<{b}x64xf32>, %w1: tensor<64x128xf32>, %b1: tensor<128xf32>,
               %w2: tensor<128x10xf32>, %b2: tensor<10xf32>)
    -> (tensor<{b}x10xf32>, tensor<{b}xi64>) {{
  %h = paddle.matmul %x, %w1 : tensor<{b}x64xf32>, tensor<64x128xf32> -> tensor<{b}x128xf32>
  %hb = paddle.add %h, %b1 : tensor<{b}x128xf32>, tensor<128xf32> -> tensor<{b}x128xf32>
  %a = paddle.gelu %hb : tensor<{b}x128xf32> -> tensor<{b}x128xf32>
  %l = paddle.matmul %a, %w2 : tensor<{b}x128xf32>, tensor<128x10xf32> -> tensor<{b}x10xf32>
  %lb = paddle.add %l, %b2 : tensor<{b}x10xf32>, tensor<10xf32> -> tensor<{b}x10xf32>
  %p = paddle.softmax %lb axis = -1 : tensor<{b}x10xf32> -> tensor<{b}x10xf32>
  %c = paddle.argmax %p axis = 1 : tensor<{b}x10xf32> -> tensor<{b}xi64>
  return %p, %c : tensor<{b}x10xf32>, tensor<{b}xi64>
}}
"""


@pytest.mark.parametrize("batch", [1, 3, 64])
def test_mlp_matches_numpy(tmp_path, rng, batch):
    # The MLP of examples/mlp (benchmarks/models/mlp.mlir) with a static
    # batch: the hidden activation and the softmax temporaries are planned.
    text = MLP.format(b=batch)
    module = Path(tmp_path) / "mlp.mlir"
    module.write_text(text)
    plan = memory_plan(tmp_path, module)["mlp"]
    assert len(plan["buffers"]) >= 2
    assert check_plan_is_valid(plan) > 0

    x = f32(rng, batch, 64)
    w1, b1 = f32(rng, 64, 128, scale=0.125), f32(rng, 128)
    w2, b2 = f32(rng, 128, 10, scale=0.1), f32(rng, 10)
    probs, classes = run_module(tmp_path, text, [x, w1, b1, w2, b2])
    x, w1, b1, w2, b2 = [a.astype(np.float64) for a in (x, w1, b1, w2, b2)]
    want = softmax(gelu(x @ w1 + b1) @ w2 + b2)
    np.testing.assert_allclose(probs, want, rtol=RTOL, atol=ATOL)
    np.testing.assert_array_equal(classes, probs.argmax(1))


def test_memory_picture_draws_every_buffer(tmp_path):
    import xml.etree.ElementTree as ET
    plan_path = Path(tmp_path) / "plan.json"
    plans = memory_plan(tmp_path, MODELS / "transformer_block.mlir")
    plan_path.write_text(json.dumps({"functions": list(plans.values())}))
    svg = Path(tmp_path) / "plan.svg"
    script = REPO / "scripts" / "memory_picture.py"
    proc = subprocess.run([sys.executable, str(script), str(plan_path), "-o", str(svg)],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    root = ET.parse(svg).getroot()
    rects = root.findall("{http://www.w3.org/2000/svg}rect")
    # One background rectangle, then one per buffer.
    assert len(rects) == 1 + len(plans["transformer_block"]["buffers"])
    bad = subprocess.run([sys.executable, str(script), str(plan_path), "-o", str(svg),
                          "--function", "missing"], capture_output=True, text=True)
    assert bad.returncode == 1
    assert "no function 'missing'" in bad.stderr
