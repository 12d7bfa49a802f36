"""Pipeline-parallel training (TrainStep(..., parallel="pipeline")): an MLP
and a GPT-2-style block cut into stages over an in-process mesh (alone, or
each stage data-parallel: pipeline x data), the batch cut into
microbatches and run with the 1F1B schedule; five Adam steps give
the losses, outputs and parameters of the single-device run to 1e-5. Also
the schedule itself, the activations each stage holds, and the errors: bad
stage boundaries, batches the microbatches do not divide, models that are
not Sequential, and a stage that fails mid-step (its neighbours stop
instead of waiting, and no parameter changes)."""

import time

import numpy as np
import pytest

import paddle_mlir as pm
from paddle_mlir import nn, optim
from paddle_mlir.nn.pipeline import one_f_one_b
from test_spmd_training import block_batches, mlp_batches

TOL = 1e-5


class Attention(nn.Module):
    """Pre-LayerNorm causal self-attention with its residual."""

    def __init__(self, rng, d, heads, seq):
        super().__init__()
        self.ln = nn.LayerNorm(d)
        # No q/k/v bias: see test_spmd_training.Block.
        self.attn = nn.MultiHeadAttention(d, heads, bias=False, rng=rng)
        self.causal = np.triu(np.ones((seq, seq), bool), 1)

    def forward(self, x):
        h = self.ln(x)
        return x + self.attn(h, h, h, attn_mask=self.causal)[0]


class FeedForward(nn.Module):
    """Pre-LayerNorm GELU MLP with its residual."""

    def __init__(self, rng, d):
        super().__init__()
        self.ln = nn.LayerNorm(d)
        self.fc = nn.Linear(d, 4 * d, rng=rng)
        self.act = nn.GELU()
        self.proj = nn.Linear(4 * d, d, rng=rng)

    def forward(self, x):
        return x + self.proj(self.act(self.fc(self.ln(x))))


def mlp(rng):
    return nn.Sequential(nn.Linear(12, 16, rng=rng), nn.ReLU(), nn.Linear(16, 16, rng=rng),
                         nn.Tanh(), nn.Linear(16, 4, rng=rng))


def block(rng):
    # Two GPT-2 blocks (d 16, 4 heads, sequence 6).
    return nn.Sequential(Attention(rng, 16, 4, 6), FeedForward(rng, 16),
                         Attention(rng, 16, 4, 6), FeedForward(rng, 16))


MODELS = {"mlp": (mlp, nn.CrossEntropyLoss, mlp_batches),
          "block": (block, nn.MSELoss, block_batches)}


def train_model(make, loss_cls, batches, **plan):
    """Five Adam steps of make(rng): the losses, outputs (None where a
    pipeline stage has none), the parameters and the TrainStep."""
    model = make(np.random.default_rng(0))
    step = nn.TrainStep(model, loss_cls(), optim.Adam(model, lr=0.01), **plan)
    losses, outputs = [], []
    for x, y in batches():
        out = step(x, y)
        losses.append(float(out.loss))
        outputs.append(None if out.outputs is None else np.array(out.outputs))
    return losses, outputs, {k: v.copy() for k, v in model.named_parameters().items()}, step


def train(kind, **plan):
    return train_model(*MODELS[kind], **plan)


_reference = {}


def reference(kind):
    if kind not in _reference:
        _reference[kind] = train(kind)
    return _reference[kind]


PLANS = {
    # (mesh, microbatches, boundaries)
    "2-stages-4-microbatches": (pm.Mesh(2, "pipe"), 4, None),
    "2-stages-2-microbatches": (pm.Mesh(2, "pipe"), 2, (1,)),
    "4-stages-4-microbatches": (pm.Mesh(4, "pipe"), 4, None),
    # Pipeline x data: each stage data-parallel over 2 devices.
    "2-stages-x-2-data": (pm.Mesh((2, 2), ("pipe", "data")), 2, None),
}


