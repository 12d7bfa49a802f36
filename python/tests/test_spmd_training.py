"""Data, tensor (Megatron), data x tensor and ZeRO-1 parallel training of an
MLP and a GPT-2-style block on in-process meshes of 2 and 4 devices: five
Adam steps (pm.nn.TrainStep(..., mesh=..., parallel=...)) give the losses,
outputs and parameters of the single-device run to 1e-5, and the
partitioned program holds the collectives the split needs (it is not
computing everything on every device)."""

import numpy as np
import pytest

import paddle_mlir as pm
from paddle_mlir import _core, nn, optim

STEPS = 5
TOL = 1e-5


class MLP(nn.Module):
    def __init__(self, rng):
        super().__init__()
        self.fc1 = nn.Linear(12, 16, rng=rng)
        self.act = nn.ReLU()
        self.fc2 = nn.Linear(16, 4, rng=rng)

    def forward(self, x):
        return self.fc2(self.act(self.fc1(x)))


class Block(nn.Module):
    """A GPT-2 block: pre-LayerNorm causal self-attention and a GELU MLP,
    each with a residual."""

    def __init__(self, rng, d=16, heads=4, seq=6):
        super().__init__()
        self.ln1 = nn.LayerNorm(d)
        # No q/k/v bias: the key bias has a zero gradient in exact
        # arithmetic (softmax ignores a shift per row), so Adam would turn
        # rounding noise into updates that no two summation orders share.
        self.attn = nn.MultiHeadAttention(d, heads, bias=False, rng=rng)
        self.ln2 = nn.LayerNorm(d)
        self.fc = nn.Linear(d, 4 * d, rng=rng)
        self.act = nn.GELU()
        self.proj = nn.Linear(4 * d, d, rng=rng)
        self.causal = np.triu(np.ones((seq, seq), bool), 1)

    def forward(self, x):
        h = self.ln1(x)
        a, _ = self.attn(h, h, h, attn_mask=self.causal)
        x = x + a
        return x + self.proj(self.act(self.fc(self.ln2(x))))


def mlp_batches():
    rng = np.random.default_rng(1)
    return [(rng.standard_normal((8, 12)).astype(np.float32),
             rng.integers(0, 4, 8).astype(np.int64)) for _ in range(STEPS)]


def block_batches():
    rng = np.random.default_rng(2)
    return [(rng.standard_normal((4, 6, 16)).astype(np.float32),
             rng.standard_normal((4, 6, 16)).astype(np.float32))
            for _ in range(STEPS)]


MODELS = {
    "mlp": (MLP, nn.CrossEntropyLoss, mlp_batches),
    "block": (Block, nn.MSELoss, block_batches),
}

# Megatron's split of the block: attention heads and the MLP's hidden
# units over "model" (q, k, v projections and fc by rows, the output
# projections by columns).
BLOCK_TENSOR = {"attn.in_proj_weight": pm.P("model"),
                "attn.out_proj.weight": pm.P(None, "model"),
                "fc.weight": pm.P("model"), "fc.bias": pm.P("model"),
                "proj.weight": pm.P(None, "model")}

PLANS = {
    "data-2": (pm.Mesh(2), dict(parallel="data")),
    "data-4": (pm.Mesh(4), dict(parallel="data")),
    "tensor-2": (pm.Mesh(2, "model"), dict(parallel="tensor")),
    "data-x-tensor-2x2": (pm.Mesh((2, 2), ("data", "model")), dict(parallel="tensor")),
    "zero1-2": (pm.Mesh(2), dict(parallel="data", zero=1)),
}


def train(kind, mesh=None, **plan):
    cls, loss_cls, batches = MODELS[kind]
    model = cls(np.random.default_rng(0))
    opt = optim.Adam(model, lr=0.01)
    if kind == "block" and plan.get("parallel") == "tensor":
        plan = dict(plan, parallel=BLOCK_TENSOR)
    step = nn.TrainStep(model, loss_cls(), opt, mesh=mesh, **plan)
    losses, outputs = [], []
    for x, y in batches():
        out = step(x, y)
        losses.append(float(out.loss))
        outputs.append(np.array(out.outputs))
    params = {k: v.copy() for k, v in model.named_parameters().items()}
    return losses, outputs, params, step


