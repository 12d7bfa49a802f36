"""Compiled training steps (pm.nn.TrainStep) vs plain numpy training.

The first 5 steps of an MLP (SGD with momentum and weight decay) and of a
small CNN (Adam) match nn_numpy_reference (forward, backward and update
written out by hand, float64) to rtol 1e-5 for the loss, the outputs and
every parameter. Parameters, optimizer state and buffers are updated in
place: the same numpy buffers before and after each step.
"""

import numpy as np
import pytest

import nn_numpy_reference as R
from paddle_mlir import nn, optim

STEPS = 5
RTOL, ATOL = 1e-5, 1e-6


class MLP(nn.Module):
    def __init__(self, rng):
        super().__init__()
        self.fc1 = nn.Linear(12, 16, rng=rng)
        self.act = nn.ReLU()
        self.fc2 = nn.Linear(16, 5, rng=rng)

    def forward(self, x):
        return self.fc2(self.act(self.fc1(x)))


class CNN(nn.Module):
    def __init__(self, rng):
        super().__init__()
        self.conv = nn.Conv2D(2, 4, 3, padding=1, rng=rng)
        self.fc = nn.Linear(4 * 3 * 3, 5, rng=rng)

    def forward(self, x):
        h = nn.functional.max_pool2d(nn.functional.relu(self.conv(x)), 2)
        return self.fc(nn.functional.flatten(h))


def addresses(model, opt):
    return ([p.ctypes.data for p in model.parameters()] + [b.ctypes.data for b in model.buffers()]
            + [s.ctypes.data for s in opt.state.values()])


def run_steps(model, opt, ref_fn, ref_opt, batches):
    step = nn.TrainStep(model, nn.CrossEntropyLoss(), opt)
    ref_params = {k: v.astype(np.float64) for k, v in model.named_parameters().items()}
    before = addresses(model, opt)
    for i, (x, y) in enumerate(batches):
        old = {k: v.copy() for k, v in model.named_parameters().items()}
        out = step(x, y)
        loss, logits, grads = ref_fn(ref_params, x.astype(np.float64), y)
        ref_opt.step(ref_params, grads)
        np.testing.assert_allclose(out.loss, loss, rtol=RTOL, err_msg=f"loss, step {i}")
        np.testing.assert_allclose(out.outputs, logits, rtol=RTOL, atol=ATOL,
                                   err_msg=f"logits, step {i}")
        for k, v in model.named_parameters().items():
            np.testing.assert_allclose(v, ref_params[k], rtol=RTOL, atol=ATOL,
                                       err_msg=f"{k} after step {i}")
            assert not np.array_equal(v, old[k]), f"{k} did not change in step {i}"
        # Donation: the compiled step wrote into the very same buffers.
        assert step.donated, "the compiled step does not alias its state arguments"
        assert addresses(model, opt) == before, f"buffers were replaced in step {i}"
    assert int(opt.state["step"]) == len(batches)
    return step


def batches_for(rng, shape, n):
    return [(rng.standard_normal((8,) + shape).astype(np.float32),
             rng.integers(0, 5, 8).astype(np.int64)) for _ in range(n)]


def test_mlp_five_steps_sgd_momentum_match_numpy(rng):
    model = MLP(rng)
    opt = optim.SGD(model, lr=0.1, momentum=0.9, weight_decay=1e-3)
    step = run_steps(model, opt, R.mlp_loss_and_grads,
                     R.SGD(0.1, momentum=0.9, weight_decay=1e-3),
                     batches_for(rng, (12,), STEPS))
    assert len(step._cache) == 1  # one compiled function for all steps


def test_cnn_five_steps_adam_match_numpy(rng):
    model = CNN(rng)
    opt = optim.Adam(model, lr=0.01)
    run_steps(model, opt, R.cnn_loss_and_grads, R.Adam(0.01), batches_for(rng, (2, 6, 6), STEPS))


def test_train_step_is_one_function_with_donated_arguments(rng):
    model = MLP(rng)
    opt = optim.AdamW(model, lr=0.01)
    step = nn.TrainStep(model, nn.CrossEntropyLoss(), opt)
    x, y = batches_for(rng, (12,), 1)[0]
    step(x, y)
    text = step.last_module.to_text()
    assert text.count("func.func") == 1, text[:2000]
    n_donated = len(model.parameters()) + len(opt.state)
    assert text.count("paddle.aliasing_output") == n_donated
    for i in range(n_donated):  # argument i -> result 2 + i (after loss, outputs)
        assert f"paddle.aliasing_output = {2 + i} : i64" in text


