"""Optimizers with their state as arrays (PyTorch update rules).

An optimizer is a pure update rule plus state arrays:

    new_params, new_state = opt.update(params, grads, state)

`params` and `grads` are lists in the order the optimizer was given its
parameters; `state` is a dict of arrays by name (momentum buffers, Adam
moments, step count). `update` uses only array arithmetic, so it runs on
numpy arrays (`opt.step(grads)`, eagerly, in place) and is traced into a
compiled train step (pm.nn.TrainStep), where the state arrays are donated
and updated in place like the parameters.
"""

import math
import numbers

import numpy as np

from ..nn import _ops
from ..nn.module import Module


def _as_param_list(params):
    if isinstance(params, Module):
        params = params.parameters()
    elif isinstance(params, dict):
        params = list(params.values())
    params = list(params)
    if not params:
        raise ValueError("optimizer got an empty parameter list")
    for i, p in enumerate(params):
        if not (isinstance(p, np.ndarray) and p.dtype == np.float32 and p.flags.c_contiguous
                and p.flags.writeable):
            raise TypeError(f"optimizer parameter {i} must be a writable C-contiguous float32 "
                            f"numpy array (a Module's parameter), got "
                            f"{type(p).__name__} {getattr(p, 'dtype', '')}")
    return params


def _check_number(owner, name, value, positive=False):
    """Hyperparameters are finite real numbers: >= 0, or > 0 if `positive`."""
    ok = (isinstance(value, numbers.Real) and not isinstance(value, bool)
          and math.isfinite(value) and (value > 0 if positive else value >= 0))
    if not ok:
        raise ValueError(f"{type(owner).__name__}: {name} must be "
                         f"{'> 0' if positive else '>= 0'} (a finite number), got {value!r}")


class Optimizer:
    def __init__(self, params, lr):
        _check_number(self, "lr", lr, positive=True)
        self.params = _as_param_list(params)
        self.lr = float(lr)
        self.state = dict()
        self.state["step"] = np.zeros((), np.int64)

    def _per_param(self, kind):
        for i, p in enumerate(self.params):
            self.state[f"{kind}.{i}"] = np.zeros_like(p)

    def hyperparameters(self):
        """What the traced update depends on besides arrays (a changed value
        means a new compiled step)."""
        return tuple(sorted((k, v) for k, v in vars(self).items()
                            if isinstance(v, (int, float, bool, tuple))))

    def update(self, params, grads, state):
        raise NotImplementedError

    def step(self, grads):
        """Eager update with numpy gradients (a list in parameter order):
        parameters and state change in place."""
        if len(grads) != len(self.params):
            raise ValueError(f"{type(self).__name__}.step: got {len(grads)} gradients for "
                             f"{len(self.params)} parameters")
        new_params, new_state = self.update(list(self.params), list(grads), dict(self.state))
        for p, v in zip(self.params, new_params):
            p[...] = v
        for k, v in new_state.items():
            self.state[k][...] = v

    def state_dict(self):
        return dict((k, v.copy()) for k, v in self.state.items())

    def load_state_dict(self, state):
        if set(state) != set(self.state):
            raise KeyError(f"{type(self).__name__}.load_state_dict: expected keys "
                           f"{sorted(self.state)}, got {sorted(state)}")
        for k, v in state.items():
            self.state[k][...] = v


class SGD(Optimizer):
    """p -= lr * d, d = g + weight_decay * p, through momentum
    (buf = momentum * buf + d; d = buf, or d + momentum * buf with nesterov)."""

    def __init__(self, params, lr, momentum=0.0, weight_decay=0.0, nesterov=False):
        super().__init__(params, lr)
        _check_number(self, "momentum", momentum)
        _check_number(self, "weight_decay", weight_decay)
        if nesterov and momentum == 0.0:
            raise ValueError("SGD: nesterov needs momentum > 0")
        self.momentum, self.weight_decay, self.nesterov = momentum, weight_decay, nesterov
        if momentum:
            self._per_param("momentum")

    def update(self, params, grads, state):
        lr, mom, wd = self.lr, self.momentum, self.weight_decay
        new_state = dict(step=state["step"] + np.int64(1))
        new_params = []
        for i, (p, g) in enumerate(zip(params, grads)):
            if self.weight_decay:
                g = g + wd * p
            if self.momentum:
                buf = mom * state[f"momentum.{i}"] + g
                new_state[f"momentum.{i}"] = buf
                g = g + mom * buf if self.nesterov else buf
            new_params.append(p - lr * g)
        return new_params, dict((k, new_state[k]) for k in state)


class Adam(Optimizer):
    """Adam (Kingma & Ba) with PyTorch's update; weight_decay adds
    weight_decay * p to the gradient (L2). The bias corrections 1 - beta^t
    are state arrays advanced as c <- c * beta + (1 - beta), which keeps
    them accurate in float32 (1 - beta2^t computed from beta2^t would lose
    most digits for small t)."""

    decoupled = False

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0):
        super().__init__(params, lr)
        if not (isinstance(betas, (tuple, list)) and len(betas) == 2):
            raise ValueError(f"{type(self).__name__}: betas must be a pair (beta1, beta2), "
                             f"got {betas!r}")
        for k, b in enumerate(betas):
            _check_number(self, f"betas[{k}]", b)
        b1, b2 = betas
        if not (b1 < 1.0 and b2 < 1.0):
            raise ValueError(f"{type(self).__name__}: betas must be in [0, 1), got {betas}")
        _check_number(self, "eps", eps)
        _check_number(self, "weight_decay", weight_decay)
        self.betas, self.eps, self.weight_decay = (float(b1), float(b2)), eps, weight_decay
        self.state["bias_correction1"] = np.zeros((), np.float32)
        self.state["bias_correction2"] = np.zeros((), np.float32)
        self._per_param("exp_avg")
        self._per_param("exp_avg_sq")

    def update(self, params, grads, state):
        # Python floats: weakly typed, so the float32 arrays stay float32.
        b1, b2 = self.betas
        lr, eps, wd = self.lr, self.eps, self.weight_decay
        one = 1.0
        c1 = state["bias_correction1"] * b1 + (one - b1)
        c2 = state["bias_correction2"] * b2 + (one - b2)
        new_state = dict(step=state["step"] + np.int64(1), bias_correction1=c1,
                                bias_correction2=c2)
        new_params = []
        for i, (p, g) in enumerate(zip(params, grads)):
            if self.weight_decay:
                if self.decoupled:
                    p = p * (one - lr * wd)
                else:
                    g = g + wd * p
            m = b1 * state[f"exp_avg.{i}"] + (one - b1) * g
            v = b2 * state[f"exp_avg_sq.{i}"] + (one - b2) * (g * g)
            new_state[f"exp_avg.{i}"] = m
            new_state[f"exp_avg_sq.{i}"] = v
            denom = _ops.sqrt(v / c2) + eps
            new_params.append(p - lr * (m / c1) / denom)
        # Keep the state's order stable (the compiled step's argument order).
        return new_params, dict((k, new_state[k]) for k in state)


class AdamW(Adam):
    """Adam with decoupled weight decay (Loshchilov & Hutter):
    p <- p * (1 - lr * weight_decay) before the Adam update."""

    decoupled = True

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2):
        super().__init__(params, lr, betas, eps, weight_decay)