_reference = {}


def reference(kind):
    if kind not in _reference:
        _reference[kind] = train(kind)
    return _reference[kind]


def partitioned_text(step):
    module = step.last_module.clone()
    module.run_passes("builtin.module(paddle-partition)")
    return str(module)


@pytest.mark.parametrize("plan", list(PLANS))
@pytest.mark.parametrize("kind", list(MODELS))
def test_parallel_training_matches_one_device(kind, plan):
    mesh, options = PLANS[plan]
    ref_losses, ref_outputs, ref_params, _ = reference(kind)
    losses, outputs, params, step = train(kind, mesh, **options)
    np.testing.assert_allclose(losses, ref_losses, rtol=TOL, atol=TOL)
    for got, want in zip(outputs, ref_outputs):
        np.testing.assert_allclose(got, want, rtol=TOL, atol=TOL)
    for k, want in ref_params.items():
        np.testing.assert_allclose(params[k], want, rtol=TOL, atol=TOL, err_msg=k)
        assert not np.array_equal(want, MODELS[kind][0](np.random.default_rng(0))
                                  .named_parameters()[k]), f"{k} never trained"
    text = partitioned_text(step)
    assert "paddle.mesh" in text
    # Every plan splits something and so needs an all_reduce (the data
    # plans: of the gradients; tensor: of the row-split layers' partial
    # sums).
    assert "call @paddle_spmd_all_reduce_" in text, text[:4000]
    exe = next(iter(step._cache.values()))[0]
    signature = exe.signature(step.name)
    assert signature["mesh"] == mesh.shape
    n_params = len(params)
    state = [k for k in step.optimizer.state]
    splits = dict(zip(state, signature["input_shardings"][n_params:]))
    if options.get("zero"):
        # The optimizer state arrives split over the data axis: each device
        # updates its block of it.
        assert splits["exp_avg.0"][0] == (0,), splits
    elif options["parallel"] == "data":
        assert all(not any(d) for d in signature["input_shardings"][:n_params])


def test_data_parallel_inference_with_jit(rng):
    model = MLP(np.random.default_rng(0))
    x = rng.standard_normal((8, 12)).astype(np.float32)
    want = nn.InferenceFunction(model)(x)
    mesh = pm.Mesh(4)
    f = pm.jit(lambda v: model(v), mesh=mesh, in_shardings=pm.P("data"))
    np.testing.assert_allclose(f(x), want, rtol=1e-6, atol=1e-6)
    # A sharded array carries its own split.
    np.testing.assert_allclose(f(pm.device_put(x, mesh, pm.P("data"))), want,
                               rtol=1e-6, atol=1e-6)


def test_megatron_mlp_with_shard_constraints(rng):
    mesh = pm.Mesh((2, 2), ("data", "model"))
    x = rng.standard_normal((8, 16)).astype(np.float32)
    w1 = rng.standard_normal((16, 32)).astype(np.float32)
    w2 = rng.standard_normal((32, 16)).astype(np.float32)

    def mlp(x, w1, w2):
        h = pm.shard(pm.relu(x @ w1), pm.P("data", "model"))
        return h @ w2

    f = pm.jit(mlp, mesh=mesh, in_shardings=(pm.P("data"), pm.P(None, "model"),
                                             pm.P("model")),
               out_shardings=pm.P("data"))
    np.testing.assert_allclose(f(x, w1, w2), np.maximum(x @ w1, 0) @ w2,
                               rtol=1e-5, atol=1e-5)