@pytest.mark.parametrize("plan", list(PLANS))
@pytest.mark.parametrize("kind", list(MODELS))
def test_pipeline_training_matches_one_device(kind, plan):
    mesh, microbatches, bounds = PLANS[plan]
    stages = mesh.shape[mesh.axis_names.index("pipe")]
    ref_losses, ref_outputs, ref_params, _ = reference(kind)
    losses, outputs, params, step = train(
        kind, mesh=mesh, parallel="pipeline", stages=bounds, microbatches=microbatches)
    np.testing.assert_allclose(losses, ref_losses, rtol=TOL, atol=TOL)
    for got, want in zip(outputs, ref_outputs):
        np.testing.assert_allclose(got, want, rtol=TOL, atol=TOL)
    initial = MODELS[kind][0](np.random.default_rng(0)).named_parameters()
    for k, want in ref_params.items():
        np.testing.assert_allclose(params[k], want, rtol=TOL, atol=TOL, err_msg=k)
        assert not np.array_equal(want, initial[k]), f"{k} never trained"
    # Each stage holds the parameters of its own layers only (the MLP's
    # 4-stage cut gives its ReLU a stage of its own, with none), and 1F1B
    # keeps at most S - s microbatch inputs on stage s.
    pipeline = step._pipeline
    owned = [k for st in pipeline.stages for k in st["trained"]]
    assert sorted(owned) == sorted(params) and len(set(owned)) == len(owned)
    assert pipeline.peak_in_flight == [min(stages - s, microbatches) for s in range(stages)]
    if len(mesh.shape) == 2:
        # The stages' gradients are all-reduced over the data axis.
        text = str(pipeline._cache[next(iter(pipeline._cache))][0]["module"])
        assert "shard.grid" in text and "split_axes = [[0]]" in text


def simulate(schedule):
    """Runs the schedule's message dependencies with buffered sends and
    blocking receives; returns the order in which actions completed, or
    raises on a deadlock."""
    stages = len(schedule)
    sent, done, position = set(), [], [0] * stages
    while any(p < len(a) for p, a in zip(position, schedule)):
        progressed = False
        for s in range(stages):
            if position[s] == len(schedule[s]):
                continue
            kind, mb = schedule[s][position[s]]
            if kind == "F" and s > 0 and ("F", s - 1, mb) not in sent:
                continue
            if kind == "B" and s < stages - 1 and ("B", s + 1, mb) not in sent:
                continue
            sent.add((kind, s, mb))
            done.append((s, kind, mb))
            position[s] += 1
            progressed = True
        assert progressed, f"deadlock at {position}"
    return done


@pytest.mark.parametrize("stages,microbatches", [(1, 3), (2, 1), (2, 5), (3, 2), (4, 8)])
def test_one_f_one_b_schedule(stages, microbatches):
    schedule = one_f_one_b(stages, microbatches)
    for s, actions in enumerate(schedule):
        # Every microbatch once forward, once backward, forward first, and
        # the backwards in order.
        assert sorted(actions) == sorted([("F", m) for m in range(microbatches)]
                                         + [("B", m) for m in range(microbatches)])
        assert all(actions.index(("F", m)) < actions.index(("B", m))
                   for m in range(microbatches))
        # Warm-up forwards, then one forward per backward: at most S - s
        # microbatches in flight.
        warmup = min(stages - s - 1, microbatches)
        assert actions[:warmup] == [("F", m) for m in range(warmup)]
        in_flight = peak = 0
        for kind, _ in actions:
            in_flight += 1 if kind == "F" else -1
            peak = max(peak, in_flight)
        assert peak == min(stages - s, microbatches)
    simulate(schedule)


def test_stage_boundaries_and_batches_are_checked():
    model = mlp(np.random.default_rng(0))
    opt = optim.Adam(model, lr=0.01)
    mesh = pm.Mesh(2, "pipe")

    def make(**kw):
        return nn.TrainStep(model, nn.CrossEntropyLoss(), opt, **kw)

    with pytest.raises(ValueError, match=r"stages must give 1 boundaries .* got \(1, 3\)"):
        make(mesh=mesh, parallel="pipeline", stages=(1, 3))
    with pytest.raises(ValueError, match=r"increasing layer indices in 1\.\.4, got \(5,\)"):
        make(mesh=mesh, parallel="pipeline", stages=(5,))
    with pytest.raises(ValueError, match="microbatches must be a positive int, got 0"):
        make(mesh=mesh, parallel="pipeline", microbatches=0)
    with pytest.raises(ValueError, match="runs one stage per device of a 1-D mesh, or of the "
                                         "'pipe' axis of a \\('pipe', 'data'\\) mesh"):
        make(mesh=pm.Mesh((2, 2), ("pipe", "model")), parallel="pipeline")
    with pytest.raises(ValueError, match="stages and microbatches are for"):
        make(microbatches=2)
    with pytest.raises(ValueError, match="zero=1 .* parallel='pipeline' has none"):
        make(mesh=mesh, parallel="pipeline", zero=1)
    step = make(mesh=mesh, parallel="pipeline", microbatches=3)
    x, y = mlp_batches()[0]
    before = {k: v.copy() for k, v in model.named_parameters().items()}
    with pytest.raises(ValueError, match=r"batch item 0 of shape \(8, 12\) cannot be cut into "
                                         r"3 microbatches"):
        step(x, y)
    for k, v in model.named_parameters().items():
        np.testing.assert_array_equal(v, before[k])


