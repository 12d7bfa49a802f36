#!/usr/bin/env python3
"""Does the cost model predict the collectives (issue 36)?

Measures all_reduce, all_gather and reduce_scatter from 4 KiB to 64 MiB on
2 and 4 ranks, in-process and under MPI (paddle-collectives-bench, as
benchmarks/collectives.py does). Calibrates each transport's link from
two of those measurements: alpha from the 2-rank 4 KiB all_reduce, beta
from the 2-rank largest all_gather. Writes a device spec with that link
and asks the compiler (`paddle-opt --paddle-cost-report` on a module of
`shard` collectives) for every row's predicted time. Reports the Spearman
rank correlation of predicted vs measured per transport and overall, and
the rows the alpha-beta model misses by more than 2x. A measurement, not
a test.

    .venv/bin/python benchmarks/collectives_cost_model.py [--max-bytes B]
"""

import argparse
import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))
from collectives import bench  # noqa: E402

OPS = ("all_reduce", "all_gather", "reduce_scatter")


def spearman(a, b):
    ra = np.argsort(np.argsort(a))
    rb = np.argsort(np.argsort(b))
    return float(np.corrcoef(ra, rb)[0, 1])


def calibrate(rows):
    """alpha, beta of a transport from its 2-rank rows."""
    two = [r for r in rows if r["ranks"] == 2]
    small = min((r for r in two if r["op"] == "all_reduce"), key=lambda r: r["bytes"])
    big = max((r for r in two if r["op"] == "all_gather"), key=lambda r: r["bytes"])
    alpha = small["median_s"] / 2  # 2 (n-1) steps, n = 2; the bytes are small
    beta = big["bytes"] / 2 / max(big["median_s"] - alpha, 1e-9)
    return alpha, beta


def predict(build, rows, alpha, beta, tmp, tag):
    """Predicted seconds of each row from the cost report."""
    spec = json.loads((REPO / "specs" / "devices" / "xeon-amx-2c.json").read_text())
    spec["name"] = f"calibrated-{tag}"
    spec["link"] = {"bandwidth_bytes_per_s": beta, "latency_s": alpha}
    spec_path = tmp / f"{tag}.json"
    spec_path.write_text(json.dumps(spec))
    lines = []
    for ranks in sorted({r["ranks"] for r in rows}):
        lines.append(f"shard.grid @mesh{ranks}(shape = {ranks})")
    for i, r in enumerate(rows):
        n, count = r["ranks"], r["bytes"] // 4
        t = f"tensor<{count}xf32>"
        if r["op"] == "all_reduce":
            op = f"shard.all_reduce %x on @mesh{n} grid_axes = [0] : {t} -> {t}"
        elif r["op"] == "all_gather":
            t = f"tensor<{count // n}xf32>"
            op = (f"shard.all_gather %x on @mesh{n} grid_axes = [0] gather_axis = 0 : "
                  f"{t} -> tensor<{count // n * n}xf32>")
        else:
            op = (f"shard.reduce_scatter %x on @mesh{n} grid_axes = [0] scatter_axis = 0 "
                  f": {t} -> tensor<{count // n}xf32>")
        res = op.rsplit("-> ", 1)[1]
        lines += [f"func.func @row{i}(%x: {t}) -> {res} {{", f"  %0 = {op}",
                  f"  return %0 : {res}", "}"]
    module = tmp / f"{tag}.mlir"
    module.write_text("\n".join(lines) + "\n")
    run = subprocess.run([str(Path(build) / "bin" / "paddle-opt"), str(module),
                          f"--paddle-set-target=device={spec_path}",
                          "--paddle-cost-report", "-o", str(tmp / f"{tag}.out.mlir")],
                         capture_output=True, text=True, timeout=300)
    if run.returncode:
        raise SystemExit(f"paddle-opt failed:\n{run.stderr}")
    totals = [float(m.group(2)) * 1e-6 for m in
              re.finditer(r"total @row(\d+): .*?, ([0-9.]+) us", run.stdout)]
    if len(totals) != len(rows):
        raise SystemExit(f"expected {len(rows)} predictions:\n{run.stdout[-2000:]}")
    return totals


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build-dir", default=str(REPO / "build"))
    ap.add_argument("--max-bytes", type=int, default=64 << 20)
    ap.add_argument("--json", type=Path, help="write the rows here")
    args = ap.parse_args()
    mb = ["--max-bytes", str(args.max_bytes)]
    measured = {"in-process": [], "MPI": []}
    for n in (2, 4):
        measured["in-process"] += bench(args.build_dir, ["local", str(n)] + mb)
        measured["MPI"] += bench(args.build_dir, ["mpi"] + mb, mpi_ranks=n)
    all_pred, all_meas, out = [], [], []
    cpu = next((ln.split(":", 1)[1].strip() for ln in open("/proc/cpuinfo")
                if ln.startswith("model name")), "?")
    print(f"Collectives: cost model (alpha-beta, calibrated link) vs measured, {cpu}\n")
    print("| transport | alpha (us) | beta (GB/s) | rows | Spearman | worst ratio |")
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        for tag, rows in measured.items():
            rows = [r for r in rows if r["op"] in OPS]
            alpha, beta = calibrate(rows)
            pred = predict(args.build_dir, rows, alpha, beta, tmp,
                           tag.replace("-", "_"))
            meas = [r["median_s"] for r in rows]
            ratios = [p / m for p, m in zip(pred, meas)]
            worst = max(ratios, key=lambda x: max(x, 1 / x))
            print(f"| {tag} | {alpha * 1e6:.2f} | {beta / 1e9:.2f} | {len(rows)} | "
                  f"{spearman(pred, meas):.3f} | {worst:.2f}x |")
            all_pred += pred
            all_meas += meas
            for r, p in zip(rows, pred):
                out.append(dict(r, transport=tag, predicted_s=p))
    print(f"\nall rows: Spearman {spearman(all_pred, all_meas):.3f} over {len(all_pred)}")
    missed = [o for o in out if max(o["predicted_s"] / o["median_s"],
                                    o["median_s"] / o["predicted_s"]) > 2]
    if missed:
        print("\nrows the model misses by more than 2x:")
        for o in missed:
            print(f"  {o['transport']} {o['ranks']} ranks {o['op']} {o['bytes']} B: "
                  f"predicted {o['predicted_s'] * 1e6:.1f} us, measured "
                  f"{o['median_s'] * 1e6:.1f} us")
    if args.json:
        args.json.write_text(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
