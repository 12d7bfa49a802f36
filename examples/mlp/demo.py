"""The README's main job: compile and run a small model end to end.

1. Lower examples/mlp/mlp.mlir with paddle-opt (to linalg, and all the way
   to the LLVM dialect with paddle-cpu-pipeline), printing what each stage
   holds.
2. Run it with paddle-run (JIT) on random weights and a batch of inputs,
   with --bench for latency.
3. Compile it ahead of time into a standalone executable (paddle-compile
   --emit exe), run it, and check its outputs equal the JIT's bit for bit.
4. Check the outputs against numpy (rtol 1e-5) and print the predictions.
"""

import math
import re
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[2]
BIN = REPO / "build" / "bin"
MODEL = REPO / "examples" / "mlp" / "mlp.mlir"


def run(cmd):
    proc = subprocess.run([str(c) for c in cmd], capture_output=True, text=True)
    if proc.returncode != 0:
        sys.exit(f"demo: command failed: {' '.join(map(str, cmd))}\n{proc.stderr}")
    return proc.stdout


def op_histogram(ir):
    ops = re.findall(r"^\s*(?:%\S+(?:, %\S+)* = )?\"?([a-z_]+\.[a-z_.]+)", ir, re.M)
    ops = [o for o in ops if not o.startswith(("func.", "arith.constant"))]
    return ", ".join(f"{n} x{c}" for n, c in Counter(ops).most_common(6))


def reference(x, w1, b1, w2, b2):
    h = x.astype(np.float64) @ w1 + b1
    erf = np.vectorize(math.erf)
    a = 0.5 * h * (1 + erf(h / math.sqrt(2)))
    logits = a @ w2 + b2
    e = np.exp(logits - logits.max(axis=1, keepdims=True))
    p = e / e.sum(axis=1, keepdims=True)
    return p, p.argmax(axis=1)


def main():
    rng = np.random.default_rng(0)
    batch = 32
    x = rng.standard_normal((batch, 64)).astype(np.float32)
    w1 = (rng.standard_normal((64, 128)) / 8).astype(np.float32)
    b1 = (rng.standard_normal(128) / 10).astype(np.float32)
    w2 = (rng.standard_normal((128, 10)) / 11).astype(np.float32)
    b2 = (rng.standard_normal(10) / 10).astype(np.float32)

    print(f"== model: {MODEL.relative_to(REPO)}")
    print("   paddle ops:  " + op_histogram(MODEL.read_text()))
    linalg = run([BIN / "paddle-opt", MODEL, "--paddle-convert-paddle-to-linalg"])
    print("   -> linalg:   " + op_histogram(linalg))
    llvm = run([BIN / "paddle-opt", MODEL, "--paddle-cpu-pipeline"])
    print(f"   -> LLVM dialect: {llvm.count(chr(10))} lines "
          "(paddle-opt --paddle-cpu-pipeline)")

    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        args = []
        for name, value in [("x", x), ("w1", w1), ("b1", b1), ("w2", w2), ("b2", b2)]:
            np.save(tmp / f"{name}.npy", value)
            args += ["--input", tmp / f"{name}.npy"]
        print(f"== paddle-run (JIT) on a batch of {batch}")
        out = run([BIN / "paddle-run", MODEL, *args, "--output-dir", tmp / "out",
                   "--bench", "50"])
        print("   " + out.strip())
        probs = np.load(tmp / "out" / "mlp_0.npy")
        classes = np.load(tmp / "out" / "mlp_1.npy")

        print("== paddle-compile --emit exe (ahead of time)")
        exe = tmp / "mlp"
        run([BIN / "paddle-compile", MODEL, "-o", exe, "--emit", "exe"])
        out = run([exe, *args, "--output-dir", tmp / "aot", "--bench", "50"])
        print(f"   {exe.name}: {exe.stat().st_size / 1024:.0f} KiB, "
              "links only libc/libstdc++/libm")
        print("   " + out.strip())
        same_bits = all(
            np.load(tmp / "aot" / f"mlp_{i}.npy").tobytes()
            == np.load(tmp / "out" / f"mlp_{i}.npy").tobytes() for i in range(2))
        print(f"   outputs bitwise equal to the JIT's: {same_bits}")
        if not same_bits:
            sys.exit("demo: FAILED: AOT and JIT outputs differ")

    ref_p, ref_c = reference(x, w1, b1, w2, b2)
    err = np.abs(probs - ref_p).max()
    print(f"== check against numpy: max |error| = {err:.2e} (tolerance 1e-5)")
    print(f"   predicted classes: {classes[:16].tolist()} ...")
    same = int((classes == ref_c).sum())
    print(f"   argmax agrees with numpy on {same}/{batch} rows")
    if err > 1e-5 or same != batch:
        sys.exit("demo: FAILED: outputs differ from numpy")
    print("demo: OK")


if __name__ == "__main__":
    main()
