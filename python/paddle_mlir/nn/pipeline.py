"""Pipeline-parallel training: `TrainStep(model, loss, opt, mesh=pm.Mesh(S,
"pipe"), parallel="pipeline", stages=..., microbatches=M)`.

The model is an `nn.Sequential` cut into S stages, one per device of the
(1-D) mesh: stage s holds layers[b_s:b_{s+1}], where `stages` gives the
boundaries (the index of each stage's first layer after the first, e.g.
(2,) for two stages; by default the layers are split evenly). The batch is
cut along its first dim into M microbatches.

Each stage compiles one module with

    forward(params, frozen, x) -> y                      (not the last stage)
    backward(params, frozen, x, dy) -> (dx, grads...)    (stage 0: no dx)
    last(params, frozen, x, *targets) -> (loss, out, dx, grads...)
    update(params, opt state, grads) -> (new params, new opt state)

`backward` recomputes the stage's forward from its stashed input
(activation checkpointing at the stage boundary), so a stage keeps only
the inputs of the microbatches it has in flight: S - s of them at most.
Each stage runs on its own thread, its device in the pipe axis, with the
1F1B schedule (`one_f_one_b`); activations go forward and their gradients
back through the runtime's communicator (paddle_comm_send/recv of an
in-process LocalGroup), so a stage that fails makes its neighbours fail
naming it instead of waiting.

The loss of the step is the mean of the microbatches' losses (their sum
when the loss has reduction="sum"), which equals the full batch's for the
usual mean losses; the gradients are accumulated over the microbatches
and each stage updates its own parameters and their optimizer state.
"""

import threading
import time

import numpy as np

from . import _frontend
from .module import Sequential, functional_call


def one_f_one_b(stages, microbatches):
    """The 1F1B schedule (PipeDream-Flush, Megatron-LM): for each stage a
    list of ("F", mb) and ("B", mb). Stage s runs min(S - s - 1, M) forwards
    to fill the pipeline, then alternates one forward and one backward,
    then drains the remaining backwards."""
    schedule = []
    for s in range(stages):
        warmup = min(stages - s - 1, microbatches)
        actions = [("F", mb) for mb in range(warmup)]
        forward, backward = warmup, 0
        while backward < microbatches:
            if forward < microbatches:
                actions.append(("F", forward))
                forward += 1
            actions.append(("B", backward))
            backward += 1
        schedule.append(actions)
    return schedule


def _boundaries(layers, stages, n_stages):
    n = len(layers)
    if stages is None:
        if n < n_stages:
            raise ValueError(f"TrainStep: parallel='pipeline' over {n_stages} stages needs at "
                             f"least {n_stages} layers in the Sequential, it has {n}")
        cuts = [round(n * s / n_stages) for s in range(1, n_stages)]
    else:
        cuts = list(stages)
        if len(cuts) != n_stages - 1:
            raise ValueError(f"TrainStep: stages must give {n_stages - 1} boundaries (the first "
                             f"layer of each stage after the first) for the {n_stages} devices "
                             f"of the pipe axis, got {tuple(cuts)}")
    bounds = [0, *cuts, n]
    for a, b in zip(bounds, bounds[1:]):
        if not (isinstance(b, int) and a < b):
            raise ValueError(f"TrainStep: stage boundaries must be increasing layer indices in "
                             f"1..{n - 1}, got {tuple(cuts)}")
    return bounds


def _stage_error(s, e):
    """`e` with the failing stage named, of the same type where it takes a
    message."""
    try:
        return type(e)(f"pipeline stage {s}: {e}")
    except TypeError:
        return RuntimeError(f"pipeline stage {s}: {e}")


