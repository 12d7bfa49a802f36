#!/usr/bin/env python3
"""ONNX backend node tests through the importer: passed/failed/unsupported.

Runs every test in onnx/backend/test/data/node (from the installed onnx
wheel), or those matching --filter, through import + compile + run, and
prints counts per op type and in total. See docs/onnx.md.

    PYTHONPATH=python PADDLE_BUILD_DIR=build .venv/bin/python scripts/onnx_conformance.py
        [--filter REGEX] [--details] [--write-passing python/tests/onnx_conformance_passing.txt]
"""

import argparse
import os
import re
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "python"))
os.environ.setdefault("PADDLE_BUILD_DIR", str(REPO / "build"))


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--filter", help="only tests whose name matches this regex")
    p.add_argument("--data-dir", help="node test folder (default: the onnx wheel's)")
    p.add_argument("--batch", type=int, default=32, help="tests per compilation")
    p.add_argument("--opt-level", type=int, default=0,
                   help="LLVM optimization level of the compilation (default 0)")
    p.add_argument("--details", action="store_true",
                   help="print one line per test that did not pass")
    p.add_argument("--write-passing", metavar="FILE",
                   help="write the names of the passing tests to FILE")
    args = p.parse_args()

    from paddle_mlir.onnx import conformance as c
    names = c.list_tests(args.data_dir)
    if args.filter:
        names = [n for n in names if re.search(args.filter, n)]

    def progress(n):
        print(f"\r{n}/{len(names)}", end="", file=sys.stderr, flush=True)
    results, seconds = c.timed_run(names, data_dir=args.data_dir, batch=args.batch,
                                   progress=progress, opt_level=args.opt_level)
    print(file=sys.stderr)
    per_op, totals = c.summarize(results)
    print(f"{'op type':28} {'passed':>7} {'failed':>7} {'unsupp.':>7}   (bound)")
    for op in sorted(per_op):
        s = per_op[op]
        print(f"{op:28} {s['passed']:7} {s['failed']:7} {s['unsupported']:7}   "
              f"{'(' + str(s['bound']) + ')' if s['bound'] else ''}")
    print(f"{'TOTAL':28} {totals['passed']:7} {totals['failed']:7} {totals['unsupported']:7}"
          f"   ({totals['bound']})   {len(results)} tests, {seconds:.0f} s")
    print("(bound: passed with small graph inputs such as shapes or axes bound "
          "to the test's values as constants)")
    if args.details:
        for r in sorted(results.values(), key=lambda r: (r.status, r.name)):
            if r.status != "passed":
                print(f"{r.status:12} {r.name}: {r.detail.splitlines()[0] if r.detail else ''}")
    if args.write_passing:
        passing = sorted(n for n, r in results.items() if r.status == "passed")
        Path(args.write_passing).write_text(
            "# ONNX backend node tests that pass import + compile + run; written by\n"
            "# scripts/onnx_conformance.py --write-passing, run by test_onnx_conformance.py.\n"
            + "".join(n + "\n" for n in passing))
    return 0


if __name__ == "__main__":
    sys.exit(main())
