#!/usr/bin/env python3
"""Does the auto plan run as fast as the hand plans on this machine
(issue 37)? For an MLP and a GPT-2-style block, one Adam training step
(pm.nn.TrainStep) with each hand plan (data, tensor, data x tensor) and
with parallel="auto", on 2 and 4 MPI processes and 4 in-process devices:

- this CPU is measured first (paddle-calibrate --quick), and the link of
  each transport at each device count (paddle-collectives-bench: alpha
  from the 4 KiB all_reduce, beta from the largest all_gather, at N ranks,
  so 4 ranks on 2 cores pay their time-slicing); each (transport, N) gets
  a device spec with its share of the CPU and that link, which the step is
  compiled for, so the auto plan is chosen for it;
- every step is one `paddle-compile --emit exe`, timed by its own --bench
  (median of the repeats), under `mpirun -np N` or with `--mesh N`;
- each plan's predicted time is paddle-auto-shard's on its module (a hand
  plan's splits are constraints there).

Prints, per model and transport, the measured and predicted times, the
auto plan against the best hand plan, and the Spearman rank correlation of
predicted vs measured. A measurement, not a test.

    .venv/bin/python benchmarks/auto_shard_execution.py [--runs 10] [--repeats 3]
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
sys.path.insert(0, str(Path(__file__).resolve().parent))

import paddle_mlir as pm  # noqa: E402
from paddle_mlir import nn, optim  # noqa: E402
from collectives import bench as collectives_bench  # noqa: E402
from collectives_cost_model import spearman  # noqa: E402
from spmd_training import Block, bench  # noqa: E402


class MLP(nn.Module):
    def __init__(self, rng, d=256, hidden=1024):
        super().__init__()
        self.fc1 = nn.Linear(d, hidden, rng=rng)
        self.act = nn.GELU()
        self.fc2 = nn.Linear(hidden, d, rng=rng)

    def forward(self, x):
        return self.fc2(self.act(self.fc1(x)))


MODELS = {
    "mlp": (lambda rng: MLP(rng), lambda rng: rng.standard_normal((256, 256))),
    "block": (lambda rng: Block(rng, 128, 8, 32),
              lambda rng: rng.standard_normal((16, 32, 128))),
}

BLOCK_TENSOR = {"attn.in_proj_weight": pm.P("model"),
                "attn.out_proj.weight": pm.P(None, "model"),
                "fc.weight": pm.P("model"), "fc.bias": pm.P("model"),
                "proj.weight": pm.P(None, "model")}


def plans(n):
    out = {"data": (pm.Mesh(n, "data"), "data"),
           "tensor": (pm.Mesh(n, "model"), "tensor")}
    if n == 4:
        out["data x tensor"] = (pm.Mesh((2, 2), ("data", "model")), "tensor")
    out["auto"] = (pm.Mesh(n), "auto")
    return out


def calibrate_link(rows, n):
    """alpha, beta of the alpha-beta model from the n-rank rows: the
    smallest all_reduce (2 (n-1) alpha) and the largest all_gather
    ((n-1) alpha + (n-1)/n bytes / beta)."""
    rows = [r for r in rows if r["ranks"] == n]
    small = min((r for r in rows if r["op"] == "all_reduce"), key=lambda r: r["bytes"])
    big = max((r for r in rows if r["op"] == "all_gather"), key=lambda r: r["bytes"])
    alpha = small["median_s"] / (2 * (n - 1))
    beta = (n - 1) / n * big["bytes"] / max(big["median_s"] - (n - 1) * alpha, 1e-9)
    return alpha, beta


def host_spec(tmp):
    """This CPU's spec, measured now (paddle-calibrate --quick)."""
    path = tmp / "host.json"
    run = subprocess.run([str(BUILD / "bin" / "paddle-calibrate"), "--quick", "-o",
                          str(path)], capture_output=True, text=True, timeout=600)
    if run.returncode:
        raise SystemExit(f"paddle-calibrate failed:\n{run.stderr}")
    return path


def device_spec(tmp, base, tag, alpha, beta, devices):
    """One device of a mesh of `devices` on this machine: its share of the
    cores (a whole core at most: each device runs one thread), of the
    memory bandwidth, and the transport's link."""
    spec = json.loads(base.read_text())
    share = 1 / max(devices, spec["cores"])
    spec["name"] = f"{spec['name']}-{tag}-{devices}"
    spec["peak_flops_per_s"] = {k: v * share for k, v in spec["peak_flops_per_s"].items()}
    spec["memory_bandwidth_bytes_per_s"] *= share
    spec["cores"] = 1
    spec["link"] = {"bandwidth_bytes_per_s": beta, "latency_s": alpha}
    path = tmp / f"{tag}_{devices}.json"
    path.write_text(json.dumps(spec))
    return path


def build(tmp, name, model_name, mesh, parallel):
    make_model, make_x = MODELS[model_name]
    rng = np.random.default_rng(0)
    model = make_model(rng)
    if model_name == "block" and parallel == "tensor":
        parallel = BLOCK_TENSOR
    step = nn.TrainStep(model, nn.MSELoss(), optim.Adam(model, lr=1e-3), mesh=mesh,
                        parallel=parallel)
    x = make_x(rng).astype(np.float32)
    y = make_x(rng).astype(np.float32)
    module = tmp / f"{name}.mlirbc"
    # Traced, not run: the module is what paddle-compile gets.
    step._cache[step._key([x, y])] = step._build([x, y])
    step.last_module.save(str(module))
    args = []
    for i, a in enumerate(step._arguments([x, y])):
        path = tmp / f"{name}_in{i}.npy"
        np.save(path, np.array(a, order="C"))
        args += ["--input", str(path)]
    return module, args


