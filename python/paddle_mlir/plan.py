"""Training plans for a cluster: tensor, data and pipeline parallelism chosen
by the cost model (`paddle-plan MODEL --cluster C --global-batch B`).

The search is Alpa's, in two levels:

- Intra-op: each distinct layer of the model (an embedding, a transformer
  block, a head) is traced once as its training step (forward and
  backward of one microbatch, float16, no weights needed) and planned by
  paddle-auto-shard on a mesh of `t` devices inside a node: an ILP over
  every op's split, priced by the cluster's device and NVLink. Identical
  layers are solved once.
- Inter-op: for every tensor degree t, microbatch size and pipeline depth
  p (data degree d = N / (t p)), a dynamic program cuts the layers into p
  contiguous stages with the least bottleneck stage time whose memory
  (weights, gradients and Adam state, plus the activations of the
  microbatches in flight under 1F1B) fits a device.

The step time of a plan is Alpa's pipeline formula, sum(stage) + (m - 1) x
max(stage) over m microbatches, plus the data-parallel all-reduce of the
gradients and the optimizer update. The expert plan (Megatron-LM's recipe:
tensor parallel 8 inside a node with Megatron's column/row splits,
microbatch 1, the fewest pipeline stages that fit, even stages, data
parallel for the rest) is priced by the same functions, so the two compare
like for like.
"""

import argparse
import json
import math
import sys
import time

import numpy as np

F16 = np.float16
# Bytes per parameter on the device in mixed-precision Adam: the f16 weight
# and gradient, the f32 master weight and two moments.
STATE_BYTES_PER_PARAM = 2 + 2 + 4 + 4 + 4


def _pm():
    import paddle_mlir as pm
    return pm


# -- the model zoo -------------------------------------------------------------


