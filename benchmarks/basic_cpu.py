"""Baseline CPU timings of compiled paddle modules next to numpy.

One run, interleaved: for each workload the module is JIT-compiled once by
paddle-run and timed over --bench N calls (median), and numpy runs the same
computation in process (median of N). Reports the ratio paddle / numpy
(below 1 means faster than numpy). Not a test: timings on a 2-core machine
are noisy; rerun to compare.

    .venv/bin/python benchmarks/basic_cpu.py [--runs 50] [--markdown]
        [--threads 1,2] [--no-tile]

With --threads, paddle runs once per thread count (paddle-run --threads N)
and the table adds the speedup of the last count over the first.
"""

import argparse
import math
import subprocess
import tempfile
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
PADDLE_RUN = REPO / "build" / "bin" / "paddle-run"


def paddle_median_ms(text, inputs, runs, tmp, threads=None, flags=()):
    module = tmp / "m.mlir"
    module.write_text(text)
    args = []
    for i, x in enumerate(inputs):
        np.save(tmp / f"in{i}.npy", x)
        args += ["--input", str(tmp / f"in{i}.npy")]
    if threads is not None:
        args += ["--threads", str(threads)]
    args += list(flags)
    out = subprocess.run([str(PADDLE_RUN), str(module), *args, "--bench", str(runs)],
                         capture_output=True, text=True, check=True).stdout
    return float(out.split("median ")[1].split(" ms")[0])


def numpy_median_ms(fn, inputs, runs):
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        fn(*inputs)
        times.append((time.perf_counter() - t) * 1e3)
    return float(np.median(times))


def erf(x):
    return np.vectorize(math.erf, otypes=[np.float32])(x)


def workloads(rng):
    f = np.float32
    big = rng.standard_normal((1024, 1024)).astype(f)
    yield ("add+tanh 1024x1024", """
func.func @main(%a: tensor<?x?xf32>, %b: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %0 = paddle.add %a, %b : tensor<?x?xf32>, tensor<?x?xf32> -> tensor<?x?xf32>
  %1 = paddle.tanh %0 : tensor<?x?xf32> -> tensor<?x?xf32>
  return %1 : tensor<?x?xf32>
}""", [big, big], lambda a, b: np.tanh(a + b))
    yield ("softmax 256x1000", """
func.func @main(%x: tensor<?x1000xf32>) -> tensor<?x1000xf32> {
  %0 = paddle.softmax %x axis = -1 : tensor<?x1000xf32> -> tensor<?x1000xf32>
  return %0 : tensor<?x1000xf32>
}""", [rng.standard_normal((256, 1000)).astype(f)],
          lambda x: (lambda e: e / e.sum(-1, keepdims=True))(np.exp(x - x.max(-1, keepdims=True))))
    a = rng.standard_normal((256, 256)).astype(f)
    yield ("matmul 256x256x256", """
func.func @main(%a: tensor<256x256xf32>, %b: tensor<256x256xf32>) -> tensor<256x256xf32> {
  %0 = paddle.matmul %a, %b : tensor<256x256xf32>, tensor<256x256xf32> -> tensor<256x256xf32>
  return %0 : tensor<256x256xf32>
}""", [a, a], lambda x, y: x @ y)
    mlp_text = (REPO / "examples" / "mlp" / "mlp.mlir").read_text()
    x = rng.standard_normal((32, 64)).astype(f)
    w1 = rng.standard_normal((64, 128)).astype(f)
    b1 = rng.standard_normal(128).astype(f)
    w2 = rng.standard_normal((128, 10)).astype(f)
    b2 = rng.standard_normal(10).astype(f)

    def mlp(x, w1, b1, w2, b2):
        h = x @ w1 + b1
        a = 0.5 * h * (1 + erf(h / np.float32(math.sqrt(2))))
        logits = a @ w2 + b2
        e = np.exp(logits - logits.max(1, keepdims=True))
        p = e / e.sum(1, keepdims=True)
        return p, p.argmax(1)
    yield ("MLP demo (batch 32)", mlp_text, [x, w1, b1, w2, b2], mlp)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=50)
    parser.add_argument("--markdown", action="store_true")
    parser.add_argument("--threads", default="",
                        help="comma-separated thread counts, e.g. 1,2")
    parser.add_argument("--no-tile", action="store_true",
                        help="compile with paddle-run --tile-and-vectorize=0 "
                             "(scalar loops, to compare)")
    args = parser.parse_args()
    counts = [int(t) for t in args.threads.split(",") if t] or [None]
    rng = np.random.default_rng(0)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, text, inputs, fn in workloads(rng):
            flags = ["--tile-and-vectorize=0"] if args.no_tile else []
            ps = [paddle_median_ms(text, inputs, args.runs, Path(tmp), t, flags)
                  for t in counts]
            n = numpy_median_ms(fn, inputs, args.runs)
            rows.append((name, ps, n))
    labels = ["paddle-run" if t is None else f"paddle {t} thr" for t in counts]
    if args.markdown:
        head = " | ".join(f"{label} median ms" for label in labels)
        extra = f" | speedup {counts[0]} -> {counts[-1]}" if len(counts) > 1 else ""
        print(f"| workload | {head} | numpy median ms | paddle / numpy{extra} |")
        print("| --- |" + " ---: |" * (len(counts) + 2 + (len(counts) > 1)))
        for name, ps, n in rows:
            cells = " | ".join(f"{p:.3f}" for p in ps)
            speed = f" | {ps[0] / ps[-1]:.2f}x" if len(counts) > 1 else ""
            print(f"| {name} | {cells} | {n:.3f} | {ps[-1] / n:.2f}x{speed} |")
    else:
        for name, ps, n in rows:
            cells = "   ".join(f"{label} {p:9.3f} ms" for label, p in zip(labels, ps))
            speed = f"   speedup {ps[0] / ps[-1]:5.2f}x" if len(counts) > 1 else ""
            print(f"{name:24s} {cells}   numpy {n:9.3f} ms   ratio {ps[-1] / n:6.2f}x{speed}")


if __name__ == "__main__":
    main()