def test_models_the_pipeline_cannot_cut_are_clear_errors():
    rng = np.random.default_rng(0)
    mesh = pm.Mesh(2, "pipe")

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 4, rng=rng)

        def forward(self, x):
            return self.fc(x)

    net = Net()
    with pytest.raises(TypeError, match="cuts an nn.Sequential into stages, got a Net"):
        nn.TrainStep(net, nn.MSELoss(), optim.SGD(net, lr=0.1), mesh=mesh, parallel="pipeline")
    drop = nn.Sequential(nn.Linear(4, 4, rng=rng), nn.Dropout(0.1), nn.Linear(4, 4, rng=rng))
    with pytest.raises(ValueError, match=r"does not support buffers \(1.step\)"):
        nn.TrainStep(drop, nn.MSELoss(), optim.SGD(drop, lr=0.1), mesh=mesh,
                     parallel="pipeline")
    tied = nn.Sequential(nn.Linear(4, 4, rng=rng), nn.Tanh(), nn.Linear(4, 4, rng=rng))
    tied[2]._parameters["weight"] = tied[0].weight  # the same array
    with pytest.raises(ValueError, match="parameter '2.weight' of pipeline stage 1 is also "
                                         "'0.weight' of stage 0 \\(tied weights\\)"):
        nn.TrainStep(tied, nn.MSELoss(), optim.SGD(tied, lr=0.1), mesh=mesh,
                     parallel="pipeline", stages=(2,))
    one = nn.Sequential(nn.Linear(4, 4, rng=rng))
    with pytest.raises(ValueError, match="over 2 stages needs at least 2 layers"):
        nn.TrainStep(one, nn.MSELoss(), optim.SGD(one, lr=0.1), mesh=mesh, parallel="pipeline")
    class Argmax(nn.Module):
        def forward(self, x):
            return pm.argmax(x, axis=-1)

    ints = nn.Sequential(nn.Linear(4, 4, rng=rng), Argmax(), nn.Embedding(4, 4, rng=rng))
    step = nn.TrainStep(ints, nn.MSELoss(), optim.SGD(ints, lr=0.1), mesh=mesh,
                        parallel="pipeline")
    x = np.zeros((2, 4), np.float32)
    with pytest.raises(TypeError, match="stage 0 passes int64 to stage 1; the values between "
                                        "stages must be float32"):
        step(x, np.zeros((2, 4), np.float32))


def test_a_failing_stage_stops_its_neighbours():
    # Stage 0 looks tokens up in an embedding; one is out of range, so its
    # forward fails, and stage 1, waiting for the activations, fails at
    # once naming it rather than at the timeout. Nothing is updated.
    rng = np.random.default_rng(0)
    model = nn.Sequential(nn.Embedding(10, 8, rng=rng), nn.Linear(8, 8, rng=rng),
                          nn.Tanh(), nn.Linear(8, 3, rng=rng))
    opt = optim.Adam(model, lr=0.01)
    step = nn.TrainStep(model, nn.MSELoss(), opt, mesh=pm.Mesh(2, "pipe"),
                        parallel="pipeline", microbatches=2)
    tokens = np.arange(8, dtype=np.int64).reshape(4, 2)
    target = np.zeros((4, 2, 3), np.float32)
    step(tokens, target)  # compiles, and trains once
    before = {k: v.copy() for k, v in model.named_parameters().items()}
    state = {k: v.copy() for k, v in opt.state.items()}
    tokens[3, 1] = 42
    start = time.monotonic()
    with pytest.raises(Exception, match=r"pipeline stage 0: .*out of range"):
        step(tokens, target)
    assert time.monotonic() - start < 30
    for k, v in model.named_parameters().items():
        np.testing.assert_array_equal(v, before[k], err_msg=k)
    for k, v in opt.state.items():
        np.testing.assert_array_equal(v, state[k], err_msg=k)
