"""TrainStep and InferenceFunction: a Module's forward, backward and update
compiled into one function whose parameters are arguments, not constants.

TrainStep traces

    step(params..., opt_state..., buffers..., frozen..., batch...)
        -> (loss, outputs, new_params..., new_opt_state..., new_buffers...)

marks argument i of the first three groups with
`paddle.aliasing_output = 2 + i` (docs/python-core-api.md: donation), and
compiles it once per (batch shapes, train/eval modes, hyperparameters). A
call passes the module's and the optimizer's own numpy arrays; the compiled
code writes the new values into those same buffers and returns only the loss
and the outputs. Nothing is copied between steps.
"""

import warnings
from collections import namedtuple

import numpy as np

from . import _frontend
from .module import functional_call

StepOutput = namedtuple("StepOutput", ["loss", "outputs"])


def _spec(arrays):
    return tuple((a.shape, a.dtype.str) for a in arrays)


def _as_batch_array(x, i):
    a = np.asarray(x)
    if a.dtype == np.float64:
        a = a.astype(np.float32)
    if a.dtype not in (np.float32, np.int64, np.int32, np.bool_):
        raise TypeError(f"TrainStep: batch item {i} has dtype {a.dtype} (expected float32, "
                        "int32, int64 or bool)")
    return np.ascontiguousarray(a)


