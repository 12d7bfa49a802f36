#!/usr/bin/env python3
"""Compile time and memory against the op count (a measurement, not a test).

Generates chains of n ops, op i being tanh, sin or a matmul with one shared
weight for i % 3 = 0, 1, 2, on 16x16 f32 (the chain of issue 34), and
compiles each in a fresh process, three ways:

  opt   paddle-opt chain.mlir --paddle-cpu-pipeline (the MLIR pipeline)
  run   paddle-run chain.mlir (the whole JIT: pipeline, LLVM, one call)
  onnx  the same chain as an ONNX graph: paddle_mlir.onnx.load +
        _core.compile, timed inside the process (startup and imports not
        counted), as docs/compile-time.md measures models

and reports the median seconds and peak RSS (MB, of the whole process) per
size, the ratio of each size to half of it, and draws both curves as an
SVG. docs/compile-time.md, "Scaling with the op count", shows the results.

    .venv/bin/python benchmarks/compile_scaling.py [--build build]
        [--sizes 250,500,1000,2000,4000,5000,8000,10000] [--reps 3]
        [--paths opt,run,onnx] [--timeout 600] [--json out.json]
        [--svg docs/images/compile-scaling.svg] [--before before.json]

--before draws an earlier --json run (another build) dashed in the same
picture. A run that exceeds --timeout counts as missing (">" in the table).
Timings are noisy on a shared machine: compare runs made on one machine,
when `uptime` shows it quiet; `--best-of A.json B.json ...` (instead of
measuring) takes each point's lowest median over several runs, and prints
and draws that.
"""

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SIZE = 16
PATHS = ("opt", "run", "onnx")
COLORS = {"opt": "#4e79a7", "run": "#e15759", "onnx": "#59a14f"}
LABELS = {"opt": "paddle-opt --paddle-cpu-pipeline", "run": "paddle-run (JIT)",
          "onnx": "ONNX import + _core.compile"}


def chain_mlir(n):
    t = f"tensor<{SIZE}x{SIZE}xf32>"
    lines = [f"func.func @main(%x: {t}, %w: {t}) -> {t} {{"]
    cur = "%x"
    for i in range(n):
        if i % 3 == 2:
            lines.append(f"  %v{i} = paddle.matmul {cur}, %w : {t}, {t} -> {t}")
        else:
            op = "tanh" if i % 3 == 0 else "sin"
            lines.append(f"  %v{i} = paddle.{op} {cur} : {t} -> {t}")
        cur = f"%v{i}"
    lines += [f"  return {cur} : {t}", "}"]
    return "\n".join(lines) + "\n"


def chain_onnx(n, w):
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    nodes, cur = [], "x"
    for i in range(n):
        op = ("Tanh", "Sin", "MatMul")[i % 3]
        nodes.append(helper.make_node(op, [cur, "w"] if op == "MatMul" else [cur],
                                      [f"v{i}"]))
        cur = f"v{i}"
    graph = helper.make_graph(
        nodes, "chain", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [SIZE, SIZE])],
        [helper.make_tensor_value_info(cur, TensorProto.FLOAT, [SIZE, SIZE])],
        [numpy_helper.from_array(w, "w")])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def onnx_worker(path, build):
    """In a fresh process: import + compile the model; prints JSON."""
    sys.path.insert(0, str(REPO / "python"))
    os.environ["PADDLE_BUILD_DIR"] = str(build)
    import paddle_mlir.onnx as pox
    from paddle_mlir import _core
    start = time.perf_counter()
    imported = pox.load(path)
    loaded = time.perf_counter()
    _core.compile(imported.module)
    done = time.perf_counter()
    print(json.dumps({"seconds": done - start, "import": loaded - start,
                      "compile": done - loaded}))