class PipelineStep:
    """TrainStep's parallel='pipeline' (see the module docstring)."""

    timeout = 300.0  # seconds any stage waits for a neighbour

    def __init__(self, step, mesh, stages, microbatches):
        model, opt = step.model, step.optimizer
        names = mesh.axis_names
        if len(mesh.shape) == 1:
            pipe, data = 0, None
        elif len(mesh.shape) == 2 and sorted(names) == ["data", "pipe"]:
            pipe, data = names.index("pipe"), names.index("data")
        else:
            raise ValueError(f"TrainStep: parallel='pipeline' runs one stage per device of a "
                             f"1-D mesh, or of the 'pipe' axis of a ('pipe', 'data') mesh, "
                             f"got {mesh!r}")
        if not isinstance(model, Sequential):
            raise TypeError(f"TrainStep: parallel='pipeline' cuts an nn.Sequential into "
                            f"stages, got a {type(model).__name__}")
        if model.named_buffers():
            raise ValueError("TrainStep: parallel='pipeline' does not support buffers "
                             f"({', '.join(model.named_buffers())}): their statistics over "
                             "microbatches would differ from the full batch's")
        if not (isinstance(microbatches, int) and microbatches >= 1):
            raise ValueError(f"TrainStep: microbatches must be a positive int, got "
                             f"{microbatches!r}")
        self.step, self.mesh, self.microbatches = step, mesh, microbatches
        self.n = mesh.shape[pipe]
        # Pipeline x data: each stage's computations run data-parallel on
        # the devices of its 'data' axis.
        self.data_mesh = None
        if data is not None and mesh.shape[data] > 1:
            self.data_mesh = type(mesh)(mesh.shape[data], "data")
        names = list(model._modules)
        bounds = _boundaries(names, stages, self.n)
        trained = {k: i for i, k in enumerate(step._trained)}
        self.stages, owner = [], {}
        for s in range(self.n):
            layers = [(name, model._modules[name]) for name in names[bounds[s]:bounds[s + 1]]]
            for name, layer in layers:
                for k, p in layer.named_parameters().items():
                    if owner.setdefault(id(p), (s, f"{name}.{k}"))[0] != s:
                        raise ValueError(
                            f"TrainStep: parameter '{name}.{k}' of pipeline stage {s} is "
                            f"also '{owner[id(p)][1]}' of stage {owner[id(p)][0]} (tied "
                            "weights); a parameter must live in one stage")
            prefixes = tuple(name + "." for name, _ in layers)
            mine = [k for k in model.named_parameters() if k.startswith(prefixes)]
            self.stages.append(dict(
                layers=layers,
                trained=[k for k in mine if k in trained],
                indices=[trained[k] for k in mine if k in trained],
                frozen=[k for k in mine if k not in trained]))
        self.reduction = getattr(step.loss_fn, "reduction", "mean")
        self._cache = {}
        # The most microbatch inputs each stage held at once in the latest
        # step (1F1B: min(S - s, M)).
        self.peak_in_flight = [0] * self.n

    # --- compile -------------------------------------------------------------

    def _forward(self, stage, params, x):
        """The stage's layers on x, each bound to its traced parameters."""
        for name, layer in stage["layers"]:
            bound = {k[len(name) + 1:]: v for k, v in params.items()
                     if k.startswith(name + ".")}
            x, _ = functional_call(layer, bound, {}, (x,))
        return x

    def _state_keys(self, stage):
        """The optimizer state of the stage's parameters, renumbered as the
        update sees them (its parameter j is the optimizer's indices[j]),
        and the state shared by all parameters (step count, bias
        corrections), which every stage advances alike."""
        keys = []
        for k in self.step.optimizer.state:
            kind, _, index = k.rpartition(".")
            if kind and index.isdigit():
                if int(index) in stage["indices"]:
                    keys.append((k, f"{kind}.{stage['indices'].index(int(index))}"))
            else:
                keys.append((k, k))
        return keys

    def _build_stage(self, s, x_example, targets, compile=True):
        """The stage's compiled module and the (shape, dtype) it sends on
        (None for the last stage); without `compile`, only the latter."""
        import paddle_mlir as pm

        stage, step, last = self.stages[s], self.step, s == self.n - 1
        opt = step.optimizer
        named = step.model.named_parameters()
        trained, frozen = stage["trained"], stage["frozen"]
        p_ex, f_ex = [named[k] for k in trained], [named[k] for k in frozen]
        np_, nf = len(trained), len(frozen)
        # Each microbatch's loss is scaled so that their sum is the step's
        # loss: the mean over the batch for a mean loss.
        scale = 1.0 if self.reduction == "sum" else 1.0 / self.microbatches

        def split(flat):
            """(params, frozen, x, rest); x and the rest (targets, dy)
            split over the data axis when there is one."""
            fr = dict(zip(frozen, flat[np_:np_ + nf]))
            x, rest = flat[np_ + nf], flat[np_ + nf + 1:]
            return (list(flat[:np_]), fr, self._batch(x, "stage input"),
                    tuple(self._batch(r, "stage input") for r in rest))

        def run(p_list, fr, x):
            return self._forward(stage, {**fr, **dict(zip(trained, p_list))}, x)

        functions, y = [], None
        if last:
            def last_fn(*flat):
                ps, fr, x, tgts = split(flat)

                def loss_of(p_list, x_in):
                    out = run(p_list, fr, x_in)
                    return step.loss_fn(out, *tgts) * scale, out

                # Stage 0's input is the batch: no gradient (it may be
                # integer tokens).
                (loss, out), grads = pm.value_and_grad(
                    loss_of, argnums=(0, 1) if s else 0, has_aux=True)(ps, x)
                out = self._batch(out, "stage output", True)
                if s:
                    return (loss, out, self._batch(grads[1], "input gradient", True),
                            *grads[0])
                return (loss, out, *grads)

            functions.append(("last", last_fn, [*p_ex, *f_ex, x_example, *targets]))
        else:
            def forward(*flat):
                ps, fr, x, _ = split(flat)
                return (self._batch(run(ps, fr, x), "stage output", True),)

            y = self._result_of(forward, [*p_ex, *f_ex, x_example])
            if y[1] != np.float32:
                raise TypeError(f"TrainStep: pipeline stage {s} passes {y[1]} to stage "
                                f"{s + 1}; the values between stages must be float32 (their "
                                "gradients come back)")
            if not compile:
                return dict(y=y)

            def backward(*flat):
                ps, fr, x, (dy,) = split(flat)
                if s == 0:
                    _, vjp_fn = pm.vjp(lambda p_list: run(p_list, fr, x), ps)
                    return tuple(vjp_fn(dy)[0])
                _, vjp_fn = pm.vjp(lambda p_list, x_in: run(p_list, fr, x_in), ps, x)
                grads, dx = vjp_fn(dy)
                return (self._batch(dx, "input gradient", True), *grads)

            functions.append(("forward", forward, [*p_ex, *f_ex, x_example]))
            functions.append(("backward", backward,
                              [*p_ex, *f_ex, x_example, np.zeros(*y)]))

        keys = self._state_keys(stage)

        def update(*flat):
            params, grads = list(flat[:np_]), list(flat[np_ + len(keys):])
            state = {local: v for (_, local), v in zip(keys, flat[np_:np_ + len(keys)])}
            new_params, new_state = opt.update(params, grads, state)
            return (*new_params, *[new_state[local] for _, local in keys])

        update_fn = ("update", update, [*p_ex, *[opt.state[k] for k, _ in keys], *p_ex])
        if self.data_mesh is None:
            module = _frontend.trace_functions(functions + [update_fn])
            exe = update_exe = _frontend.compile(module)
        else:
            # The update runs once per stage, not per data device.
            module = _frontend.trace_functions(functions)
            exe = _frontend.compile(module)
            update_exe = _frontend.compile(_frontend.trace_functions([update_fn]))
        return dict(exe=exe, update=update_exe, module=module, keys=keys, y=y)

    def _batch(self, t, what, for_users=False):
        """A batch-like value of a stage function split along its first dim
        over the data axis (pipeline x data); as is without one."""
        if self.data_mesh is None:
            return t
        from .. import _sharding as sharding
        return sharding.annotate(t, self.data_mesh, sharding.P("data"), what, for_users)

    @staticmethod
    def _result_of(fn, example):
        """(shape, dtype) of fn's one result, traced (nothing compiled)."""
        found = []

        def probe(*flat):
            (y,) = fn(*flat)
            found.append((tuple(y.shape), np.dtype(y.dtype)))
            return (y,)

        _frontend.trace(probe, example, "probe")
        return found[0]

    def _build(self, batch, mine):
        """Every stage's (shape, dtype) of what it sends on; the stages in
        `mine` compiled too."""
        m = self.microbatches
        for i, b in enumerate(batch):
            if b.ndim == 0 or b.shape[0] % m:
                raise ValueError(f"TrainStep: batch item {i} of shape {b.shape} cannot be cut "
                                 f"into {m} microbatches along its first dim")
        micro = [b[:b.shape[0] // m] for b in batch]
        built, x = [], micro[0]
        for s in range(self.n):
            if s not in mine and s == self.n - 1:
                built.append(dict(y=None))
                break
            stage = self._build_stage(s, x, micro[1:] if s == self.n - 1 else [],
                                      compile=s in mine)
            built.append(stage)
            if stage["y"] is not None:
                x = np.zeros(*stage["y"])
        return built

    # --- run -----------------------------------------------------------------

    def __call__(self, batch):
        """One step: (loss, outputs). Under mpirun this process runs stage
        `rank` only and updates only its parameters; every process gets
        the loss, the last stage the outputs (the others None)."""
        core = _frontend.core()
        if core.mpi_launched():
            if self.data_mesh is not None:
                raise NotImplementedError("TrainStep: pipeline x data runs in one process; "
                                          "under mpirun use a 1-D mesh (pipeline only)")
            comm = core.mpi_world(self.timeout)
            if comm.size != self.n:
                raise ValueError(f"TrainStep: the pipeline has {self.n} stages (the mesh's "
                                 f"devices), but mpirun started {comm.size} processes")
            mine = [comm.rank]
        else:
            comm, mine = None, list(range(self.n))
        step = self.step
        key = step._key(batch)
        if key not in self._cache:
            self._cache[key] = self._build(batch, mine)
        built = self._cache[key]
        micro = [np.split(b, self.microbatches) for b in batch]
        schedule = one_f_one_b(self.n, self.microbatches)
        if comm is not None:
            s = comm.rank
            try:
                results = {s: self._run_stage(s, built, comm, schedule[s], micro)}
            except BaseException as e:  # noqa: B902 (re-raised)
                comm.abort(f"pipeline stage {s} failed: {e}")
                raise _stage_error(s, e) from e
            loss = np.zeros((), np.float32) if s != self.n - 1 else results[s][2][0]
            comm.broadcast(loss, root=self.n - 1)
            outputs = results[s][2][1] if s == self.n - 1 else None
        else:
            results = self._run_threads(built, schedule, micro)
            loss, outputs = results[self.n - 1][2]
        named, opt = step.model.named_parameters(), step.optimizer
        for s, (new_params, new_state, _) in results.items():
            for k, v in zip(self.stages[s]["trained"], new_params):
                named[k][...] = v
            for (k, _), v in zip(built[s]["keys"], new_state):
                opt.state[k][...] = v  # shared keys: every stage's are equal
        return loss, outputs

    def _run_threads(self, built, schedule, micro):
        """Every stage on a thread of its own, linked by an in-process
        group; {stage: its results} once all ended."""
        group = _frontend.core().LocalGroup(self.n, self.timeout)
        results, failures = {}, []

        def run_stage(s):
            comm = group.comm(s)
            try:
                results[s] = self._run_stage(s, built, comm, schedule[s], micro)
            except BaseException as e:  # noqa: B902 (re-raised by the caller)
                failures.append((time.monotonic(), s, e))
                comm.abort(f"pipeline stage {s} failed: {e}")

        threads = [threading.Thread(target=run_stage, args=(s,), daemon=True)
                   for s in range(self.n)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        if failures:
            # The first failure is the cause; the others are its aborts.
            _, s, e = min(failures, key=lambda f: f[0])
            raise _stage_error(s, e) from e
        return results

    def _run_stage(self, s, built, comm, actions, micro):
        """Stage s's actions in order; returns its new parameters and
        optimizer state, and on the last stage the loss and the outputs."""
        stage, exe, last = self.stages[s], built[s]["exe"], s == self.n - 1
        named = self.step.model.named_parameters()
        params = [named[k] for k in stage["trained"]]
        frozen = [named[k] for k in stage["frozen"]]
        stash, sums, losses, outs = {}, None, [], []
        self.peak_in_flight[s] = 1 if last else 0

        def accumulate(grads):
            nonlocal sums
            sums = list(grads) if sums is None else [a + g for a, g in zip(sums, grads)]

        for kind, mb in actions:
            if kind == "F":
                if s == 0:
                    x = micro[0][mb]
                else:
                    x = np.empty(*built[s - 1]["y"])
                    comm.recv(x, s - 1, tag=2 * mb)
                if last:
                    got = exe.run("last", [*params, *frozen, x, *(t[mb] for t in micro[1:])])
                    losses.append(got[0])
                    outs.append(got[1])
                    stash[mb] = got[2] if s else None  # dx, sent back at "B"
                    accumulate(got[3 if s else 2:])
                else:
                    (y,) = exe.run("forward", [*params, *frozen, x])
                    comm.send(np.ascontiguousarray(y), s + 1, tag=2 * mb)
                    stash[mb] = x
                    self.peak_in_flight[s] = max(self.peak_in_flight[s], len(stash))
            elif last:
                dx = stash.pop(mb)
                if s:
                    comm.send(np.ascontiguousarray(dx), s - 1, tag=2 * mb + 1)
            else:
                dy = np.empty(*built[s]["y"])
                comm.recv(dy, s + 1, tag=2 * mb + 1)
                got = exe.run("backward", [*params, *frozen, stash.pop(mb), dy])
                accumulate(got[1:] if s else got)
                if s:
                    comm.send(np.ascontiguousarray(got[0]), s - 1, tag=2 * mb + 1)
        state = [self.step.optimizer.state[k] for k, _ in built[s]["keys"]]
        updated = built[s]["update"].run("update", [*params, *state, *(sums or [])])
        loss_out = None
        if last:
            # Each microbatch's loss was scaled to make the sum the step's.
            loss_out = (np.array(np.sum(losses, dtype=np.float32)), np.concatenate(outs))
        return updated[:len(params)], updated[len(params):], loss_out