class Transformer:
    """A stack of identical blocks between an embedding and a head: GPT
    (causal, token embedding, LM head), BERT (bidirectional, MLM head) or a
    ViT (patch embedding, classification head)."""

    def __init__(self, name, layers, hidden, heads, seq, vocab, causal=True,
                 patches=None, classes=None, global_batch=1536):
        self.name, self.layers, self.hidden, self.heads = name, layers, hidden, heads
        self.seq, self.vocab, self.causal = seq, vocab, causal
        self.patches, self.classes = patches, classes
        self.global_batch = global_batch

    def parameters(self):
        h, L = self.hidden, self.layers
        block = 12 * h * h + 13 * h
        if self.patches:
            ends = self.patches * h + self.seq * h + h * self.classes + 2 * h
        else:
            ends = 2 * self.vocab * h + self.seq * h + 2 * h
        return L * block + ends

    def sequence(self):
        """The layers in order, each as (kind, count)."""
        return [("embed", 1), ("block", self.layers), ("head", 1)]

    def boundary_bytes(self, mb):
        """The activation one stage sends the next per microbatch."""
        return mb * self.seq * self.hidden * 2

    # The training step of one layer: its inputs, then a function of the
    # tracers returning the gradients (and the loss, for the head).

    def layer_step(self, kind, mb, megatron_mesh=None):
        pm = _pm()
        F = pm.nn.functional
        h, a, s = self.hidden, self.heads, self.seq
        dh = h // a
        T = pm.ShapeDtype

        def split(x, *spec):
            if megatron_mesh is None:
                return x
            return pm.shard(x, pm.P(*spec), mesh=megatron_mesh)

        if kind == "block":
            shapes = [(h,), (h,), (h, h), (h,), (h, h), (h,), (h, h), (h,),
                      (h, h), (h,), (h,), (h,), (h, 4 * h), (4 * h,), (4 * h, h), (h,)]
            # Megatron: q, k, v and fc1 by columns (heads, hidden units),
            # the output projections by rows.
            specs = [(), (), (None, "model"), ("model",), (None, "model"), ("model",),
                     (None, "model"), ("model",), ("model", None), (), (), (),
                     (None, "model"), ("model",), ("model", None), ()]
            causal = self.causal

            def forward(p, x):
                (g1, b1, wq, bq, wk, bk, wv, bv, wo, bo, g2, b2, w1, c1, w2, c2) = p
                y = F.layer_norm(x, (h,), g1, b1)

                def heads(w, b):
                    t = pm.reshape(y @ w + b, (mb, s, a, dh))
                    return pm.transpose(t, (0, 2, 1, 3))

                q, k, v = heads(wq, bq), heads(wk, bk), heads(wv, bv)
                scores = (q @ pm.swapaxes(k, -1, -2)) * F16(1 / math.sqrt(dh))
                if causal:
                    i = pm.arange(s)
                    future = pm.greater(pm.expand_dims(i, 0), pm.expand_dims(i, 1))
                    scores = pm.where(future, F16(-1e4), scores)
                o = pm.transpose(F.softmax(scores, -1) @ v, (0, 2, 1, 3))
                x = x + pm.reshape(o, (mb, s, h)) @ wo + bo
                z = F.gelu(F.layer_norm(x, (h,), g2, b2) @ w1 + c1)
                return x + z @ w2 + c2

            inputs = [T(sh, F16) for sh in shapes] + [T((mb, s, h), F16)] * 2

            def step(*args):
                p = [split(w, *sp) for w, sp in zip(args[:16], specs)]
                x, dy = args[16], args[17]
                _, (gp, gx) = pm.value_and_grad(
                    lambda p, x: pm.sum(forward(p, x) * dy), argnums=(0, 1))(p, x)
                return [*gp, gx]
            return inputs, step

        if kind == "embed":
            if self.patches:
                # Flattened patches (the class token a zero patch) times the
                # patch projection, plus positions.
                inputs = [T((self.patches, h), F16), T((s, h), F16),
                          T((mb, s, self.patches), F16), T((mb, s, h), F16)]

                def step(w, pos, x, dy):
                    w = split(w, None, "model")
                    _, g = pm.value_and_grad(
                        lambda w, pos: pm.sum((x @ w + pos) * dy), argnums=(0, 1))(w, pos)
                    return list(g)
                return inputs, step
            inputs = [T((self.vocab, h), F16), T((s, h), F16),
                      T((mb, s), np.int32), T((mb, s, h), F16)]

            def step(wte, wpe, ids, dy):
                wte = split(wte, "model", None)  # vocabulary parallel
                _, g = pm.value_and_grad(
                    lambda wte, wpe: pm.sum((pm.take(wte, ids, axis=0) + wpe) * dy),
                    argnums=(0, 1))(wte, wpe)
                return list(g)
            return inputs, step

        if kind == "head":
            outputs = self.classes if self.patches else self.vocab
            inputs = [T((h,), F16), T((h,), F16), T((h, outputs), F16),
                      T((mb, s, h), F16), T((mb, s), np.int32)]

            def step(g, b, w, x, labels):
                w = split(w, None, "model")

                def loss(p, x):
                    y = F.layer_norm(x, (h,), p[0], p[1])
                    if self.patches:
                        y = y[:, 0]
                        return F.cross_entropy(y @ p[2], labels[:, 0])
                    logits = pm.reshape(y @ p[2], (mb * s, outputs))
                    return F.cross_entropy(logits, pm.reshape(labels, (mb * s,)))
                value, (gp, gx) = pm.value_and_grad(loss, argnums=(0, 1))([g, b, w], x)
                return [value, *gp, gx]
            return inputs, step
        raise ValueError(kind)

    def weight_arguments(self, kind):
        """How many leading arguments of the layer step are weights."""
        return {"block": 16, "embed": 2, "head": 3}[kind]


ZOO = {
    # GPT-3 (Brown et al. 2020, Table 2.1), vocabulary padded to 51200 as
    # Megatron-LM does; global batch 1536 (Megatron-LM's GPT-3 175B runs).
    "gpt3-1.3b": Transformer("gpt3-1.3b", 24, 2048, 16, 2048, 51200),
    "gpt3-6.7b": Transformer("gpt3-6.7b", 32, 4096, 32, 2048, 51200),
    "gpt3-13b": Transformer("gpt3-13b", 40, 5120, 40, 2048, 51200),
    "gpt3-175b": Transformer("gpt3-175b", 96, 12288, 96, 2048, 51200),
    # BERT-large, sequence 512, vocabulary padded to a multiple of 128.
    "bert-large": Transformer("bert-large", 24, 1024, 16, 512, 30592, causal=False,
                              global_batch=1024),
    # ViT-H/14 at 224 px: 256 patches of 14x14x3 and the class token.
    "vit-h": Transformer("vit-h", 32, 1280, 16, 257, None, causal=False,
                         patches=588, classes=1000, global_batch=4096),
}


# -- pricing one layer ---------------------------------------------------------