def compile_exe(module, spec, out):
    run = subprocess.run([str(BUILD / "bin" / "paddle-compile"), str(module), "--emit", "exe",
                          f"--device={spec}", "-o", str(out)],
                         capture_output=True, text=True, timeout=900)
    if run.returncode:
        raise SystemExit(f"paddle-compile {module.name} failed:\n{run.stderr}")
    return out


def predict(module, spec):
    run = subprocess.run([str(BUILD / "bin" / "paddle-opt"), str(module),
                          f"--paddle-set-target=device={spec}", "--paddle-auto-shard",
                          "--mlir-print-op-generic"], capture_output=True, text=True,
                         timeout=900)
    if run.returncode:
        raise SystemExit(f"paddle-opt --paddle-auto-shard {module.name} failed:\n"
                         f"{run.stderr[-3000:]}")
    m = re.search(r"predicted_s = ([0-9.eE+-]+)", run.stdout)
    if not m:
        raise SystemExit(f"no plan in the output of {module.name}")
    return float(m.group(1))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--models", default="mlp,block")
    ap.add_argument("--json")
    opts = ap.parse_args()
    mpirun = shutil.which("mpirun.mpich") or shutil.which("mpirun")
    if mpirun is None:
        raise SystemExit("mpirun not found: run scripts/setup.sh")
    small = ["--max-bytes", str(4 << 20)]
    # (transport, devices): how a step runs.
    transports = [("MPI", 2), ("MPI", 4), ("in-process", 4)]
    links = {}
    for transport, n in transports:
        rows = (collectives_bench(BUILD, ["mpi"] + small, mpi_ranks=n)
                if transport == "MPI" else
                collectives_bench(BUILD, ["local", str(n)] + small))
        links[transport, n] = calibrate_link(rows, n)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        specs = {}
        host = host_spec(tmp)
        base = "this CPU (paddle-calibrate --quick)"
        for transport, n in transports:
            alpha, beta = links[transport, n]
            specs[transport, n] = device_spec(tmp, host, transport.replace("-", "_"),
                                              alpha, beta, n)
        for model_name in opts.models.split(","):
            for transport, n in transports:
                spec = specs[transport, n]
                variants = {}
                for plan, (mesh, parallel) in plans(n).items():
                    name = f"{model_name}_{transport.replace('-', '_')}_{n}_{plan.replace(' ', '_')}"
                    module, args = build(tmp, name, model_name, mesh, parallel)
                    exe = compile_exe(module, spec, tmp / name)
                    cmd = ([mpirun, "-np", str(n), exe, *args, "--threads", "1"]
                           if transport == "MPI" else
                           [exe, *args, "--mesh", str(n), "--threads", "1"])
                    variants[plan] = (cmd, predict(module, spec))
                times = {k: [] for k in variants}
                for _ in range(opts.repeats):
                    for k, (cmd, _) in variants.items():
                        times[k].append(bench(cmd, opts.runs))
                for k, (_, predicted) in variants.items():
                    rows.append({"model": model_name, "transport": transport, "devices": n,
                                 "plan": k, "measured_ms": statistics.median(times[k]),
                                 "predicted_ms": predicted * 1e3, "times_ms": times[k]})
    cpu = next((ln.split(":", 1)[1].strip() for ln in open("/proc/cpuinfo")
                if ln.startswith("model name")), "?")
    print(f"Auto plan vs hand plans, one Adam step, median of {opts.repeats} x "
          f"{opts.runs} runs, 1 thread per device ({cpu}; compute priced by {base}, "
          "links calibrated: " + ", ".join(
              f"{t} x{n} alpha {a * 1e6:.1f} us beta {b / 1e9:.2f} GB/s"
              for (t, n), (a, b) in links.items()) + ")\n")
    print("| model | transport | devices | plan | measured ms | predicted ms |")
    print("| --- | --- | ---: | --- | ---: | ---: |")
    for r in rows:
        print(f"| {r['model']} | {r['transport']} | {r['devices']} | {r['plan']} | "
              f"{r['measured_ms']:.2f} | {r['predicted_ms']:.3f} |")
    print()
    print("| model | transport | devices | auto / best hand plan | Spearman |")
    print("| --- | --- | ---: | ---: | ---: |")
    groups = {}
    for r in rows:
        groups.setdefault((r["model"], r["transport"], r["devices"]), []).append(r)
    for (model_name, transport, n), group in groups.items():
        auto = next(r for r in group if r["plan"] == "auto")
        best = min(r["measured_ms"] for r in group if r["plan"] != "auto")
        rho = spearman([r["predicted_ms"] for r in group],
                       [r["measured_ms"] for r in group])
        print(f"| {model_name} | {transport} | {n} | {auto['measured_ms'] / best:.3f} | "
              f"{rho:.2f} |")
    rho = spearman([r["predicted_ms"] for r in rows], [r["measured_ms"] for r in rows])
    print(f"\nall {len(rows)} rows: Spearman {rho:.2f}")
    if opts.json:
        Path(opts.json).write_text(json.dumps(
            {"rows": rows, "cpu": cpu,
             "links": [{"transport": t, "devices": n, "alpha_s": a, "beta_bytes_per_s": b}
                       for (t, n), (a, b) in links.items()]}, indent=1))
    sys.stdout.flush()
    os._exit(0)


if __name__ == "__main__":
    main()