def run_child(cmd, timeout):
    """Runs `cmd`; returns (wall seconds, peak RSS MB, stdout), or None when it
    fails or runs past `timeout`."""
    start = time.perf_counter()
    with tempfile.TemporaryFile() as out:
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.DEVNULL)
        deadline = start + timeout
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            if time.perf_counter() > deadline:
                proc.kill()
                os.wait4(proc.pid, 0)
                return None
            time.sleep(0.01)
        seconds = time.perf_counter() - start
        if os.waitstatus_to_exitcode(status) != 0:
            sys.exit(f"failed: {' '.join(map(str, cmd))}")
        out.seek(0)
        return seconds, usage.ru_maxrss / 1024, out.read().decode()


def measure(path, n, work, build, timeout):
    if path == "opt":
        cmd = [build / "bin" / "paddle-opt", work / f"chain{n}.mlir",
               "--paddle-cpu-pipeline", "-o", os.devnull]
    elif path == "run":
        cmd = [build / "bin" / "paddle-run", work / f"chain{n}.mlir", "--input",
               work / "x.npy", "--input", work / "w.npy", "--output-dir", work / "out"]
    else:
        cmd = [sys.executable, __file__, "--onnx-worker", work / f"chain{n}.onnx",
               "--build", build]
    result = run_child([str(c) for c in cmd], timeout)
    if result is None:
        return None
    seconds, mb, out = result
    if path == "onnx":
        seconds = json.loads(out.strip().splitlines()[-1])["seconds"]
    return seconds, mb


def cpu_name():
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return "unknown"