class LayerCost:
    """One layer's training step on one microbatch, planned on t devices."""

    def __init__(self, seconds, communication_s, weight_bytes, peak_bytes,
                 argument_bytes, solve_s, status):
        self.seconds, self.communication_s = seconds, communication_s
        # Per device: the layer's f16 weights, and the activations its step
        # holds (the peak less the arguments it is given).
        self.weight_bytes = weight_bytes
        self.activation_bytes = max(peak_bytes - sum(argument_bytes), 0.0)
        self.solve_s, self.status = solve_s, status


def price_layer(model, kind, t, mb, cluster, megatron=False, time_limit=30):
    """paddle-auto-shard's plan of one layer's step on a mesh of t devices
    (with Megatron's splits as constraints when `megatron`)."""
    pm = _pm()
    from .nn._frontend import trace_functions
    mesh = pm.Mesh(t, "model") if megatron else None
    inputs, step = model.layer_step(kind, mb, megatron_mesh=mesh)
    module = trace_functions([("step", step, inputs)])
    module.run_passes(
        "builtin.module(paddle-auto-shard{"
        f"mesh={t} cluster={cluster} time-limit={time_limit} gather-results=false}})")
    plan = module.function_attr("step", "paddle.plan")
    n = model.weight_arguments(kind)
    return LayerCost(plan["predicted_s"], plan["communication_s"],
                     sum(plan["argument_bytes"][:n]), plan["peak_bytes"],
                     plan["argument_bytes"], plan["solve_s"], plan["status"])


# -- the pipeline --------------------------------------------------------------


def _allreduce(n, nbytes, link):
    """The cost model's ring all-reduce over n devices of `link`."""
    from . import _core
    return _core.estimate_collective("all_reduce", n, nbytes, *link)


def _send(nbytes, link):
    """One message between two devices: alpha + bytes / beta."""
    bandwidth, latency = link
    return latency + nbytes / bandwidth


class Plan:
    def __init__(self, **kw):
        self.__dict__.update(kw)

    def summary(self):
        return {k: v for k, v in self.__dict__.items() if not k.startswith("_")}


def stage_cut(times, weights, activations, p, m, memory):
    """Cuts layers (per-layer time, weight-state bytes and activation bytes
    per microbatch, per device) into p contiguous stages with the least
    bottleneck time such that stage i, holding min(p - i, m) microbatches'
    activations, fits `memory`. Returns (bottleneck, cut points) or None."""
    L = len(times)
    if p > L:
        return None
    t_pre = np.concatenate([[0.0], np.cumsum(times)])
    w_pre = np.concatenate([[0.0], np.cumsum(weights)])
    a_pre = np.concatenate([[0.0], np.cumsum(activations)])
    inf = float("inf")
    # best[s][l]: least bottleneck of the first l layers in s stages.
    best = np.full((p + 1, L + 1), inf)
    arg = np.zeros((p + 1, L + 1), dtype=int)
    best[0][0] = 0.0
    for s in range(1, p + 1):
        inflight = min(p - (s - 1), m)
        for end in range(s, L - (p - s) + 1):
            j = np.arange(s - 1, end)
            mem = (w_pre[end] - w_pre[j]) + inflight * (a_pre[end] - a_pre[j])
            cost = np.maximum(best[s - 1][j], t_pre[end] - t_pre[j])
            cost = np.where(mem <= memory, cost, inf)
            k = int(np.argmin(cost))
            best[s][end], arg[s][end] = cost[k], j[k]
    if not np.isfinite(best[p][L]):
        return None
    cuts, end = [], L
    for s in range(p, 0, -1):
        cuts.append(int(arg[s][end]))
        end = cuts[-1]
    return float(best[p][L]), sorted(cuts)[1:]


def even_cut(layers_kinds, p):
    """Megatron's stages: the blocks split evenly, the embedding on the
    first stage and the head on the last. None unless p divides them."""
    blocks = sum(1 for k in layers_kinds if k == "block")
    if blocks % p:
        return None
    per = blocks // p
    return [1 + per * i for i in range(1, p)]


