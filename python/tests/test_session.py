"""Runtime sessions through paddle-run: JIT modules and paddle-compile .so
libraries, concurrent runs, memory limits and Chrome traces.

- A .so loaded by paddle-run gives results bitwise equal to the JIT's.
- --concurrency N runs the function from N threads in one session; paddle-run
  itself checks every result is bitwise equal to the first run's.
- --memory-limit below what a call needs: exit 1 with an out-of-memory
  message naming the function and the limit; above it the run succeeds.
- --trace writes Chrome trace JSON with one call event per run and one
  kernel event per instrumented kernel, named by op and source line.
- Loading a library that is not a paddle module, is truncated, was built for
  another runtime ABI, or imports an unknown runtime function is an error.
"""

import json
import re
import subprocess
from pathlib import Path

import numpy as np
import pytest
from paddle_testing import BUILD, PADDLE_RUN, REPO

PADDLE_COMPILE = BUILD / "bin" / "paddle-compile"
MLP = REPO / "examples" / "mlp" / "mlp.mlir"


def mlp_inputs(tmp_path, rng, batch=7):
    f = np.float32
    arrays = [rng.standard_normal((batch, 64)).astype(f),
              (rng.standard_normal((64, 128)) / 8).astype(f),
              rng.standard_normal(128).astype(f),
              (rng.standard_normal((128, 10)) / 11).astype(f),
              rng.standard_normal(10).astype(f)]
    args = []
    for i, a in enumerate(arrays):
        np.save(tmp_path / f"in{i}.npy", a)
        args += ["--input", str(tmp_path / f"in{i}.npy")]
    return arrays, args


