#!/usr/bin/env python3
"""Pipeline-parallel training (issue 36), in one run: two GPT-2-style
blocks as an nn.Sequential (attention, MLP, attention, MLP), an Adam step

- unsharded (pm.nn.TrainStep without a mesh) on 1 and 2 threads;
- cut into 2 stages (TrainStep(parallel="pipeline")), 1 thread per stage,
  with 1, 2, 4 and 8 microbatches (1F1B).

All variants run through the Python package (the pipeline's schedule runs
there). Median over repeated, interleaved measurements of several steps;
prints a markdown table, --json FILE keeps the rows. A measurement, not a
test.

    .venv/bin/python benchmarks/pipeline_training.py [--steps 5] [--repeats 3]
"""

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent
os.environ.setdefault("PADDLE_BUILD_DIR", str(REPO / "build"))
sys.path.insert(0, str(REPO / "python"))
sys.path.insert(0, str(REPO / "python" / "tests"))

import paddle_mlir as pm  # noqa: E402
from paddle_mlir import _core, nn, optim  # noqa: E402
from test_spmd_pipeline import Attention, FeedForward  # noqa: E402


def make(variant, d, heads, seq):
    rng = np.random.default_rng(0)
    model = nn.Sequential(Attention(rng, d, heads, seq), FeedForward(rng, d),
                          Attention(rng, d, heads, seq), FeedForward(rng, d))
    opt = optim.Adam(model, lr=1e-3)
    kind, value = variant
    if kind == "pipeline":
        return nn.TrainStep(model, nn.MSELoss(), opt, mesh=pm.Mesh(2, "pipe"),
                            parallel="pipeline", microbatches=value)
    return nn.TrainStep(model, nn.MSELoss(), opt)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--steps", type=int, default=5, help="steps per measurement")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--d", type=int, default=128)
    ap.add_argument("--seq", type=int, default=32)
    ap.add_argument("--json", help="also write the rows here")
    opts = ap.parse_args()
    rng = np.random.default_rng(1)
    x = rng.standard_normal((opts.batch, opts.seq, opts.d)).astype(np.float32)
    y = rng.standard_normal((opts.batch, opts.seq, opts.d)).astype(np.float32)
    variants = {"unsharded, 1 thread": (("plain", None), 1),
                "unsharded, 2 threads": (("plain", None), 2)}
    for m in (1, 2, 4, 8):
        variants[f"2 stages, {m} microbatch{'es' if m > 1 else ''}, 1 thread each"] = (
            ("pipeline", m), 1)
    steps = {k: make(v, opts.d, 8, opts.seq) for k, (v, _) in variants.items()}
    times = {k: [] for k in variants}
    for k, (_, threads) in variants.items():  # compile and warm up
        _core.set_num_threads(threads)
        steps[k](x, y)
    for _ in range(opts.repeats):
        for k, (_, threads) in variants.items():
            _core.set_num_threads(threads)
            start = time.perf_counter()
            for _ in range(opts.steps):
                steps[k](x, y)
            times[k].append((time.perf_counter() - start) / opts.steps * 1e3)
    med = {k: statistics.median(v) for k, v in times.items()}
    base1, base2 = med["unsharded, 1 thread"], med["unsharded, 2 threads"]
    cpu = next((ln.split(":", 1)[1].strip() for ln in open("/proc/cpuinfo")
                if ln.startswith("model name")), "?")
    print(f"2 GPT-2-style blocks, batch {opts.batch}, seq {opts.seq}, d {opts.d}: Adam "
          f"step, median of {opts.repeats} x {opts.steps} steps ({cpu})\n")
    print("| variant | ms / step | vs unsharded 1 thread | vs unsharded 2 threads |")
    print("| --- | ---: | ---: | ---: |")
    for k, v in med.items():
        print(f"| {k} | {v:.1f} | {base1 / v:.2f}x | {base2 / v:.2f}x |")
    if opts.json:
        Path(opts.json).write_text(json.dumps({"times_ms": times, "median_ms": med,
                                               "cpu": cpu}, indent=1))


if __name__ == "__main__":
    main()
