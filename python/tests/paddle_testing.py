"""Helpers for execution tests: run a paddle module through paddle-run.

The tests write a module and .npy inputs to a temporary folder, call the
`paddle-run` tool (JIT-compiling with paddle-cpu-pipeline), and read the
results back, so every test exercises the same path a user does.
"""

import os
import subprocess
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[2]
BUILD = Path(os.environ.get("PADDLE_BUILD_DIR", REPO / "build"))
PADDLE_RUN = BUILD / "bin" / "paddle-run"
PADDLE_OPT = BUILD / "bin" / "paddle-opt"

MLIR_TYPES = {
    np.dtype(np.float32): "f32",
    np.dtype(np.float16): "f16",
    np.dtype(np.float64): "f64",
    np.dtype(np.bool_): "i1",
    np.dtype(np.int8): "i8",
    np.dtype(np.int32): "i32",
    np.dtype(np.int64): "i64",
}


def tensor_type(shape, dtype, dynamic=()):
    """MLIR tensor type for `shape`; dims listed in `dynamic` become `?`."""
    elt = dtype if isinstance(dtype, str) else MLIR_TYPES[np.dtype(dtype)]
    dims = ["?" if i in dynamic else str(d) for i, d in enumerate(shape)]
    return "tensor<" + "".join(d + "x" for d in dims) + elt + ">"


class PaddleRunError(RuntimeError):
    """paddle-run reported an error (exit code 1); the message is stderr."""


# What a failed run-time check looks like: the op's location, then the reason.
RUNTIME_CHECK_ERROR = r"module\.mlir:\d+:\d+: "


def run_module(tmp_path, text, inputs, function=None, extra_args=(), env=None):
    """Runs `text` on the numpy `inputs`; returns the list of results.
    `env`: variables set for paddle-run on top of this process's."""
    tmp_path = Path(tmp_path)
    module = tmp_path / "module.mlir"
    module.write_text(text)
    cmd = [str(PADDLE_RUN), str(module), "--output-dir", str(tmp_path / "out")]
    if function:
        cmd += ["--function", function]
    for i, x in enumerate(inputs):
        path = tmp_path / f"in{i}.npy"
        np.save(path, x)
        cmd += ["--input", str(path)]
    cmd += list(extra_args)
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300,
                          env={**os.environ, **env} if env else None)
    if proc.returncode != 0:
        # A user error is a message and exit code 1; anything else (a signal,
        # an abort) is a crash, which no input may cause.
        if proc.returncode != 1:
            raise AssertionError(
                f"paddle-run crashed (exit {proc.returncode}):\n{proc.stderr}")
        raise PaddleRunError(proc.stderr)
    out = tmp_path / "out"
    results = sorted(out.glob("*_*.npy"), key=lambda p: int(p.stem.rsplit("_", 1)[1]))
    return [np.load(p) for p in results]


def run_op(tmp_path, body, inputs, result_types, arg_types=None):
    """Wraps an op body in a function @main and runs it.

    `body` uses %arg0.. for inputs and must define the values returned; it is
    given as the lines of the function, ending with a `return`.
    """
    arg_types = arg_types or [tensor_type(x.shape, x.dtype) for x in inputs]
    args = ", ".join(f"%arg{i}: {t}" for i, t in enumerate(arg_types))
    results = ", ".join(result_types)
    text = f"func.func @main({args}) -> ({results}) {{\n{body}\n}}\n"
    return run_module(tmp_path, text, inputs)
