"""fp32 GEMM through paddle-run: tiled + vectorized vs the scalar loops.

For each square size, a static `paddle.matmul` is JIT-compiled by paddle-run
with and without paddle-tile-and-vectorize (--tile-and-vectorize=0) and timed
with --bench (median), at each thread count; the result is checked against
numpy (relative max error printed). Not a test; timings on the shared 2-core
machine are noisy.

    .venv/bin/python benchmarks/gemm_tiling.py [--sizes 256,512,1024,2048]
        [--threads 1,2] [--peak 206]

--peak is the per-core fp32 peak in GFLOP/s for the "% peak" column (per
core times threads).
"""

import argparse
import subprocess
import tempfile
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
PADDLE_RUN = REPO / "build" / "bin" / "paddle-run"


def run(tmp, n, threads, flags, runs):
    ty = f"tensor<{n}x{n}xf32>"
    (tmp / "m.mlir").write_text(
        f"func.func @main(%a: {ty}, %b: {ty}) -> {ty} {{\n"
        f"  %0 = paddle.matmul %a, %b : {ty}, {ty} -> {ty}\n"
        f"  return %0 : {ty}\n}}\n")
    out = subprocess.run(
        [str(PADDLE_RUN), str(tmp / "m.mlir"), "--input", str(tmp / "a.npy"),
         "--input", str(tmp / "b.npy"), "--threads", str(threads),
         "--output-dir", str(tmp / "out"), "--bench", str(runs), *flags],
        capture_output=True, text=True, check=True).stdout
    return float(out.split("median ")[1].split(" ms")[0]), np.load(tmp / "out" / "main_0.npy")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="256,512,1024,2048")
    parser.add_argument("--threads", default="1,2")
    parser.add_argument("--peak", type=float, default=206.0)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    print("| n | threads | path | median ms | GFLOP/s | % peak | rel. error |")
    print("| ---: | ---: | --- | ---: | ---: | ---: | ---: |")
    for n in [int(s) for s in args.sizes.split(",")]:
        with tempfile.TemporaryDirectory() as d:
            tmp = Path(d)
            a = rng.standard_normal((n, n)).astype(np.float32)
            b = rng.standard_normal((n, n)).astype(np.float32)
            np.save(tmp / "a.npy", a)
            np.save(tmp / "b.npy", b)
            ref = a.astype(np.float64) @ b.astype(np.float64)
            for threads in [int(t) for t in args.threads.split(",")]:
                for name, flags in (("scalar", ["--tile-and-vectorize=0"]), ("tiled", [])):
                    # The scalar path runs at about 1 GFLOP/s: few repetitions.
                    runs = (1 if name == "scalar" else 3) if n >= 1024 else 10
                    ms, out = run(tmp, n, threads, flags, runs)
                    gflops = 2 * n**3 / ms / 1e6
                    err = np.abs(out - ref).max() / np.abs(ref).max()
                    print(f"| {n} | {threads} | {name} | {ms:.2f} | {gflops:.1f} | "
                          f"{100 * gflops / (args.peak * threads):.1f}% | {err:.1e} |",
                          flush=True)


if __name__ == "__main__":
    main()
