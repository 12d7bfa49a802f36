"""Train a small CNN on scikit-learn's digits through the compiler, then
deploy it ahead of time.

1. Loads the 8x8 digits (sklearn.datasets.load_digits, 1797 images), a
   fixed 80/20 train/test split.
2. Trains a CNN with pm.nn / pm.optim: every step (forward, backward, Adam
   update, BatchNorm running stats, Dropout counter) is ONE compiled
   function that updates the model's numpy arrays in place.
3. Prints loss and test accuracy per epoch with a progress bar.
4. Saves the trained eval-mode model as MLIR bytecode (digits.mlirbc),
   runs it through paddle-run (JIT) and a paddle-compile'd executable (AOT)
   and checks both predict exactly what Python predicted.

Seeded and deterministic. Usage:
    python examples/train_digits.py [--epochs N] [--out DIR] [--model cnn|mlp]
"""

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
BUILD = Path(os.environ.get("PADDLE_BUILD_DIR", REPO / "build"))
sys.path.insert(0, str(REPO / "python"))
os.environ.setdefault("PADDLE_BUILD_DIR", str(BUILD))

from paddle_mlir import nn, optim  # noqa: E402


def load_data(seed=0):
    from sklearn.datasets import load_digits

    digits = load_digits()
    x = (digits.images / 16.0).astype(np.float32)[:, None, :, :]  # [N, 1, 8, 8] in [0, 1]
    y = digits.target.astype(np.int64)
    order = np.random.default_rng(seed).permutation(len(y))
    n_test = len(y) // 5
    test, train = order[:n_test], order[n_test:]
    return x[train], y[train], x[test], y[test]


def make_model(kind):
    nn.manual_seed(0)
    if kind == "mlp":
        return nn.Sequential(nn.Flatten(), nn.Linear(64, 128), nn.ReLU(), nn.Dropout(0.1, seed=1),
                             nn.Linear(128, 10))
    return nn.Sequential(
        nn.Conv2D(1, 16, 3, padding=1), nn.BatchNorm2D(16), nn.ReLU(), nn.MaxPool2D(2),  # 16x4x4
        nn.Conv2D(16, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2D(2),                     # 32x2x2
        nn.Flatten(), nn.Dropout(0.1, seed=1), nn.Linear(128, 10))


def progress(epoch, epochs, done, total, loss, acc=None, width=20):
    filled = int(width * done / total)
    line = (f"epoch {epoch}/{epochs} [{'#' * filled}{'.' * (width - filled)}] "
            f"loss {loss:.4f}")
    if acc is not None:
        line += f" acc {100 * acc:.1f}%"
    return line


def train(epochs=12, batch=64, kind="cnn", lr=3e-3, verbose=True):
    """Returns (model, test images, test labels, test accuracy, seconds)."""
    x_train, y_train, x_test, y_test = load_data()
    model = make_model(kind)
    opt = optim.Adam(model, lr=lr)
    step = nn.TrainStep(model, nn.CrossEntropyLoss(), opt)
    predict = nn.InferenceFunction(model)
    rng = np.random.default_rng(0)
    steps = len(y_train) // batch  # whole batches only: one compiled shape
    tty = verbose and sys.stdout.isatty()
    start = time.perf_counter()
    acc = 0.0
    for epoch in range(1, epochs + 1):
        order = rng.permutation(len(y_train))
        model.train()
        total = 0.0
        for i in range(steps):
            idx = order[i * batch:(i + 1) * batch]
            out = step(x_train[idx], y_train[idx])
            total += float(out.loss)
            if tty:
                print("\r" + progress(epoch, epochs, i + 1, steps, total / (i + 1)), end="",
                      flush=True)
        model.eval()
        acc = float((predict(x_test).argmax(axis=1) == y_test).mean())
        if verbose:
            print(("\r" if tty else "") + progress(epoch, epochs, steps, steps, total / steps,
                                                   acc), flush=True)
    return model, x_test, y_test, acc, time.perf_counter() - start


def run_tool(cmd):
    proc = subprocess.run([str(c) for c in cmd], capture_output=True, text=True)
    if proc.returncode != 0:
        sys.exit(f"train_digits: command failed: {' '.join(map(str, cmd))}\n{proc.stderr}")
    return proc.stdout


def deploy(model, x_test, out_dir, verbose=True):
    """Saves the eval-mode model to out_dir/digits.mlirbc; runs it with
    paddle-run and as a paddle-compile'd executable. Returns
    (python predictions, JIT predictions, AOT predictions)."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / "digits.mlirbc"
    nn.export(model, x_test, path)
    expected = nn.InferenceFunction(model)(x_test).argmax(axis=1)
    np.save(out_dir / "x_test.npy", x_test)
    run_tool([BUILD / "bin" / "paddle-run", path, "--input", out_dir / "x_test.npy",
              "--output-dir", out_dir / "jit"])
    jit = np.load(out_dir / "jit" / "forward_0.npy").argmax(axis=1)
    exe = out_dir / "digits"
    run_tool([BUILD / "bin" / "paddle-compile", path, "-o", exe, "--emit", "exe"])
    run_tool([exe, "--input", out_dir / "x_test.npy", "--output-dir", out_dir / "aot"])
    aot = np.load(out_dir / "aot" / "forward_0.npy").argmax(axis=1)
    if verbose:
        print(f"== saved {path.name} ({path.stat().st_size / 1024:.0f} KiB, MLIR bytecode, "
              "weights inside)")
        print(f"   paddle-run (JIT) predictions equal Python's: {(jit == expected).all()}")
        print(f"   paddle-compile --emit exe: {exe.name} ({exe.stat().st_size / 1024:.0f} KiB), "
              f"predictions equal Python's: {(aot == expected).all()}")
    return expected, jit, aot


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--epochs", type=int, default=12)
    ap.add_argument("--model", choices=["cnn", "mlp"], default="cnn")
    ap.add_argument("--out", default=None, help="where to write digits.mlirbc (default: a "
                    "temporary folder)")
    args = ap.parse_args()
    print(f"== training a {args.model.upper()} on sklearn digits (1438 train / 359 test "
          "images), Adam; each step is one compiled function")
    model, x_test, y_test, acc, seconds = train(args.epochs, kind=args.model)
    print(f"   {model.num_parameters()} parameters, test accuracy {100 * acc:.1f}% "
          f"in {seconds:.1f} s (compiles included)")
    with tempfile.TemporaryDirectory() as tmp:
        expected, jit, aot = deploy(model, x_test, args.out or tmp)
    if acc < 0.95:
        sys.exit(f"train_digits: FAILED: test accuracy {100 * acc:.1f}% is below 95%")
    if not ((jit == expected).all() and (aot == expected).all()):
        sys.exit("train_digits: FAILED: the deployed model predicts differently")
    print("train_digits: OK")


if __name__ == "__main__":
    main()
