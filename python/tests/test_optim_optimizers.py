"""pm.optim vs numpy optimizers written from the PyTorch formulas, for several
steps, eagerly (opt.step) and compiled (pm.jit of opt.update).

Tolerance: rtol 1e-5 / atol 1e-6 after 6 steps (float32 vs float64).
"""

import numpy as np
import pytest

import nn_numpy_reference as R
from paddle_mlir import nn, optim

STEPS = 6


def make_params(rng):
    return {"a": rng.standard_normal((4, 3)).astype(np.float32),
            "b": rng.standard_normal(3).astype(np.float32)}


class Holder(nn.Module):
    def __init__(self, params):
        super().__init__()
        for k, v in params.items():
            setattr(self, k, nn.Parameter(v))


CASES = [
    ("sgd", lambda p: optim.SGD(p, lr=0.1), lambda: R.SGD(0.1)),
    ("sgd_momentum_wd", lambda p: optim.SGD(p, lr=0.05, momentum=0.9, weight_decay=0.01),
     lambda: R.SGD(0.05, momentum=0.9, weight_decay=0.01)),
    ("sgd_nesterov", lambda p: optim.SGD(p, lr=0.05, momentum=0.8, nesterov=True),
     lambda: R.SGD(0.05, momentum=0.8, nesterov=True)),
    ("adam", lambda p: optim.Adam(p, lr=0.01), lambda: R.Adam(0.01)),
    ("adam_l2", lambda p: optim.Adam(p, lr=0.01, betas=(0.8, 0.99), weight_decay=0.1),
     lambda: R.Adam(0.01, betas=(0.8, 0.99), weight_decay=0.1)),
    ("adamw", lambda p: optim.AdamW(p, lr=0.01, weight_decay=0.1),
     lambda: R.Adam(0.01, weight_decay=0.1, decoupled=True)),
]


@pytest.mark.parametrize("name,make,make_ref", CASES, ids=[c[0] for c in CASES])
@pytest.mark.parametrize("mode", ["eager", "compiled"])
def test_optimizer_matches_numpy(name, make, make_ref, mode, rng):
    model = Holder(make_params(rng))
    opt = make(model)
    ref, ref_params = make_ref(), {k: v.astype(np.float64)
                                   for k, v in model.named_parameters().items()}
    if mode == "compiled":
        import paddle_mlir as pm

        update = pm.jit(opt.update)
    for _ in range(STEPS):
        grads = [rng.standard_normal(p.shape).astype(np.float32) for p in opt.params]
        if mode == "eager":
            opt.step(grads)
        else:
            new_params, new_state = update(list(opt.params), grads, dict(opt.state))
            for p, v in zip(opt.params, new_params):
                p[...] = v
            for k, v in new_state.items():
                opt.state[k][...] = v
        ref.step(ref_params, dict(zip(ref_params, grads)))
    for k, v in model.named_parameters().items():
        np.testing.assert_allclose(v, ref_params[k], rtol=1e-5, atol=1e-6, err_msg=k)
    assert int(opt.state["step"]) == STEPS


def test_optimizer_state_dict_round_trip(rng):
    model = Holder(make_params(rng))
    opt = optim.Adam(model, lr=0.01)
    opt.step([np.ones_like(p) for p in opt.params])
    saved = opt.state_dict()
    assert sorted(saved) == ["bias_correction1", "bias_correction2", "exp_avg.0", "exp_avg.1",
                             "exp_avg_sq.0", "exp_avg_sq.1", "step"]
    opt2 = optim.Adam(Holder(make_params(rng)), lr=0.01)
    opt2.load_state_dict(saved)
    for k in saved:
        np.testing.assert_array_equal(opt2.state[k], opt.state[k])
    with pytest.raises(KeyError, match="expected keys"):
        opt2.load_state_dict({"step": np.zeros((), np.int64)})


def test_optimizer_errors(rng):
    model = Holder(make_params(rng))
    with pytest.raises(ValueError, match="lr must be > 0"):
        optim.SGD(model, lr=0.0)
    with pytest.raises(ValueError, match="nesterov needs momentum"):
        optim.SGD(model, lr=0.1, nesterov=True)
    with pytest.raises(ValueError, match=r"betas must be in \[0, 1\)"):
        optim.Adam(model, betas=(0.9, 1.0))
    with pytest.raises(ValueError, match="empty parameter list"):
        optim.SGD([], lr=0.1)
    with pytest.raises(TypeError, match="parameter 0 must be a writable C-contiguous float32"):
        optim.SGD([np.zeros(3)], lr=0.1)
    opt = optim.SGD(model, lr=0.1)
    with pytest.raises(ValueError, match="got 1 gradients for 2 parameters"):
        opt.step([np.zeros((4, 3), np.float32)])