def run(*args):
    proc = subprocess.run([str(PADDLE_RUN), *map(str, args)],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode in (0, 1), proc.stderr  # never a crash
    return proc


def compile_so(tmp_path, src=MLP, name="model.so"):
    out = tmp_path / name
    proc = subprocess.run([str(PADDLE_COMPILE), str(src), "-o", str(out)],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    return out


def numpy_mlp(x, w1, b1, w2, b2):
    from math import sqrt
    import math
    h = x @ w1 + b1
    erf = np.vectorize(math.erf)
    a = 0.5 * h * (1 + erf(h / sqrt(2)))
    logits = a @ w2 + b2
    e = np.exp(logits - logits.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def test_so_matches_jit_bitwise_and_numpy(tmp_path, rng):
    arrays, args = mlp_inputs(tmp_path, rng)
    lib = compile_so(tmp_path)
    so = run(lib, *args, "--output-dir", tmp_path / "so")
    assert so.returncode == 0, so.stderr
    jit = run(MLP, *args, "--output-dir", tmp_path / "jit")
    assert jit.returncode == 0, jit.stderr
    for i in range(2):
        a = (tmp_path / "so" / f"mlp_{i}.npy").read_bytes()
        b = (tmp_path / "jit" / f"mlp_{i}.npy").read_bytes()
        assert a == b
    p = np.load(tmp_path / "so" / "mlp_0.npy")
    np.testing.assert_allclose(p, numpy_mlp(*arrays), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("source", ["jit", "so"])
def test_concurrent_runs_match(tmp_path, rng, source):
    _, args = mlp_inputs(tmp_path, rng, batch=33)
    module = MLP if source == "jit" else compile_so(tmp_path)
    proc = run(module, *args, "--concurrency", 6)
    assert proc.returncode == 0, proc.stderr
    assert "concurrency 6: 24 runs match" in proc.stdout


@pytest.mark.parametrize("source", ["jit", "so"])
def test_memory_limit(tmp_path, rng, source):
    _, args = mlp_inputs(tmp_path, rng, batch=64)
    module = MLP if source == "jit" else compile_so(tmp_path)
    # The first layer alone needs 64 x 128 floats (32 KiB).
    small = run(module, *args, "--memory-limit", "16K")
    assert small.returncode == 1
    assert "mlp: out of memory: cannot allocate a buffer of" in small.stderr
    assert "memory limit is 16384 bytes" in small.stderr
    big = run(module, *args, "--memory-limit", "1M")
    assert big.returncode == 0, big.stderr


@pytest.mark.parametrize("text", ["12Q", "-5", "lots", "99999999999999G"])
def test_bad_memory_limit(tmp_path, rng, text):
    _, args = mlp_inputs(tmp_path, rng)
    proc = run(MLP, *args, "--memory-limit", text)
    assert proc.returncode == 1
    assert "--memory-limit" in proc.stderr and "not a byte count" in proc.stderr


def test_trace(tmp_path, rng):
    _, args = mlp_inputs(tmp_path, rng)
    trace = tmp_path / "trace.json"
    proc = run(MLP, *args, "--trace", trace, "--bench", 3)
    assert proc.returncode == 0, proc.stderr
    events = [e for e in json.loads(trace.read_text())["traceEvents"]
              if e["ph"] == "X"]
    calls = [e for e in events if e["cat"] == "call"]
    kernels = [e for e in events if e["cat"] == "kernel"]
    assert len(calls) == 4 and all(e["name"] == "mlp" for e in calls)
    assert len(kernels) % 4 == 0 and kernels
    names = {e["name"] for e in kernels}
    assert any(n.startswith("linalg.matmul ") and n.endswith("mlp.mlir:8:8")
               for n in names), names
    # Each kernel event carries its kernel's id (paddle-instrument-kernels
    # numbers them 0, 1, ... in the module): one name per id, every id in
    # every call.
    ids = {}
    for k in kernels:
        ids.setdefault(k["args"]["kernel"], set()).add(k["name"])
    assert sorted(ids) == list(range(len(ids))), sorted(ids)
    assert all(len(n) == 1 for n in ids.values()), ids
    assert len(kernels) == 4 * len(ids)
    # Every kernel lies inside a call on the same thread.
    for k in kernels:
        assert any(c["tid"] == k["tid"] and c["ts"] <= k["ts"] and
                   k["ts"] + k["dur"] <= c["ts"] + c["dur"] + 1e-3
                   for c in calls)
    assert not list(tmp_path.glob("*.tmp"))


def test_trace_to_unwritable_path(tmp_path, rng):
    _, args = mlp_inputs(tmp_path, rng)
    proc = run(MLP, *args, "--trace", tmp_path / "no" / "such" / "dir.json")
    assert proc.returncode == 1
    assert "cannot write" in proc.stderr


def test_runtime_check_inside_so(tmp_path):
    src = tmp_path / "add.mlir"
    src.write_text("""
func.func @f(%a: tensor<?xf32>, %b: tensor<?xf32>) -> tensor<?xf32> {
  %0 = paddle.add %a, %b : tensor<?xf32>, tensor<?xf32> -> tensor<?xf32>
  return %0 : tensor<?xf32>
}
""")
    lib = compile_so(tmp_path, src, "add.so")
    np.save(tmp_path / "a.npy", np.ones(3, np.float32))
    np.save(tmp_path / "b.npy", np.ones(4, np.float32))
    proc = run(lib, "--input", tmp_path / "a.npy", "--input", tmp_path / "b.npy")
    assert proc.returncode == 1
    assert "f: " in proc.stderr and "add.mlir:3:8" in proc.stderr


def test_truncated_so(tmp_path):
    lib = compile_so(tmp_path)
    data = lib.read_bytes()
    bad = tmp_path / "truncated.so"
    bad.write_bytes(data[: len(data) // 3])
    proc = run(bad)
    assert proc.returncode == 1
    assert "is not a usable shared object" in proc.stderr
    assert "truncated" in proc.stderr


def fake_module(tmp_path, version, import_name):
    """A shared object with the exports of a paddle module but a chosen ABI
    version and import list."""
    c = tmp_path / "fake.c"
    c.write_text(f"""
#include <stdint.h>
typedef struct {{ const char *name; void **slot; }} import_t;
static void *slot;
const int32_t paddle_module_abi_version = {version};
const void *paddle_module_functions[1];
const int32_t paddle_module_function_count = 0;
const import_t paddle_module_imports[] = {{{{"{import_name}", &slot}}}};
const int32_t paddle_module_import_count = 1;
""")
    so = tmp_path / "fake.so"
    subprocess.run(["cc", "-shared", "-fPIC", str(c), "-o", str(so)], check=True)
    return so


def test_abi_version_mismatch(tmp_path):
    proc = run(fake_module(tmp_path, 999, "paddle_alloc"))
    assert proc.returncode == 1
    assert "compiled for runtime ABI version 999" in proc.stderr


def runtime_abi_version():
    header = (Path(__file__).resolve().parents[2] / "runtime" / "include" /
              "paddle_runtime" / "runtime.h").read_text()
    return int(re.search(r"#define PADDLE_RUNTIME_ABI_VERSION (\d+)", header).group(1))


def test_unknown_runtime_import(tmp_path):
    proc = run(fake_module(tmp_path, runtime_abi_version(), "paddle_no_such_function"))
    assert proc.returncode == 1
    assert "'paddle_no_such_function', which this runtime does not have" in proc.stderr


def test_not_a_paddle_library(tmp_path):
    c = tmp_path / "plain.c"
    c.write_text("int answer(void) { return 42; }\n")
    so = tmp_path / "plain.so"
    subprocess.run(["cc", "-shared", "-fPIC", str(c), "-o", str(so)], check=True)
    proc = run(so)
    assert proc.returncode == 1
    assert "is not a module compiled with paddle-compile --emit so" in proc.stderr


def test_sidecar_so_weights_errors_reach_the_loading_runtime(tmp_path):
    """A library's glue ends a call (missing weights file) through its import
    slot, so paddle-run's session returns the error instead of aborting."""
    src = tmp_path / "w.mlir"
    src.write_text("""
func.func @f(%x: tensor<4x64xf32>) -> tensor<4x64xf32> {
  %w = arith.constant dense<2.5> : tensor<4x64xf32>
  %c = paddle.mul %x, %w : tensor<4x64xf32>, tensor<4x64xf32> -> tensor<4x64xf32>
  return %c : tensor<4x64xf32>
}
""")
    lib = tmp_path / "w.so"
    proc = subprocess.run([str(PADDLE_COMPILE), str(src), "-o", str(lib),
                           "--weights", "sidecar"], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    x = np.arange(256, dtype=np.float32).reshape(4, 64)
    np.save(tmp_path / "x.npy", x)
    ok = run(lib, "--input", tmp_path / "x.npy", "--output-dir", tmp_path / "o")
    assert ok.returncode == 0, ok.stderr
    np.testing.assert_array_equal(np.load(tmp_path / "o" / "f_0.npy"), x * 2.5)
    (tmp_path / "w.so.weights").unlink()
    missing = run(lib, "--input", tmp_path / "x.npy")
    assert missing.returncode == 1
    assert "f: cannot open weights file" in missing.stderr


@pytest.mark.parametrize("emit", ["exe", "so"])
def test_aot_trace_and_memory_limit(tmp_path, rng, emit):
    """Artifacts compiled with --instrument-kernels trace their kernels (an
    executable through its own --trace, a library through paddle-run), and
    executables take --memory-limit like paddle-run."""
    _, args = mlp_inputs(tmp_path, rng)
    out = tmp_path / ("mlp" if emit == "exe" else "mlp.so")
    proc = subprocess.run([str(PADDLE_COMPILE), str(MLP), "-o", str(out),
                           "--emit", emit, "--instrument-kernels"],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    trace = tmp_path / "t.json"
    cmd = [str(out)] if emit == "exe" else [str(PADDLE_RUN), str(out)]
    ran = subprocess.run(cmd + args + ["--trace", str(trace), "--bench", "1"],
                         capture_output=True, text=True, timeout=300)
    assert ran.returncode == 0, ran.stderr
    events = [e for e in json.loads(trace.read_text())["traceEvents"]
              if e["ph"] == "X"]
    assert sum(e["cat"] == "call" for e in events) == 2
    names = {e["name"] for e in events if e["cat"] == "kernel"}
    assert any(n.startswith("linalg.matmul ") and n.endswith("mlp.mlir:8:8")
               for n in names), names
    if emit == "exe":
        small = subprocess.run(cmd + args + ["--memory-limit", "2K"],
                               capture_output=True, text=True, timeout=300)
        assert small.returncode == 1
        assert "mlp: out of memory" in small.stderr
        bad = subprocess.run(cmd + ["--memory-limit", "2Q"],
                             capture_output=True, text=True, timeout=300)
        assert bad.returncode == 1 and "not a byte count" in bad.stderr


PLANNED = """
func.func @f(%x: tensor<64x64xf32>) -> tensor<64xf32> {
  %a = paddle.exp %x : tensor<64x64xf32> -> tensor<64x64xf32>
  %b = paddle.matmul %a, %a : tensor<64x64xf32>, tensor<64x64xf32> -> tensor<64x64xf32>
  %c = paddle.tanh %b : tensor<64x64xf32> -> tensor<64x64xf32>
  %d = paddle.matmul %c, %a : tensor<64x64xf32>, tensor<64x64xf32> -> tensor<64x64xf32>
  %s = paddle.reduce_sum %d axes = [1] : tensor<64x64xf32> -> tensor<64xf32>
  return %s : tensor<64xf32>
}
"""


@pytest.mark.parametrize("source", ["jit", "so"])
def test_workspace_limit_and_concurrency(tmp_path, rng, source):
    """The planned temporaries (48 KiB of workspace) count against the
    session's memory limit; concurrent calls each get their own workspace
    and agree bit for bit; results match numpy."""
    src = tmp_path / "planned.mlir"
    src.write_text(PLANNED)
    module = src if source == "jit" else compile_so(tmp_path, src, "planned.so")
    x = (rng.random((64, 64)) * 0.01).astype(np.float32)
    np.save(tmp_path / "x.npy", x)
    small = run(module, "--input", tmp_path / "x.npy", "--memory-limit", "20K")
    assert small.returncode == 1
    assert "f: cannot allocate a workspace of 49152 bytes" in small.stderr
    assert "limit 20480 bytes" in small.stderr
    ok = run(module, "--input", tmp_path / "x.npy", "--memory-limit", "200K",
             "--concurrency", 4, "--output-dir", tmp_path / "out")
    assert ok.returncode == 0, ok.stderr
    x64 = x.astype(np.float64)
    a = np.exp(x64)
    expect = (np.tanh(a @ a) @ a).sum(axis=1)
    np.testing.assert_allclose(np.load(tmp_path / "out" / "f_0.npy"), expect,
                               rtol=1e-5)