class TrainStep:
    """One compiled training step: `TrainStep(model, loss_fn, optimizer)`.

    `step(x, *targets)` runs `loss = loss_fn(model(x), *targets)`, its
    gradient with respect to the optimizer's parameters, and the optimizer
    update, as ONE compiled function; returns StepOutput(loss, outputs) as
    numpy arrays. Parameters, optimizer state and buffers (BatchNorm running
    stats, Dropout counters) are updated in place in the model's and the
    optimizer's arrays (donated buffers). Model parameters the optimizer was
    not given stay constant (inputs, not differentiated).

    On a `mesh` (docs/distributed.md), `parallel` picks the split: "data"
    (the batch over the data axis), "tensor" (Megatron), a dict of
    parameter specs, or "pipeline": an nn.Sequential cut into one stage per
    device of the pipe axis (`stages`: the first layer of each stage after
    the first) with the batch cut into `microbatches` and run 1F1B
    (nn/pipeline.py), or "auto": the cost model chooses every split of the
    step (paddle-auto-shard). `zero=1` splits the optimizer state over the data
    axis. Under mpirun each process is one device.
    """

    def __init__(self, model, loss_fn, optimizer, name="train_step", mesh=None,
                 parallel="data", zero=0, stages=None, microbatches=1):
        from ..optim import Optimizer
        from .module import Module
        for what, value, kind, shown in (("model", model, Module, "pm.nn.Module"),
                                         ("optimizer", optimizer, Optimizer, "pm.optim.Optimizer")):
            if not isinstance(value, kind):
                raise TypeError(f"TrainStep: {what} must be a {shown}, got {type(value).__name__}")
        if not callable(loss_fn):
            raise TypeError(f"TrainStep: loss_fn must be callable, got {type(loss_fn).__name__}")
        self.model, self.loss_fn, self.optimizer, self.name = model, loss_fn, optimizer, name
        named = model.named_parameters()
        by_id = {id(a): k for k, a in named.items()}
        self._trained = []
        for i, p in enumerate(optimizer.params):
            if id(p) not in by_id:
                raise ValueError(f"TrainStep: optimizer parameter {i} (shape {p.shape}) is not a "
                                 "parameter of the model")
            self._trained.append(by_id[id(p)])
        trained = set(self._trained)
        self._frozen = [k for k in named if k not in trained]
        self._cache = {}
        self.mesh, self.zero = mesh, zero
        self._pipeline = None
        if parallel == "pipeline" and mesh is not None:
            if zero:
                raise ValueError("TrainStep: zero=1 splits the optimizer state over a data "
                                 "axis; parallel='pipeline' has none (each stage holds its "
                                 "own parameters' state)")
            from .pipeline import PipelineStep
            self._pipeline = PipelineStep(self, mesh, stages, microbatches)
        elif stages is not None or microbatches != 1:
            raise ValueError("TrainStep: stages and microbatches are for "
                             "parallel='pipeline' on a mesh")
        self._specs = (_parallel_specs(model, mesh, parallel, zero)
                       if mesh is not None and self._pipeline is None else None)
        self.donated = None  # whether the latest call updated the state in place
        self.last_module = None  # the paddle-level module of the latest compile

    def _key(self, batch):
        modes = tuple(m.training for m in self.model.modules())
        return (_spec(batch), modes, self.optimizer.hyperparameters())

    def _build(self, batch):
        model, opt = self.model, self.optimizer
        buf_names = list(model.named_buffers())
        state_keys = list(opt.state)
        n_p, n_s, n_b, n_f = len(self._trained), len(state_keys), len(buf_names), len(self._frozen)
        trained_names, frozen_names, loss_fn = self._trained, self._frozen, self.loss_fn

        specs = self._argument_specs(batch, state_keys, buf_names)

        def step(*flat):
            if specs is not None:
                flat = [_sharding().annotate_tree(t, self.mesh, spec, what)
                        for t, (spec, what) in zip(flat, specs)]
            params = list(flat[:n_p])
            state = dict(zip(state_keys, flat[n_p:n_p + n_s]))
            buffers = dict(zip(buf_names, flat[n_p + n_s:n_p + n_s + n_b]))
            frozen = dict(zip(frozen_names, flat[n_p + n_s + n_b:n_p + n_s + n_b + n_f]))
            inputs = flat[n_p + n_s + n_b + n_f:]

            def loss_of(param_list):
                bound = dict(frozen)
                bound.update(zip(trained_names, param_list))
                out, new_buffers = functional_call(model, bound, buffers, (inputs[0],))
                if isinstance(out, (tuple, list, dict)):
                    raise TypeError(f"TrainStep: the model must return one array (the input of "
                                    f"the loss), got a {type(out).__name__}")
                return loss_fn(out, *inputs[1:]), (out, list(new_buffers.values()))

            (loss, (out, new_buffers)), grads = _frontend.value_and_grad(loss_of)(params)
            new_params, new_state = opt.update(params, list(grads), state)
            results = [*new_params, *[new_state[k] for k in state_keys], *new_buffers]
            if specs is not None:
                # The new state leaves split as it came (ZeRO-1: the update
                # runs on each device's block, then the parameters gather).
                results = [_sharding().annotate_tree(r, self.mesh, spec, "new " + what,
                                                     for_users=True)
                           for r, (spec, what) in zip(results, specs)]
            return (loss, out, *results)

        example = self._arguments(batch)
        self._check_state(example)
        module = _frontend.trace(step, example, self.name)
        for i in range(n_p + n_s + n_b):
            module.set_arg_attr(self.name, i, "paddle.aliasing_output", f"{2 + i} : i64")
        if self._specs is not None and self._specs[0] == "auto":
            # The cost model chooses every split (paddle-auto-shard).
            module.add_grid(_sharding().MESH_SYMBOL, list(self.mesh.shape))
            module.set_function_attr(self.name, "paddle.auto_shard", "unit")
        self.last_module = module
        exe = _frontend.compile(module)
        expected = {i: 2 + i for i in range(n_p + n_s + n_b)}
        donated = exe.signature(self.name).get("aliases", {}) == expected
        if not donated and self.mesh is None:
            # A pipeline without buffer donation returns every result; the
            # step still works, copying the new values into the arrays. (On
            # a mesh each device updates its block, which the runtime puts
            # together: the new values are always copied back.)
            warnings.warn("TrainStep: the compiled step does not alias its state arguments "
                          "(no buffer donation in this build); new values are copied back",
                          RuntimeWarning, stacklevel=3)
        return exe, donated, _spec(example[:-len(batch)])

    def _argument_specs(self, batch, state_keys, buf_names):
        """How each argument of the step is split over the mesh (None
        without one): parameters and their optimizer state as `parallel`
        says (ZeRO-1: the state split over the data axis), buffers and the
        bias corrections whole, the batch split along its first dim."""
        if self._specs is None:
            return None
        P = _sharding().P
        param_specs, data_axis, zero_spec = self._specs
        if param_specs == "auto":
            return None
        by_index = {i: param_specs.get(k) for i, k in enumerate(self._trained)}
        out = [(by_index[i], f"parameter '{k}'") for i, k in enumerate(self._trained)]
        for k in state_keys:
            kind, _, index = k.rpartition(".")
            spec = None
            if kind and index.isdigit() and int(index) in by_index:
                spec = by_index[int(index)]
                if self.zero:
                    spec = zero_spec(self.optimizer.state[k], spec)
            out.append((spec, f"optimizer state '{k}'"))
        out += [(None, f"buffer '{k}'") for k in buf_names]
        out += [(param_specs.get(k), f"frozen parameter '{k}'") for k in self._frozen]
        for i, b in enumerate(batch):
            out.append((P(data_axis) if data_axis is not None and b.ndim else None,
                        f"batch item {i}"))
        return out

    def _state_names(self):
        return ([f"parameter '{k}'" for k in self._trained]
                + [f"optimizer state '{k}'" for k in self.optimizer.state]
                + [f"buffer '{k}'" for k in self.model.named_buffers()]
                + [f"frozen parameter '{k}'" for k in self._frozen])

    def _check_state(self, args, specs=None):
        """The step writes the new parameters, optimizer state and buffers
        into the arrays themselves: each must be one it can update in place,
        of the shape and dtype the step was compiled for."""
        names = self._state_names()
        n_donated = len(self._trained) + len(self.optimizer.state) + len(
            self.model.named_buffers())
        for i, (name, a) in enumerate(zip(names, args)):
            problem = _frontend.donation_problem(a) if i < n_donated else None
            if problem:
                raise ValueError(f"TrainStep: {name} is {problem}; the step updates it in "
                                 "place. Write new values into the array (a[...] = v) rather "
                                 "than replacing it")
            if specs is not None and (a.shape, a.dtype.str) != specs[i]:
                raise ValueError(f"TrainStep: {name} is now {a.dtype} {a.shape}, the step was "
                                 f"compiled for {np.dtype(specs[i][1])} {specs[i][0]}; write "
                                 "new values into the array (a[...] = v) rather than "
                                 "replacing it")

    def _arguments(self, batch):
        named = self.model.named_parameters()
        return ([named[k] for k in self._trained] + list(self.optimizer.state.values())
                + list(self.model.named_buffers().values())
                + [named[k] for k in self._frozen] + list(batch))

    def __call__(self, x, *targets):
        batch = [_as_batch_array(a, i) for i, a in enumerate((x,) + targets)]
        if self._pipeline is not None:
            self._check_state(self._arguments(batch))
            self.donated = False  # each stage's new values are copied back
            return StepOutput(*self._pipeline(batch))
        key = self._key(batch)
        if key not in self._cache:
            self._cache[key] = self._build(batch)
        exe, donated, specs = self._cache[key]
        args = self._arguments(batch)
        self._check_state(args, specs)
        results = exe.run(self.name, args)
        if not donated:
            for dst, value in zip(args, results[2:]):
                dst[...] = value
        self.donated = donated
        return StepOutput(results[0], results[1])


