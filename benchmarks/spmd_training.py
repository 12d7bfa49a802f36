#!/usr/bin/env python3
"""Data-parallel training of a GPT-2-style block (issue 36), in one run:

- the unsharded step (pm.nn.TrainStep without a mesh) on 1 and 2 threads;
- the same step partitioned for a 1-device mesh (the overhead of the
  sharded program itself: annotations, partition, runtime on a mesh);
- the step partitioned for 2 devices, as one executable under
  `mpirun -np 2` (one thread per process) and in one process (--mesh 2).

Every variant is one `paddle-compile --emit exe` of the step module, timed
by its own `--bench` (median over repeated runs), so all numbers come from
the same runtime path. Prints a markdown table; --json FILE keeps the rows.
A measurement, not a test.

    .venv/bin/python benchmarks/spmd_training.py [--runs 10] [--repeats 3]
"""

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent
BUILD = Path(os.environ.get("PADDLE_BUILD_DIR", REPO / "build"))
os.environ.setdefault("PADDLE_BUILD_DIR", str(BUILD))
sys.path.insert(0, str(REPO / "python"))

import paddle_mlir as pm  # noqa: E402
from paddle_mlir import nn, optim  # noqa: E402


class Block(nn.Module):
    def __init__(self, rng, d, heads, seq):
        super().__init__()
        self.ln1 = nn.LayerNorm(d)
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


def build(tmp, name, mesh, batch, d, heads, seq):
    rng = np.random.default_rng(0)
    model = Block(rng, d, heads, seq)
    step = nn.TrainStep(model, nn.MSELoss(), optim.Adam(model, lr=1e-3), mesh=mesh)
    x = rng.standard_normal((batch, seq, d)).astype(np.float32)
    y = rng.standard_normal((batch, seq, d)).astype(np.float32)
    step(x, y)
    module = tmp / f"{name}.mlirbc"
    step.last_module.save(str(module))
    exe = tmp / name
    run = subprocess.run([str(BUILD / "bin" / "paddle-compile"), str(module),
                          "--emit", "exe", "-o", str(exe)],
                         capture_output=True, text=True, timeout=600)
    if run.returncode:
        raise SystemExit(f"paddle-compile {name} failed:\n{run.stderr}")
    args = []
    for i, a in enumerate(step._arguments([x, y])):
        path = tmp / f"{name}_in{i}.npy"
        np.save(path, np.array(a, order="C"))
        args += ["--input", str(path)]
    return exe, args


def bench(cmd, runs):
    run = subprocess.run([*map(str, cmd), "--bench", str(runs)],
                         capture_output=True, text=True, timeout=1200)
    if run.returncode:
        raise SystemExit(f"{' '.join(map(str, cmd))} failed:\n{run.stderr}")
    m = re.search(r"median ([0-9.]+) ms", run.stdout)
    if not m:
        raise SystemExit(f"no timing in:\n{run.stdout}")
    return float(m.group(1))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=10, help="--bench runs per measurement")
    ap.add_argument("--repeats", type=int, default=3,
                    help="measurements per variant, interleaved (median taken)")
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--d", type=int, default=128)
    ap.add_argument("--seq", type=int, default=32)
    ap.add_argument("--json", help="also write the rows here")
    opts = ap.parse_args()
    mpirun = shutil.which("mpirun.mpich") or shutil.which("mpirun")
    if mpirun is None:
        raise SystemExit("mpirun not found: run scripts/setup.sh")
    shape = dict(batch=opts.batch, d=opts.d, heads=8, seq=opts.seq)
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        plain, plain_args = build(tmp, "plain", None, **shape)
        mesh1, mesh1_args = build(tmp, "mesh1", pm.Mesh(1), **shape)
        mesh2, mesh2_args = build(tmp, "mesh2", pm.Mesh(2), **shape)
        variants = {
            "unsharded, 1 thread": [plain, *plain_args, "--threads", "1"],
            "unsharded, 2 threads": [plain, *plain_args, "--threads", "2"],
            "1-device mesh, 1 thread": [mesh1, *mesh1_args, "--mesh", "1",
                                        "--threads", "1"],
            "2 processes (mpirun), 1 thread each": [mpirun, "-np", "2", mesh2,
                                                    *mesh2_args, "--threads", "1"],
            "2 devices in one process, 1 thread each": [mesh2, *mesh2_args, "--mesh",
                                                        "2", "--threads", "1"],
        }
        times = {k: [] for k in variants}
        for _ in range(opts.repeats):
            for k, cmd in variants.items():
                times[k].append(bench(cmd, opts.runs))
    med = {k: statistics.median(v) for k, v in times.items()}
    base1, base2 = med["unsharded, 1 thread"], med["unsharded, 2 threads"]
    cpu = next((ln.split(":", 1)[1].strip() for ln in open("/proc/cpuinfo")
                if ln.startswith("model name")), "?")
    print(f"GPT-2-style block, batch {opts.batch}, seq {opts.seq}, d {opts.d}: "
          f"Adam training step, median of {opts.repeats} x {opts.runs} runs ({cpu})\n")
    print("| variant | ms / step | vs unsharded 1 thread | vs unsharded 2 threads |")
    print("| --- | ---: | ---: | ---: |")
    for k, v in med.items():
        print(f"| {k} | {v:.2f} | {base1 / v:.2f}x | {base2 / v:.2f}x |")
    print(f"\noverhead of the sharded program on 1 device: "
          f"{(med['1-device mesh, 1 thread'] / base1 - 1) * 100:+.1f}%")
    if opts.json:
        Path(opts.json).write_text(json.dumps({"times_ms": times, "median_ms": med,
                                               "shape": shape, "cpu": cpu}, indent=1))
    # Interpreter teardown after MPI/JIT work is not worth waiting for.
    sys.stdout.flush()
    os._exit(0)


if __name__ == "__main__":
    main()