def ratios(sizes, values):
    """value(n) / value(n / 2) for each n whose half was measured."""
    got = dict(zip(sizes, values))
    return {n: got[n] / got[n // 2] for n in sizes
            if n % 2 == 0 and got.get(n) and got.get(n // 2)}


def table(results, paths, sizes):
    lines = ["| ops | " + " | ".join(f"{p} s | {p} MB" for p in paths) + " |",
             "|---:|" + "---:|---:|" * len(paths)]
    for i, n in enumerate(sizes):
        cells = []
        for p in paths:
            s, mb = results[p]["seconds"][i], results[p]["mb"][i]
            cells += [f"{s:.2f}" if s else f"> {results['timeout']:.0f}",
                      f"{mb:.0f}" if mb else "-"]
        lines.append(f"| {n} | " + " | ".join(cells) + " |")
    lines += ["", "Time for 2x the ops (n / n/2):", "",
              "| ops | " + " | ".join(paths) + " |", "|---:|" + "---:|" * len(paths)]
    rs = {p: ratios(sizes, results[p]["seconds"]) for p in paths}
    for n in sizes:
        if any(n in rs[p] for p in paths):
            lines.append(f"| {n // 2} -> {n} | " + " | ".join(
                f"{rs[p][n]:.2f}" if n in rs[p] else "-" for p in paths) + " |")
    return "\n".join(lines)


def svg(results, before=None):
    """Two log-log panels, seconds and MB against ops; `before` dashed."""
    width, height, pad = 960, 420, (70, 20, 50, 60)  # left right top bottom
    panel_w = (width - 40) // 2
    runs = [r for r in (before, results) if r]
    all_sizes = [n for r in runs for n in r["sizes"]]

    def series(r, path, key):
        return [(n, v) for n, v in zip(r["sizes"], r[path][key]) if v]

    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           'font-family="sans-serif" font-size="12">',
           f'<rect width="{width}" height="{height}" fill="white"/>',
           f'<text x="{width / 2}" y="20" text-anchor="middle" font-size="14">'
           f'Compile time and peak memory of an n-op chain ({results["cpu"]})</text>']
    for k, (key, unit) in enumerate((("seconds", "s"), ("mb", "MB"))):
        x0 = 20 + k * (panel_w + 20) + pad[0]
        x1 = 20 + (k + 1) * panel_w + k * 20 - pad[1]
        y0, y1 = height - pad[3], pad[2]
        values = [v for r in runs for p in r["paths"] for _, v in series(r, p, key)]
        lo_x, hi_x = math.log10(min(all_sizes)), math.log10(max(all_sizes))
        lo_y = math.floor(math.log10(min(values)))
        hi_y = math.ceil(math.log10(max(values)))

        def px(n):
            return x0 + (x1 - x0) * (math.log10(n) - lo_x) / (hi_x - lo_x)

        def py(v):
            return y0 - (y0 - y1) * (math.log10(v) - lo_y) / (hi_y - lo_y)

        out.append(f'<rect x="{x0}" y="{y1}" width="{x1 - x0}" height="{y0 - y1}" '
                   'fill="none" stroke="#999"/>')
        for e in range(lo_y, hi_y + 1):
            for m in (1, 2, 5):
                v = m * 10 ** e
                if 10 ** lo_y <= v <= 10 ** hi_y:
                    out.append(f'<line x1="{x0}" x2="{x1}" y1="{py(v):.1f}" y2="{py(v):.1f}" '
                               f'stroke="#eee"/><text x="{x0 - 5}" y="{py(v) + 4:.1f}" '
                               f'text-anchor="end">{v:g}</text>')
        last_label = 1e9
        for n in sorted(set(all_sizes), reverse=True):
            if last_label - px(n) < 36:
                continue  # too close to the label on its right
            last_label = px(n)
            out.append(f'<text x="{px(n):.1f}" y="{y0 + 16}" text-anchor="middle">{n}</text>')
        out.append(f'<text x="{(x0 + x1) / 2}" y="{y0 + 34}" text-anchor="middle">ops</text>')
        out.append(f'<text x="{x0 - 50}" y="{(y0 + y1) / 2}" text-anchor="middle" '
                   f'transform="rotate(-90 {x0 - 50} {(y0 + y1) / 2})">{unit}</text>')
        # Time proportional to the ops, through this run's first point of
        # its first path: what linear scaling looks like.
        first = series(results, results["paths"][0], key)
        if first and key == "seconds":
            n0, v0 = first[0]
            n1 = max(all_sizes)
            out.append(f'<line x1="{px(n0):.1f}" y1="{py(v0):.1f}" x2="{px(n1):.1f}" '
                       f'y2="{py(v0 * n1 / n0):.1f}" stroke="#aaa" stroke-dasharray="2,3"/>'
                       f'<text x="{px(n1) - 4:.1f}" y="{py(v0 * n1 / n0) - 6:.1f}" '
                       f'text-anchor="end" fill="#888">linear</text>')
        for r in runs:
            dash = ' stroke-dasharray="5,4"' if r is before else ""
            for p in r["paths"]:
                pts = series(r, p, key)
                if len(pts) > 1:
                    coords = " ".join(f"{px(n):.1f},{py(v):.1f}" for n, v in pts)
                    out.append(f'<polyline points="{coords}" fill="none" '
                               f'stroke="{COLORS[p]}" stroke-width="2"{dash}/>')
                for n, v in pts:
                    out.append(f'<circle cx="{px(n):.1f}" cy="{py(v):.1f}" r="3" '
                               f'fill="{COLORS[p]}"/>')
    # Legend.
    y = height - 12
    x = 40
    for p in results["paths"]:
        out.append(f'<line x1="{x}" x2="{x + 24}" y1="{y - 4}" y2="{y - 4}" '
                   f'stroke="{COLORS[p]}" stroke-width="2"/>'
                   f'<text x="{x + 30}" y="{y}">{LABELS[p]}</text>')
        x += 60 + 7 * len(LABELS[p])
    if before:
        out.append(f'<line x1="{x}" x2="{x + 24}" y1="{y - 4}" y2="{y - 4}" stroke="#666" '
                   f'stroke-width="2" stroke-dasharray="5,4"/><text x="{x + 30}" y="{y}">'
                   f'before ({before["label"]})</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", type=Path, default=REPO / "build")
    ap.add_argument("--sizes", default="250,500,1000,2000,4000,5000,8000,10000")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--paths", default=",".join(PATHS))
    ap.add_argument("--timeout", type=float, default=600)
    ap.add_argument("--label", help="name of this run in the picture (default: the build)")
    ap.add_argument("--json", type=Path, help="write the results here")
    ap.add_argument("--svg", type=Path, help="draw the curves here")
    ap.add_argument("--before", type=Path, help="an earlier --json run, drawn dashed")
    ap.add_argument("--best-of", type=Path, nargs="+",
                    help="runs (--json) to merge instead of measuring")
    ap.add_argument("--onnx-worker", type=Path, help=argparse.SUPPRESS)
    args = ap.parse_args()
    build = args.build.resolve()
    if args.onnx_worker:
        return onnx_worker(args.onnx_worker, build)
    if args.best_of:
        return report(best_of([json.loads(p.read_text()) for p in args.best_of]),
                      args)

    import numpy as np
    sizes = [int(s) for s in args.sizes.split(",")]
    paths = args.paths.split(",")
    work = Path(tempfile.mkdtemp(prefix="compile-scaling-"))
    rng = np.random.default_rng(0)
    x = rng.uniform(-2, 2, size=(SIZE, SIZE)).astype(np.float32)
    w = np.linalg.qr(rng.standard_normal((SIZE, SIZE)))[0].astype(np.float32)
    np.save(work / "x.npy", x)
    np.save(work / "w.npy", w)
    import onnx
    for n in sizes:
        (work / f"chain{n}.mlir").write_text(chain_mlir(n))
        if "onnx" in paths:
            onnx.save(chain_onnx(n, w), work / f"chain{n}.onnx")

    results = {"cpu": cpu_name(), "label": args.label or str(build), "sizes": sizes,
               "paths": paths, "reps": args.reps, "timeout": args.timeout,
               "load_before": os.getloadavg()[0]}
    for p in paths:
        results[p] = {"seconds": [], "mb": []}
    for n in sizes:
        for p in paths:
            samples = []
            for _ in range(args.reps):
                got = measure(p, n, work, build, args.timeout)
                if got is None:
                    samples = []
                    break
                samples.append(got)
            results[p]["seconds"].append(
                statistics.median(s for s, _ in samples) if samples else None)
            results[p]["mb"].append(
                statistics.median(m for _, m in samples) if samples else None)
            s = results[p]["seconds"][-1]
            print(f"{p:4} {n:6} ops: " + (f"{s:8.2f} s {results[p]['mb'][-1]:6.0f} MB"
                                          if s else f"> {args.timeout:.0f} s"),
                  file=sys.stderr, flush=True)
    results["load_after"] = os.getloadavg()[0]
    report(results, args)


def best_of(runs):
    """Each point's lowest median over `runs` (same sizes and paths)."""
    best = dict(runs[0])
    best["runs"] = len(runs)
    best["load_before"] = min(r["load_before"] for r in runs)
    best["load_after"] = max(r["load_after"] for r in runs)
    for p in best["paths"]:
        best[p] = {}
        for key in ("seconds", "mb"):
            points = zip(*(r[p][key] for r in runs))
            best[p][key] = [min((v for v in vs if v), default=None) for vs in points]
    return best


def report(results, args):
    runs = results.get("runs", 1)
    print(f"CPU: {results['cpu']}; load average {results['load_before']:.2f} before, "
          f"{results['load_after']:.2f} after; median of {results['reps']} fresh "
          f"processes" + (f", the lowest of {runs} runs" if runs > 1 else "") + "\n")
    print(table(results, results["paths"], results["sizes"]))
    if args.json:
        args.json.write_text(json.dumps(results, indent=1) + "\n")
    if args.svg:
        before = json.loads(args.before.read_text()) if args.before else None
        args.svg.write_text(svg(results, before))


if __name__ == "__main__":
    main()
