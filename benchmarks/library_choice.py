"""The library choice (paddle-use-onednn) against measurement.

For each matmul and convolution: the path the cost model picks (the
"library choice" line of paddle-cost-report, which applies the same rule as
paddle-use-onednn; the CPU pipeline's actual choice is checked against it
for the default spec) and both measured times, paddle-run --library=onednn
vs --library=none, 1 thread, min of --bench N calls (the least disturbed
call on a shared machine). Not a test: nothing here gates.

    .venv/bin/python benchmarks/library_choice.py [--spec local.json]
        [--budget 2.0] [--markdown]

--spec: a second device spec (e.g. written by paddle-calibrate here) whose
choice is reported next to the built-in default's.
"""

import argparse
import re
import subprocess
import tempfile
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
BIN = REPO / "build" / "bin"

# (m, k, n): benchmarks/peers/workloads.py GEMM_SHAPES plus small ones.
GEMMS = [(8, 8, 8), (16, 64, 16), (32, 32, 32), (64, 64, 64), (40, 40, 40),
         (256, 256, 256), (512, 512, 512), (1024, 1024, 1024), (2048, 2048, 2048),
         (1, 4096, 4096), (64, 4096, 1024), (128, 768, 3072)]
# (batch, c_in, hw, c_out, kernel, padding)
CONVS = [(1, 8, 8, 8, 3, 1), (1, 3, 32, 16, 3, 1), (1, 32, 28, 64, 1, 0),
         (1, 64, 56, 64, 3, 1), (1, 256, 14, 256, 3, 1)]


def t(shape):
    return "tensor<" + "x".join(map(str, shape)) + "xf32>"


def gemm(m, k, n):
    a, b, c = t((m, k)), t((k, n)), t((m, n))
    text = (f"func.func @main(%a: {a}, %b: {b}) -> {c} {{\n"
            f"  %0 = paddle.matmul %a, %b : {a}, {b} -> {c}\n  return %0 : {c}\n}}\n")
    return f"gemm {m}x{k}x{n}", text, [(m, k), (k, n)], 2.0 * m * n * k


def conv(nb, c, hw, f, k, p):
    o = hw + 2 * p - k + 1
    x, w, y = t((nb, c, hw, hw)), t((f, c, k, k)), t((nb, f, o, o))
    text = (f"func.func @main(%x: {x}, %w: {w}) -> {y} {{\n"
            f"  %0 = paddle.conv2d %x, %w {{padding = array<i64: {p}, {p}, {p}, {p}>}}"
            f" : {x}, {w} -> {y}\n  return %0 : {y}\n}}\n")
    return (f"conv {k}x{k} {c}->{f} {hw}x{hw}", text, [(nb, c, hw, hw), (f, c, k, k)],
            2.0 * nb * f * o * o * c * k * k)


def model_choice(module, device):
    out = subprocess.run([str(BIN / "paddle-opt"), str(module),
                          f"--paddle-set-target=device={device}", "--paddle-cost-report",
                          "-o", "/dev/null"],
                         capture_output=True, text=True, check=True).stdout
    m = re.search(r"library choice: onednn ([\d.]+) us, codegen \((\w+)\) ([\d.]+) us -> (\w+)", out)
    return float(m.group(1)), m.group(2), float(m.group(3)), m.group(4)


def pipeline_choice(module):
    out = subprocess.run([str(BIN / "paddle-opt"), str(module), "--paddle-cpu-pipeline"],
                         capture_output=True, text=True, check=True).stdout
    return "onednn" if "paddle_onednn_" in out else "codegen"


def measure(module, inputs, library, runs):
    out = subprocess.run([str(BIN / "paddle-run"), str(module), *inputs, "--threads", "1",
                          f"--library={library}", "--bench", str(runs)],
                         capture_output=True, text=True, check=True).stdout
    return float(out.split("min ")[1].split(" ms")[0]) * 1e3  # us


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--spec", default=None)
    parser.add_argument("--budget", type=float, default=2.0,
                        help="seconds of calls per path and workload (at least 3 calls)")
    parser.add_argument("--markdown", action="store_true")
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    rows = []
    with tempfile.TemporaryDirectory() as tmpdir:
        tmp = Path(tmpdir)
        for name, text, shapes, flops in [gemm(*g) for g in GEMMS] + [conv(*c) for c in CONVS]:
            module = tmp / "m.mlir"
            module.write_text(text)
            inputs = []
            for i, s in enumerate(shapes):
                np.save(tmp / f"in{i}.npy", rng.standard_normal(s).astype(np.float32))
                inputs += ["--input", str(tmp / f"in{i}.npy")]
            lib_pred, kind, ours_pred, pick = model_choice(module, "xeon-amx-2c")
            actual = pipeline_choice(module)
            assert actual == pick, f"{name}: pipeline chose {actual}, report {pick}"
            local = model_choice(module, args.spec)[3] if args.spec else None
            times = {}
            for library in ["onednn", "none"]:
                once = measure(module, inputs, library, 1)
                runs = int(max(3, min(200, args.budget * 1e6 / max(once, 1.0))))
                times[library] = measure(module, inputs, library, runs)
            faster = "onednn" if times["onednn"] < times["none"] else "codegen"
            rows.append((name, kind, lib_pred, ours_pred, pick, local,
                         times["onednn"], times["none"], faster, flops))
            print(rows[-1], flush=True)

    def verdict(choice, r):
        chosen = r[6] if choice == "onednn" else r[7]
        best = min(r[6], r[7])
        return "yes" if choice == r[8] else f"no ({chosen / best:.2f}x)"

    header = ["op", "ours", "model: oneDNN us", "model: ours us", "model picks",
              "oneDNN us (measured)", "ours us (measured)", "faster", "right?"]
    if args.spec:
        header += ["local spec picks", "right?"]
    print()
    print("| " + " | ".join(header) + " |")
    print("|" + " --- |" * len(header))
    right = right_local = 0
    for r in rows:
        cells = [r[0], r[1], f"{r[2]:.1f}", f"{r[3]:.1f}", r[4], f"{r[6]:.1f}",
                 f"{r[7]:.1f}", r[8], verdict(r[4], r)]
        right += r[4] == r[8]
        if args.spec:
            cells += [r[5], verdict(r[5], r)]
            right_local += r[5] == r[8]
        print("| " + " | ".join(cells) + " |")
    print(f"\nbuilt-in spec: right for {right} of {len(rows)}")
    if args.spec:
        print(f"local spec: right for {right_local} of {len(rows)}")


if __name__ == "__main__":
    main()