def _sharding():
    from .. import _sharding as sharding
    return sharding


def _parallel_specs(model, mesh, parallel, zero):
    """(spec per parameter name, the data axis or None, the ZeRO-1 spec of
    an optimizer state array) for TrainStep's `parallel`:

    - "data": the batch split over the mesh's "data" axis (or its only
      axis), every parameter whole on every device;
    - "tensor": Megatron's split over the "model" axis (or the last one):
      the Linear layers in order alternate column-split (weight rows, bias)
      and row-split (weight columns); the batch split over "data" if the
      mesh has that axis;
    - a dict {parameter name: pm.P}: those splits, the batch as for
      "tensor".
    """
    sharding = _sharding()
    P, names = sharding.P, mesh.axis_names
    if zero not in (0, 1):
        raise ValueError(f"TrainStep: zero must be 0 or 1 (ZeRO-1: optimizer state split "
                         f"over the data axis), got {zero!r}")
    if parallel == "auto":
        if zero:
            raise ValueError("TrainStep: zero=1 is a hand plan; parallel='auto' chooses how "
                             "the optimizer state is split itself")
        return "auto", None, None
    if parallel == "data":
        data = "data" if "data" in names else (names[0] if len(names) == 1 else None)
        if data is None:
            raise ValueError(f"TrainStep: parallel='data' needs a mesh axis named 'data' "
                             f"(or a 1-D mesh), got {mesh!r}")
        specs = {}
    elif parallel == "tensor":
        from .layers import Linear
        model_axis = "model" if "model" in names else names[-1]
        data = "data" if "data" in names and model_axis != "data" else None
        specs, column = {}, True
        for prefix, m in model.named_modules():
            if not isinstance(m, Linear):
                continue
            key = prefix + "." if prefix else ""
            if column:
                specs[key + "weight"] = P(model_axis)
                if m.bias is not None:
                    specs[key + "bias"] = P(model_axis)
            else:
                specs[key + "weight"] = P(None, model_axis)
            column = not column
    elif isinstance(parallel, dict):
        specs = dict(parallel)
        params = model.named_parameters()
        for k, spec in specs.items():
            if k not in params:
                raise ValueError(f"TrainStep: parallel names parameter {k!r}, which the model "
                                 f"does not have (it has: {', '.join(params)})")
            if spec is not None and not isinstance(spec, P):
                raise TypeError(f"TrainStep: the split of {k!r} must be a pm.P, got {spec!r}")
        data = "data" if "data" in names else None
    else:
        raise ValueError(f"TrainStep: parallel must be 'data', 'tensor', 'pipeline', 'auto' "
                         f"or a dict of parameter specs, got {parallel!r}")
    if zero and data is None:
        raise ValueError("TrainStep: zero=1 splits the optimizer state over the data axis, "
                         f"which {mesh!r} does not have")

    def zero_spec(array, spec):
        # Split the first dim the parameter's own spec leaves whole over the
        # data axis, where it divides evenly; else keep the parameter's.
        dims = list(spec or ())
        parts = mesh.shape[mesh.axis(data)]
        for d, size in enumerate(array.shape):
            if (d >= len(dims) or dims[d] is None) and size % parts == 0:
                dims += [None] * (d + 1 - len(dims))
                dims[d] = data
                return P(*dims)
        return spec

    return specs, data, zero_spec