def test_gradients_through_shard_constraints(rng):
    # pm.shard inside a differentiated function: its gradient is the
    # identity under the same split (paddle-autodiff's rule for
    # shard.shard), so the backward keeps the Megatron layout.
    mesh = pm.Mesh((2, 2), ("data", "model"))
    x = rng.standard_normal((8, 16)).astype(np.float32)
    w1 = rng.standard_normal((16, 32)).astype(np.float32)
    w2 = rng.standard_normal((32, 16)).astype(np.float32)

    def loss(w1, w2, x):
        h = pm.shard(pm.relu(x @ w1), pm.P("data", "model"))
        y = h @ w2
        return pm.sum(y * y)

    f = pm.jit(pm.grad(loss, argnums=(0, 1)), mesh=mesh,
               in_shardings=(pm.P(None, "model"), pm.P("model"), pm.P("data")))
    g1, g2 = f(w1, w2, x)
    z = x @ w1
    h = np.maximum(z, 0)
    dy = 2 * (h @ w2)
    np.testing.assert_allclose(g2, h.T @ dy, rtol=1e-4, atol=1e-3)
    np.testing.assert_allclose(g1, x.T @ ((dy @ w2.T) * (z > 0)), rtol=1e-4, atol=1e-3)


def test_sharded_array_shards_and_gather(rng):
    mesh = pm.Mesh((2, 2), ("data", "model"))
    x = rng.standard_normal((4, 6)).astype(np.float32)
    a = pm.device_put(x, mesh, pm.P("data", "model"))
    shards = a.shards
    assert len(shards) == 4 and all(s.shape == (2, 3) for s in shards)
    np.testing.assert_array_equal(shards[1], x[:2, 3:])  # device (0, 1)
    np.testing.assert_array_equal(shards[2], x[2:, :3])  # device (1, 0)
    np.testing.assert_array_equal(np.asarray(a), x)


def test_bad_meshes_and_specs_are_clear_errors(rng):
    with pytest.raises(ValueError, match="one name"):
        pm.Mesh((2, 2), ("data",))
    with pytest.raises(ValueError, match="repeat"):
        pm.Mesh((2, 2), ("a", "a"))
    mesh = pm.Mesh(2)
    x = rng.standard_normal((3, 4)).astype(np.float32)
    with pytest.raises(ValueError, match=r"no axis 'model' \(its axes: data\)"):
        pm.jit(lambda v: v + 1, mesh=mesh, in_shardings=pm.P("model"))(x)
    with pytest.raises(ValueError, match="dim 0 of size 3 does not split evenly over 2"):
        pm.jit(lambda v: v + 1, mesh=mesh, in_shardings=pm.P("data"))(x)
    with pytest.raises(ValueError, match="has 3 entries for an array of rank 2"):
        pm.jit(lambda v: v + 1, mesh=mesh, in_shardings=pm.P("data", None, None))(x)
    with pytest.raises(ValueError, match="need a mesh"):
        pm.jit(lambda v: v, in_shardings=pm.P("data"))
    model = MLP(rng)
    opt = optim.Adam(model)
    with pytest.raises(ValueError, match="axis named 'data'"):
        nn.TrainStep(model, nn.CrossEntropyLoss(), opt, mesh=pm.Mesh((2, 2)))
    with pytest.raises(ValueError, match="zero must be 0 or 1"):
        nn.TrainStep(model, nn.CrossEntropyLoss(), opt, mesh=pm.Mesh(2), zero=3)
    with pytest.raises(ValueError, match="does not have"):
        nn.TrainStep(model, nn.CrossEntropyLoss(), opt, mesh=pm.Mesh(2, "model"),
                     parallel={"fc9.weight": pm.P("model")})


def test_partition_keeps_one_device_program_small():
    """The partitioned program of the data-parallel step computes on the
    device's quarter of the batch."""
    _, _, _, step = train("mlp", pm.Mesh(4), parallel="data")
    text = partitioned_text(step)
    assert "tensor<2x12xf32>" in text and "tensor<8x12xf32>" not in text
    assert _core is not None