def evaluate(model, cluster, spec, costs, t, mb, p, cuts, global_batch):
    """Step time and memory of one plan; None when it does not fit."""
    N = spec["nodes"] * spec["devices_per_node"]
    d = N // (t * p)
    m = global_batch // (d * mb)
    from . import _core
    mesh = [p, d, t]
    pipe_link = _core.cluster_link(cluster, mesh, [0])
    data_link = _core.cluster_link(cluster, mesh, [1])
    kinds = [k for k, c in model.sequence() for _ in range(c)]
    bounds = [0] + list(cuts) + [len(kinds)]
    stages = []
    send = _send(model.boundary_bytes(mb), pipe_link) if p > 1 else 0.0
    for i in range(p):
        layer = [costs[kinds[k]] for k in range(bounds[i], bounds[i + 1])]
        compute = sum(c.seconds for c in layer) + (2 * send if p > 1 else 0.0)
        weights = sum(c.weight_bytes for c in layer)
        memory = weights / 2 * STATE_BYTES_PER_PARAM + min(p - i, m) * sum(
            c.activation_bytes for c in layer)
        allreduce = _allreduce(d, weights, data_link)
        update = weights / 2 * STATE_BYTES_PER_PARAM * 2 / \
            spec["device_memory_bandwidth_bytes_per_s"]
        stages.append((compute, memory, allreduce, update,
                       sum(c.communication_s for c in layer)))
    if max(s[1] for s in stages) > spec["memory_bytes_per_device"]:
        return None
    pipeline = sum(s[0] for s in stages) + (m - 1) * max(s[0] for s in stages)
    tail = max(s[2] + s[3] for s in stages)
    return Plan(tensor=t, data=d, pipeline=p, microbatch=mb, microbatches=m,
                stages=[bounds[i + 1] - bounds[i] for i in range(p)],
                step_s=pipeline + tail, pipeline_s=pipeline,
                bubble_s=(p - 1) * max(s[0] for s in stages) if p > 1 else 0.0,
                tensor_collectives_s=m * max(s[4] for s in stages),
                pipeline_send_s=m * 2 * send if p > 1 else 0.0,
                data_allreduce_s=max(s[2] for s in stages),
                update_s=max(s[3] for s in stages),
                memory_bytes=max(s[1] for s in stages))


def _powers_of_two(limit):
    n, out = 1, []
    while n <= limit:
        out.append(n)
        n *= 2
    return out


def _divides(model, t):
    return model.hidden % t == 0 and model.heads % t == 0 and (
        model.vocab is None or model.vocab % t == 0) and (
        model.classes is None or model.classes % t == 0)