class InferenceFunction:
    """The model's forward in eval mode, compiled with the parameters and
    buffers as arguments (so training them needs no recompile):
    `predict = InferenceFunction(model); y = predict(x)`."""

    def __init__(self, model, name="forward"):
        self.model, self.name, self._cache = model, name, {}

    def __call__(self, x):
        x = _as_batch_array(x, 0)
        model = self.model
        params, buffers = model.named_parameters(), model.named_buffers()
        args = list(params.values()) + list(buffers.values()) + [x]
        key = _spec(args)
        if key not in self._cache:
            pn, bn = list(params), list(buffers)

            def forward(*flat):
                out, _ = functional_call(model, dict(zip(pn, flat[:len(pn)])),
                                         dict(zip(bn, flat[len(pn):len(pn) + len(bn)])),
                                         (flat[-1],))
                return (out,)

            training = [m.training for m in model.modules()]
            model.eval()
            try:
                module = _frontend.trace(forward, args, self.name)
            finally:
                for m, t in zip(model.modules(), training):
                    object.__setattr__(m, "training", t)
            self._cache[key] = _frontend.compile(module)
        return self._cache[key].run(self.name, args)[0]


def export(model, example_input, path=None, name="forward"):
    """The eval-mode forward as a self-contained paddle module: one argument
    (the input batch, shaped like `example_input`), the parameters baked in
    as constants. Saved to `path` when given (`.mlirbc`: MLIR bytecode, the
    input of paddle-compile and paddle-run). Returns the module."""
    x = _as_batch_array(example_input, 0)
    training = [m.training for m in model.modules()]
    model.eval()
    try:
        # Parameters are the module's numpy arrays: the trace turns them
        # into constants.
        module = _frontend.trace(lambda inp: (model(inp),), [x], name)
    finally:
        for m, t in zip(model.modules(), training):
            object.__setattr__(m, "training", t)
    if path is not None:
        module.save(str(path))
    return module
