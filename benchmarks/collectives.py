#!/usr/bin/env python3
"""Bus bandwidth of the collectives (issue 36), in one run: ours in-process
and under MPI (build/benchmarks/paddle-collectives-bench), MPICH's own
MPI_Allreduce on the same buffers (the same program, alternating with ours),
and torch.distributed's all_reduce over gloo when torch is installed. Prints
a markdown table of the median bus bandwidth per size; --json FILE keeps
the raw rows. A measurement, not a test.

    .venv/bin/python benchmarks/collectives.py [--ranks 2,4] [--max-bytes B]
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def bench(build_dir, args_, mpi_ranks=None):
    exe = str(Path(build_dir) / "benchmarks" / "paddle-collectives-bench")
    cmd = [exe, *args_, "--json"]
    if mpi_ranks:
        mpirun = shutil.which("mpirun.mpich") or shutil.which("mpirun")
        if mpirun is None:
            raise SystemExit("mpirun not found: run scripts/setup.sh")
        cmd = [mpirun, "-np", str(mpi_ranks), *cmd]
    run = subprocess.run(cmd, capture_output=True, text=True, timeout=1800)
    if run.returncode:
        raise SystemExit(f"{' '.join(cmd)} failed:\n{run.stderr}")
    return json.loads(run.stdout)


GLOO_WORKER = r'''
import os, sys, time, json, statistics
import torch, torch.distributed as dist
rank, n, port, max_bytes = (int(sys.argv[1]), int(sys.argv[2]), sys.argv[3],
                            int(sys.argv[4]))
torch.set_num_threads(1)
dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}",
                        rank=rank, world_size=n)
rows, size = [], 4096
while size <= max_bytes:
    t = torch.ones(size // 4)
    calls = max(5, min(200, int(0.2 / (20e-6 + size / 2e9))))
    times = []
    for i in range(calls + 2):
        dist.barrier()
        s = time.perf_counter()
        dist.all_reduce(t)
        if i >= 2:
            times.append(time.perf_counter() - s)
    med = statistics.median(times)
    alg = size / med / 1e9
    rows.append({"backend": "gloo", "ranks": n, "op": "torch all_reduce",
                 "bytes": size, "median_s": med, "algbw_gbs": alg,
                 "busbw_gbs": alg * 2 * (n - 1) / n})
    size *= 4
if rank == 0:
    print(json.dumps(rows))
dist.destroy_process_group()
'''


def gloo(n, max_bytes):
    try:
        import torch.distributed  # noqa: F401
    except ImportError:
        return []
    with tempfile.TemporaryDirectory() as tmp:
        script = Path(tmp) / "gloo_worker.py"
        script.write_text(GLOO_WORKER)
        port = str(29500 + os.getpid() % 1000)
        procs = [subprocess.Popen([sys.executable, str(script), str(r), str(n), port,
                                   str(max_bytes)], stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True) for r in range(n)]
        outs = [p.communicate(timeout=1800) for p in procs]
    if any(p.returncode for p in procs):
        print("gloo failed: " + outs[0][1][-300:], file=sys.stderr)
        return []
    return json.loads(outs[0][0])


def table(rows):
    sizes = sorted({r["bytes"] for r in rows if r["op"] == "all_reduce"})
    cols = []
    for r in rows:
        key = (r["backend"], r["ranks"], r["op"])
        if key not in cols:
            cols.append(key)
    head = ["bytes"] + [f"{b} {n} {op}" for b, n, op in cols]
    lines = ["| " + " | ".join(head) + " |", "| " + " | ".join(["---:"] * len(head)) + " |"]
    for size in sizes:
        vals = [f"{size // 1024} KiB" if size < 1 << 20 else f"{size >> 20} MiB"]
        for key in cols:
            hit = [r for r in rows if (r["backend"], r["ranks"], r["op"]) == key
                   and abs(r["bytes"] - size) <= size // 8]
            vals.append(f"{hit[0]['busbw_gbs']:.2f}" if hit else "-")
        lines.append("| " + " | ".join(vals) + " |")
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build-dir", default=str(REPO / "build"))
    ap.add_argument("--ranks", default="2,4")
    ap.add_argument("--max-bytes", type=int, default=64 << 20)
    ap.add_argument("--json", type=Path, help="write the raw rows here")
    args = ap.parse_args()
    rows = []
    start = time.time()
    for n in (int(x) for x in args.ranks.split(",")):
        mb = ["--max-bytes", str(args.max_bytes)]
        rows += bench(args.build_dir, ["local", str(n)] + mb)
        rows += bench(args.build_dir, ["mpi"] + mb, mpi_ranks=n)
        rows += gloo(n, args.max_bytes)
    cpu = next((ln.split(":", 1)[1].strip() for ln in open("/proc/cpuinfo")
                if ln.startswith("model name")), "?")
    print(f"Bus bandwidth, GB/s (median call), {cpu}, {os.cpu_count()} cores, "
          f"{time.time() - start:.0f} s:\n")
    print(table(rows))
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