def search(model, cluster, global_batch=None, microbatch_sizes=(1, 2, 4, 8),
           time_limit=30, log=None):
    """The best plan the cost model finds, the expert's, and the time it
    took: {"plan": Plan, "expert": Plan or None, "search_s": float}."""
    from . import _core
    start = time.perf_counter()
    spec = _core.cluster_spec(cluster)
    N = spec["nodes"] * spec["devices_per_node"]
    B = global_batch or model.global_batch
    kinds = [k for k, c in model.sequence() for _ in range(c)]
    distinct = [k for k, _ in model.sequence()]
    memo = {}

    def costs(t, mb, megatron):
        key = (t, mb, megatron)
        if key not in memo:
            memo[key] = {k: price_layer(model, k, t, mb, cluster, megatron,
                                        time_limit) for k in distinct}
            if log:
                log(f"  priced t={t} mb={mb}{' megatron' if megatron else ''}: "
                    + ", ".join(f"{k} {c.seconds * 1e3:.3f} ms"
                                for k, c in memo[key].items()))
        return memo[key]

    def best_cut(c, t, mb, p):
        d = N // (t * p)
        m = B // (d * mb)
        times = [c[k].seconds for k in kinds]
        weights = [c[k].weight_bytes / 2 * STATE_BYTES_PER_PARAM for k in kinds]
        acts = [c[k].activation_bytes for k in kinds]
        return stage_cut(times, weights, acts, p, m, spec["memory_bytes_per_device"])

    def valid(t, mb, p):
        if N % (t * p):
            return False
        d = N // (t * p)
        return B % (d * mb) == 0 and p <= len(kinds)

    # The expert: t = 8 (or the node) with Megatron's splits, microbatch 1,
    # the fewest even stages that fit.
    expert = None
    t_expert = min(8, spec["devices_per_node"], N)
    if _divides(model, t_expert):
        for p in _powers_of_two(N // t_expert):
            cuts = even_cut(kinds, p)
            if cuts is None or not valid(t_expert, 1, p):
                continue
            expert = evaluate(model, cluster, spec, costs(t_expert, 1, True),
                              t_expert, 1, p, cuts, B)
            if expert is not None:
                break

    best = None
    for t in _powers_of_two(min(spec["devices_per_node"], N)):
        if not _divides(model, t):
            continue
        for mb in microbatch_sizes:
            for megatron in (False, True):
                if megatron and t == 1:
                    continue
                c = None
                for p in _powers_of_two(N // t):
                    if not valid(t, mb, p):
                        continue
                    c = c or costs(t, mb, megatron)
                    cut = best_cut(c, t, mb, p)
                    if cut is None:
                        continue
                    plan = evaluate(model, cluster, spec, c, t, mb, p, cut[1], B)
                    if plan is not None and (best is None or plan.step_s < best.step_s):
                        plan.layouts = "megatron" if megatron else "ilp"
                        best = plan
    if expert is not None:
        expert.layouts = "megatron"
    return {"plan": best, "expert": expert,
            "search_s": time.perf_counter() - start, "devices": N,
            "global_batch": B, "model": model.name, "cluster": cluster,
            "parameters": model.parameters()}


def why(plan, expert):
    """Where the plan's predicted time differs from the expert's."""
    if expert is None:
        return "the expert recipe has no plan that fits memory"
    if plan.step_s >= expert.step_s * (1 - 1e-9):
        return "the expert plan (no faster plan found)"
    parts = []
    for key, what in (("pipeline_s", "the pipeline (compute, tensor collectives, "
                                     "sends, bubble)"),
                      ("bubble_s", "the bubble alone"),
                      ("data_allreduce_s", "the data-parallel gradient all-reduce"),
                      ("update_s", "the optimizer update")):
        delta = getattr(expert, key) - getattr(plan, key)
        if abs(delta) > 1e-6 * expert.step_s:
            parts.append(f"{abs(delta) * 1e3:.1f} ms {'more' if delta > 0 else 'less'} "
                         f"in {what}")
    choices = []
    for key in ("tensor", "data", "pipeline", "microbatch"):
        if getattr(plan, key) != getattr(expert, key):
            choices.append(f"{key} {getattr(expert, key)} -> {getattr(plan, key)}")
    return ", ".join(choices) + "; the expert spends " + ", ".join(parts)


def format_result(r):
    plan, expert = r["plan"], r["expert"]
    lines = [f"{r['model']} ({r['parameters'] / 1e9:.2f}B parameters) on {r['cluster']} "
             f"({r['devices']} devices), global batch {r['global_batch']}"]

    def row(name, p):
        if p is None:
            return f"  {name:7} no plan fits"
        return (f"  {name:7} tensor {p.tensor:2} x data {p.data:4} x pipeline {p.pipeline:3}, "
                f"microbatch {p.microbatch} x {p.microbatches}, stages {p.stages if p.pipeline <= 8 else '...'}"
                f" ({p.layouts}): step {p.step_s:.3f} s, "
                f"memory {p.memory_bytes / 1e9:.1f} GB per device")
    lines.append(row("plan", plan))
    lines.append(row("expert", expert))
    if plan is not None:
        if expert is not None:
            lines.append(f"  ratio plan / expert: {plan.step_s / expert.step_s:.3f}")
        lines.append(f"  why: {why(plan, expert)}")
    lines.append(f"  search time: {r['search_s']:.1f} s")
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="paddle-plan",
        description="Plan data, tensor and pipeline parallel training of a model on a "
                    "cluster with the cost model, beside Megatron-LM's recipe; prints "
                    "the predicted step time and memory without running anything.")
    parser.add_argument("model", help="a model of the zoo: " + ", ".join(ZOO))
    parser.add_argument("--cluster", required=True,
                        help="a cluster spec: a built-in name (h200-8x16, ...) or a JSON path")
    parser.add_argument("--global-batch", type=int, default=None,
                        help="sequences (images) per step (default: the model's)")
    parser.add_argument("--time-limit", type=float, default=30,
                        help="seconds the ILP solver may take per layer")
    parser.add_argument("--json", help="also write the result as JSON to this file")
    args = parser.parse_args(argv)
    if args.model not in ZOO:
        parser.error(f"unknown model {args.model!r}; the zoo has: {', '.join(ZOO)}")
    if args.global_batch is not None and args.global_batch <= 0:
        parser.error(f"--global-batch must be > 0, got {args.global_batch}")
    from . import _core
    try:
        _core.cluster_spec(args.cluster)
    except ValueError as e:
        parser.error(str(e))
    result = search(ZOO[args.model], args.cluster, args.global_batch,
                    time_limit=args.time_limit)
    print(format_result(result))
    if args.json:
        out = dict(result)
        for k in ("plan", "expert"):
            out[k] = out[k].summary() if out[k] is not None else None
        _core.write_file(args.json, (json.dumps(out, indent=2) + "\n").encode())
    return 0 if result["plan"] is not None else 1


if __name__ == "__main__":
    sys.exit(main())
