#!/usr/bin/env python3
"""Auto-sharding at cluster scale (issue 37): for every model of the
planning zoo (paddle_mlir.plan.ZOO) on clusters of 8, 64, 256 and 1024
H200, the plan paddle-plan finds beside Megatron-LM's recipe, both priced
by the same cost model, and the time the search took on this machine.
Prints a markdown table; --json FILE keeps the rows. A measurement, not a
test: nothing runs on the clusters.

    .venv/bin/python benchmarks/auto_shard_plans.py [--models gpt3-175b,...]
"""

import argparse
import json
import os
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
os.environ.setdefault("PADDLE_BUILD_DIR", str(REPO / "build"))
sys.path.insert(0, str(REPO / "python"))

from paddle_mlir import plan  # noqa: E402

CLUSTERS = ["h200-8x1", "h200-8x8", "h200-8x32", "h200-8x128"]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--models", default=",".join(plan.ZOO))
    parser.add_argument("--clusters", default=",".join(CLUSTERS))
    parser.add_argument("--json")
    args = parser.parse_args()
    rows = []
    print("| model | GPUs | plan (t x d x p, microbatch) | step s | expert (t x d x p) "
          "| step s | plan / expert | memory GB (plan / expert) | search s |")
    print("| --- | ---: | --- | ---: | --- | ---: | ---: | ---: | ---: |")
    for name in args.models.split(","):
        for cluster in args.clusters.split(","):
            r = plan.search(plan.ZOO[name], cluster)
            p, e = r["plan"], r["expert"]

            def shape(x):
                return (f"{x.tensor} x {x.data} x {x.pipeline}, mb {x.microbatch}"
                        if x else "none fits")
            ratio = f"{p.step_s / e.step_s:.3f}" if p and e else "-"
            memory = (f"{p.memory_bytes / 1e9:.0f} / "
                      f"{e.memory_bytes / 1e9:.0f}" if p and e else
                      f"{p.memory_bytes / 1e9:.0f} / -" if p else "-")
            print(f"| {name} | {r['devices']} | {shape(p)} | "
                  f"{p.step_s:.3f} | {shape(e)} | "
                  f"{e.step_s if e else float('nan'):.3f} | {ratio} | {memory} | "
                  f"{r['search_s']:.1f} |" if p else
                  f"| {name} | {r['devices']} | none fits | - | {shape(e)} | - | - | - | "
                  f"{r['search_s']:.1f} |", flush=True)
            row = {k: v for k, v in r.items() if k not in ("plan", "expert")}
            row["plan"] = p.summary() if p else None
            row["expert"] = e.summary() if e else None
            row["why"] = plan.why(p, e) if p else None
            rows.append(row)
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=2) + "\n")


if __name__ == "__main__":
    main()
