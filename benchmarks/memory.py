#!/usr/bin/env python3
"""Memory planning on the benchmark models (a measurement, not a test).

For each model in benchmarks/models, runs `paddle-opt --paddle-memory-report`
(the CPU pipeline up to paddle-plan-memory) and prints, summed over the
model's functions: the naive bytes (every planned temporary in its own
allocation), the planned workspace, the lower bound (most bytes live at one
op), planned / lower bound (the target is <= 1.05) and naive / planned (what
planning saves). Sizes are rounded up to 64 bytes, as the planner places
them. Pass --json DIR to keep the plans (for scripts/memory_picture.py).

    .venv/bin/python benchmarks/memory.py [--build build] [--json DIR]
"""

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def plan(paddle_opt, model, json_path):
    # Relative to the repository, so locations in the plan are too.
    proc = subprocess.run(
        [str(paddle_opt.resolve()), str(model.relative_to(REPO)),
         f"--paddle-memory-report=json={Path(json_path).resolve()}", "-o", "/dev/null"],
        capture_output=True, text=True, cwd=REPO)
    if proc.returncode != 0:
        sys.exit(f"{model}: paddle-opt failed:\n{proc.stderr}")
    return json.loads(Path(json_path).read_text())["functions"]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", default=str(REPO / "build"))
    parser.add_argument("--json", help="folder to keep each model's plan in")
    args = parser.parse_args()
    paddle_opt = Path(args.build) / "bin" / "paddle-opt"
    out_dir = Path(args.json) if args.json else Path(tempfile.mkdtemp())
    out_dir.mkdir(parents=True, exist_ok=True)

    header = (f"| model | naive B | planned B | lower bound B | planned/lower bound "
              f"| naive/planned | buffers (in place) | unplanned |")
    print(header)
    print("|" + "---|" * 8)
    worst = 0.0
    for model in sorted((REPO / "benchmarks" / "models").glob("*.mlir")):
        functions = plan(paddle_opt, model, out_dir / f"{model.stem}.json")
        naive = sum(f["naive"] for f in functions)
        planned = sum(f["planned"] for f in functions)
        lower = sum(f["lower_bound"] for f in functions)
        buffers = sum(len(f["buffers"]) for f in functions)
        in_place = sum(f["in_place"] for f in functions)
        unplanned = sum(len(f["unplanned"]) for f in functions)
        ratio = planned / lower if lower else 1.0
        worst = max(worst, ratio)
        print(f"| {model.stem} | {naive} | {planned} | {lower} | {ratio:.3f} | "
              f"{naive / planned if planned else 1.0:.2f} | {buffers} ({in_place}) | "
              f"{unplanned} |")
    print(f"\nworst planned/lower bound: {worst:.3f} (target <= 1.05)")


if __name__ == "__main__":
    main()
