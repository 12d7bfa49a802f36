"""GEMM and convolution: our generated loops vs the oneDNN library path vs numpy.

For each workload and thread count, one run, interleaved: paddle-run
JIT-compiles the module with --library=none (our loops) and with
--library=onednn (paddle-use-onednn: a oneDNN call), and times --bench N
calls (median and min, in the tool, so no Python or file overhead);
numpy (its BLAS, limited to the same thread count) runs the same
computation N times in a subprocess. GFLOP/s and % of the fp32 FMA peak
(206 GFLOP/s per core, docs/performance.md) per thread count. Not a test.

    .venv/bin/python benchmarks/onednn_gemm.py [--runs 10] [--threads 1,2]
        [--sizes 256,512,1024,2048] [--max-ours 1024] [--markdown]

--max-ours: our loops on larger GEMMs take seconds per call; above this
size only oneDNN and numpy run.
"""

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
PADDLE_RUN = REPO / "build" / "bin" / "paddle-run"
PEAK_PER_CORE = 206.0  # GFLOP/s, fp32 FMA (docs/performance.md)

NUMPY_TIMER = r"""
import json, sys, time
import numpy as np
spec = json.loads(sys.argv[1])
rng = np.random.default_rng(0)
if spec["kind"] == "gemm":
    n = spec["n"]
    a = rng.standard_normal((n, n), dtype=np.float32)
    b = rng.standard_normal((n, n), dtype=np.float32)
    fn = lambda: a @ b
else:
    # conv2d as numpy users write it: im2col + one GEMM.
    from numpy.lib.stride_tricks import sliding_window_view
    n, c, h, w = spec["x"]; o, _, k, _ = spec["w"]; p = spec["pad"]
    x = rng.standard_normal((n, c, h, w), dtype=np.float32)
    wt = rng.standard_normal((o, c * k * k), dtype=np.float32)
    def fn():
        xp = np.pad(x, ((0, 0), (0, 0), (p, p), (p, p)))
        cols = sliding_window_view(xp, (k, k), axis=(2, 3))  # n c oh ow k k
        cols = cols.transpose(0, 2, 3, 1, 4, 5).reshape(n * h * w, c * k * k)
        return (cols @ wt.T).reshape(n, h, w, o).transpose(0, 3, 1, 2)
fn()
times = []
for _ in range(spec["runs"]):
    t = time.perf_counter(); fn(); times.append((time.perf_counter() - t) * 1e3)
times.sort()
print(json.dumps([times[len(times) // 2], times[0]]))
"""


def numpy_ms(spec, runs, threads):
    env = {"OPENBLAS_NUM_THREADS": str(threads), "OMP_NUM_THREADS": str(threads),
           "MKL_NUM_THREADS": str(threads), "PATH": "/usr/bin:/bin"}
    out = subprocess.run([sys.executable, "-c", NUMPY_TIMER, json.dumps({**spec, "runs": runs})],
                         capture_output=True, text=True, check=True, env=env).stdout
    return json.loads(out)


def paddle_ms(text, inputs, runs, threads, library, tmp):
    module = tmp / "m.mlir"
    module.write_text(text)
    args = []
    for i, x in enumerate(inputs):
        np.save(tmp / f"in{i}.npy", x)
        args += ["--input", str(tmp / f"in{i}.npy")]
    out = subprocess.run([str(PADDLE_RUN), str(module), *args, "--threads", str(threads),
                          f"--library={library}", "--bench", str(runs)],
                         capture_output=True, text=True, check=True).stdout
    median = float(out.split("median ")[1].split(" ms")[0])
    best = float(out.split("min ")[1].split(" ms")[0])
    return [median, best]


def workloads(sizes, rng):
    f = np.float32
    for n in sizes:
        t = f"tensor<{n}x{n}xf32>"
        text = (f"func.func @main(%a: {t}, %b: {t}) -> {t} {{\n"
                f"  %0 = paddle.matmul %a, %b : {t}, {t} -> {t}\n  return %0 : {t}\n}}\n")
        inputs = [rng.standard_normal((n, n)).astype(f) for _ in range(2)]
        yield f"GEMM {n}^3", n, text, inputs, 2.0 * n ** 3, {"kind": "gemm", "n": n}
    # A ResNet-50 stage-3 3x3 conv (batch 1, 256 -> 256 channels, 14x14).
    x, w, pad = (1, 256, 14, 14), (256, 256, 3, 3), 1
    tx, tw = "tensor<1x256x14x14xf32>", "tensor<256x256x3x3xf32>"
    text = (f"func.func @main(%x: {tx}, %w: {tw}) -> {tx} {{\n"
            f"  %0 = paddle.conv2d %x, %w {{padding = array<i64: 1, 1, 1, 1>}} : {tx}, {tw} -> {tx}\n"
            f"  return %0 : {tx}\n}}\n")
    inputs = [rng.standard_normal(x).astype(f), (rng.standard_normal(w) / 48).astype(f)]
    flops = 2.0 * 14 * 14 * 256 * 256 * 9
    yield "conv 3x3 256->256 14x14", 0, text, inputs, flops, \
        {"kind": "conv", "x": list(x), "w": list(w), "pad": pad}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--threads", default="1,2")
    parser.add_argument("--sizes", default="256,512,1024,2048")
    parser.add_argument("--max-ours", type=int, default=1024)
    parser.add_argument("--markdown", action="store_true")
    args = parser.parse_args()
    threads = [int(t) for t in args.threads.split(",")]
    sizes = [int(s) for s in args.sizes.split(",")]
    rng = np.random.default_rng(0)
    rows = []
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        for name, n, text, inputs, flops, spec in workloads(sizes, rng):
            for t in threads:
                row = {"workload": name, "threads": t}
                if n <= args.max_ours:
                    row["ours"] = paddle_ms(text, inputs, args.runs, t, "none", tmp)
                row["onednn"] = paddle_ms(text, inputs, args.runs, t, "onednn", tmp)
                row["numpy"] = numpy_ms(spec, args.runs, t)
                row["flops"] = flops
                rows.append(row)
                print(json.dumps(row), file=sys.stderr, flush=True)

    def cell(row, key):
        if key not in row:
            return "-"
        median, best = row[key]
        gflops = row["flops"] / median / 1e6
        pct = 100 * gflops / (PEAK_PER_CORE * row["threads"])
        return f"{median:.3f} / {best:.3f} ms, {gflops:.1f} GFLOP/s ({pct:.0f}%)"

    header = ["workload", "threads", "ours (--library=none)", "oneDNN (--library=onednn)",
              "numpy", "oneDNN / ours"]
    if args.markdown:
        print("| " + " | ".join(header) + " |")
        print("|" + "---|" * len(header))
    for row in rows:
        speedup = f"{row['ours'][0] / row['onednn'][0]:.1f}x" if "ours" in row else "-"
        cells = [row["workload"], str(row["threads"]), cell(row, "ours"), cell(row, "onednn"),
                 cell(row, "numpy"), speedup]
        print(("| " + " | ".join(cells) + " |") if args.markdown else "  ".join(cells))


if __name__ == "__main__":
    main()