def test_batchnorm_dropout_buffers_update_in_place(rng):
    model = nn.Sequential(nn.BatchNorm2D(2), nn.ReLU(), nn.Flatten(), nn.Dropout(0.3, seed=5),
                          nn.Linear(2 * 4 * 4, 5, rng=rng))
    opt = optim.SGD(model, lr=0.05)
    step = nn.TrainStep(model, nn.CrossEntropyLoss(), opt)
    x, y = batches_for(rng, (2, 4, 4), 1)[0]
    _, mean, var = R.batchnorm_train(x.astype(np.float64), np.ones(2), np.zeros(2), 1e-5)
    bn, drop = model[0], model[3]
    ptrs = (bn.running_mean.ctypes.data, bn.running_var.ctypes.data, drop.step.ctypes.data)
    out1 = step(x, y)
    assert (bn.running_mean.ctypes.data, bn.running_var.ctypes.data,
            drop.step.ctypes.data) == ptrs
    n = 8 * 4 * 4
    np.testing.assert_allclose(bn.running_mean, 0.1 * mean, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(bn.running_var, 0.9 + 0.1 * var * n / (n - 1), rtol=1e-5,
                               atol=1e-6)
    assert int(drop.step) == 1
    out2 = step(x, y)
    assert int(drop.step) == 2 and float(out2.loss) != float(out1.loss)

    # Eval mode compiles a second function: running stats and the dropout
    # counter stay as they are, parameters still train.
    model.eval()
    stats = bn.running_mean.copy()
    w = model[4].weight.copy()
    step(x, y)
    assert len(step._cache) == 2
    np.testing.assert_array_equal(bn.running_mean, stats)
    assert int(drop.step) == 2
    assert not np.array_equal(model[4].weight, w)


def test_frozen_parameters_stay(rng):
    model = MLP(rng)
    opt = optim.SGD(model.fc2.parameters(), lr=0.1)
    step = nn.TrainStep(model, nn.CrossEntropyLoss(), opt)
    start = {k: v.astype(np.float64) for k, v in model.named_parameters().items()}
    x, y = batches_for(rng, (12,), 1)[0]
    step(x, y)
    _, _, grads = R.mlp_loss_and_grads(start, x.astype(np.float64), y)
    for k, v in model.named_parameters().items():
        if k.startswith("fc1"):
            np.testing.assert_array_equal(v, start[k], err_msg=k)  # not in the optimizer
        else:
            np.testing.assert_allclose(v, start[k] - 0.1 * grads[k], rtol=RTOL, atol=ATOL,
                                       err_msg=k)


def test_mse_regression_step(rng):
    model = nn.Sequential(nn.Linear(3, 1, rng=rng))
    opt = optim.SGD(model, lr=0.1)
    step = nn.TrainStep(model, nn.MSELoss(), opt)
    x = rng.standard_normal((16, 3)).astype(np.float32)
    t = (x @ np.array([[1.0], [-2.0], [0.5]]) + 0.3).astype(np.float32)
    w, b = model[0].weight.astype(np.float64), model[0].bias.astype(np.float64)
    out = step(x, t)
    pred = x @ w.T + b
    loss, d = R.mse(pred, t)
    _, dw, db = R.linear_backward(x, w, d)
    np.testing.assert_allclose(out.loss, loss, rtol=RTOL)
    np.testing.assert_allclose(model[0].weight, w - 0.1 * dw, rtol=RTOL, atol=ATOL)
    np.testing.assert_allclose(model[0].bias, b - 0.1 * db, rtol=RTOL, atol=ATOL)


def test_train_step_errors(rng):
    model = MLP(rng)
    other = MLP(rng)
    with pytest.raises(ValueError, match="optimizer parameter 0 .* is not a parameter of the "
                                         "model"):
        nn.TrainStep(model, nn.CrossEntropyLoss(), optim.SGD(other, lr=0.1))
    step = nn.TrainStep(model, nn.CrossEntropyLoss(), optim.SGD(model, lr=0.1))
    with pytest.raises(TypeError, match="batch item 0 has dtype complex128"):
        step(np.zeros((2, 12), np.complex128), np.zeros(2, np.int64))
    with pytest.raises(ValueError, match=r"Linear\(12, 16\): input has 3 features"):
        step(np.zeros((2, 3), np.float32), np.zeros(2, np.int64))
    mha = nn.MultiHeadAttention(4, 2)

    class TwoOutputs(nn.Module):
        def __init__(self):
            super().__init__()
            self.mha = mha

        def forward(self, x):
            return self.mha(x, x, x)

    model = TwoOutputs()
    step = nn.TrainStep(model, nn.MSELoss(), optim.SGD(model, lr=0.1))
    with pytest.raises(TypeError, match="the model must return one array .* got a tuple"):
        step(np.zeros((1, 2, 4), np.float32), np.zeros((1, 2, 4), np.float32))


def test_inference_function_and_export(rng, tmp_path):
    model = MLP(rng)
    x = rng.standard_normal((4, 12)).astype(np.float32)
    predict = nn.InferenceFunction(model)
    np.testing.assert_allclose(predict(x), model(x), rtol=RTOL, atol=ATOL)
    model.fc1.weight[...] *= 2  # parameters are arguments: no recompile needed
    np.testing.assert_allclose(predict(x), model(x), rtol=RTOL, atol=ATOL)
    assert len(predict._cache) == 1
    module = nn.export(model, x, tmp_path / "mlp.mlirbc")
    assert (tmp_path / "mlp.mlirbc").exists() and "forward" in module.function_names()
