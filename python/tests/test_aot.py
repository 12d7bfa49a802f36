"""Ahead-of-time compilation with paddle-compile.

- An executable gives results bitwise equal to the JIT (paddle-run) for the
  same module and inputs, and links no LLVM/MLIR library.
- A shared object + generated header embed in the C program under
  examples/embed, built here with the system C compiler; its output is
  checked against numpy (exact: mul/add/relu on small floats).
- obj and mlir outputs, and every user error (exit 1, message, no output
  file left behind).
"""

import os
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from paddle_testing import BUILD, REPO, run_module

PADDLE_COMPILE = BUILD / "bin" / "paddle-compile"
MLP = REPO / "examples" / "mlp" / "mlp.mlir"
EMBED = REPO / "examples" / "embed"


def compile_module(src, out, *extra):
    return subprocess.run([str(PADDLE_COMPILE), str(src), "-o", str(out), *extra],
                          capture_output=True, text=True, timeout=300)


def mlp_inputs(rng):
    f = np.float32
    return [rng.standard_normal((7, 64)).astype(f),
            (rng.standard_normal((64, 128)) / 8).astype(f),
            rng.standard_normal(128).astype(f),
            (rng.standard_normal((128, 10)) / 11).astype(f),
            rng.standard_normal(10).astype(f)]


def test_exe_matches_jit_bitwise(tmp_path, rng):
    # Generated code only: an artifact that calls oneDNN also links libdnnl
    # (test_onednn.py checks those).
    exe = tmp_path / "mlp"
    proc = compile_module(MLP, exe, "--emit", "exe", "--library=none")
    assert proc.returncode == 0, proc.stderr
    inputs = mlp_inputs(rng)
    args = []
    for i, x in enumerate(inputs):
        np.save(tmp_path / f"in{i}.npy", x)
        args += ["--input", str(tmp_path / f"in{i}.npy")]
    run = subprocess.run([str(exe), *args, "--output-dir", str(tmp_path / "aot")],
                         capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    (tmp_path / "jit").mkdir()
    jit = run_module(tmp_path / "jit", MLP.read_text(), inputs, extra_args=["--library=none"])
    for i, expected in enumerate(jit):
        got = np.load(tmp_path / "aot" / f"mlp_{i}.npy")
        assert got.dtype == expected.dtype and got.shape == expected.shape
        assert got.tobytes() == expected.tobytes(), f"result {i} differs"

    ldd = subprocess.run(["ldd", str(exe)], capture_output=True, text=True).stdout
    libs = [line.split()[0] for line in ldd.splitlines() if line.strip()]
    assert not [l for l in libs if "LLVM" in l or "MLIR" in l or "mlir" in l], ldd
    allowed = ("linux-vdso", "libstdc++", "libm.", "libgcc_s", "libc.", "/lib64/ld-linux")
    assert all(l.startswith(allowed) for l in libs), ldd

    bad = subprocess.run([str(exe), "--input", str(tmp_path / "in0.npy")],
                         capture_output=True, text=True)
    assert bad.returncode == 1
    assert "function 'mlp' takes 5 inputs, 1 given with --input" in bad.stderr


@pytest.mark.skipif(shutil.which("cc") is None, reason="needs a C compiler")
def test_shared_object_embedded_in_c_program(tmp_path):
    so = tmp_path / "libscale.so"
    proc = compile_module(EMBED / "scale.mlir", so)
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "libscale.h").exists()
    main = tmp_path / "main"
    cc = subprocess.run(
        ["cc", "-Wall", "-Werror", f"-I{tmp_path}", f"-I{REPO / 'runtime' / 'include'}",
         str(EMBED / "main.c"), f"-L{tmp_path}", "-lscale",
         f"-Wl,-rpath,{tmp_path}", "-o", str(main)],
        capture_output=True, text=True)
    assert cc.returncode == 0, cc.stderr
    out = subprocess.run([str(main)], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    x = np.array([[1, -2, 3, -4], [0.5, 0.25, -1, 2]], np.float32)
    expected = np.maximum(x * 2 + np.array([0, 1, 0, 1], np.float32), 0)
    got = np.array([[float(v) for v in line.split()] for line in out.stdout.splitlines()],
                   np.float32)
    np.testing.assert_array_equal(got, expected)


def test_emit_obj_and_mlir(tmp_path):
    obj = tmp_path / "m.o"
    assert compile_module(MLP, obj, "--emit", "obj").returncode == 0
    assert obj.read_bytes()[:4] == b"\x7fELF"
    mlir = tmp_path / "m.mlir"
    assert compile_module(MLP, mlir, "--emit", "mlir").returncode == 0
    text = mlir.read_text()
    assert "llvm.func @_mlir_ciface_paddle_impl_mlp" in text
    # No paddle op is left (strings, the run-time checks' messages, may
    # name one).
    assert not re.search(r'^\s*(%[\w:#]+ = )?"?paddle\.', text, re.MULTILINE)


BAD_NAME = """
func.func @"not.a.c.name"(%x: tensor<2xf32>) -> tensor<2xf32> {
  return %x : tensor<2xf32>
}
"""


@pytest.mark.parametrize("case", ["emit", "target", "name", "parse", "missing"])
def test_errors_leave_no_output(tmp_path, case):
    src, extra = MLP, []
    if case == "emit":
        extra, message = ["--emit", "dll"], "--emit must be one of so, exe, obj, mlir"
    elif case == "target":
        extra, message = ["--target", "tpu"], "--target 'tpu' is not supported"
    elif case == "name":
        src = tmp_path / "bad.mlir"
        src.write_text(BAD_NAME)
        message = "function 'not.a.c.name' is not a C identifier"
    elif case == "parse":
        src = tmp_path / "bad.mlir"
        src.write_text("func.func @f(")
        message = "cannot parse"
    else:
        src, message = tmp_path / "none.mlir", "No such file or directory"
    out = tmp_path / "out.so"
    proc = compile_module(src, out, *extra)
    assert proc.returncode == 1
    assert message in proc.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        p.name for p in [src] if p.exists() and p.parent == tmp_path)


def test_exe_of_a_function_named_main(tmp_path):
    """An executable's C main and a model function `main` do not clash."""
    src = tmp_path / "m.mlir"
    src.write_text("""
func.func @main(%x: tensor<3xf32>) -> tensor<3xf32> {
  %0 = paddle.neg %x : tensor<3xf32> -> tensor<3xf32>
  return %0 : tensor<3xf32>
}
""")
    exe = tmp_path / "model"
    proc = compile_module(src, exe, "--emit", "exe")
    assert proc.returncode == 0, proc.stderr
    x = np.array([1, -2, 3], np.float32)
    np.save(tmp_path / "x.npy", x)
    ran = subprocess.run([str(exe), "--input", str(tmp_path / "x.npy"),
                          "--output-dir", str(tmp_path / "out")],
                         capture_output=True, text=True, timeout=60)
    assert ran.returncode == 0, ran.stderr
    np.testing.assert_array_equal(np.load(tmp_path / "out" / "main_0.npy"), -x)


def test_python_compile_aot(tmp_path, rng):
    """pm.compile_aot is paddle-compile from Python (lib/Execution/Aot.cpp):
    an executable from a traced function gives numpy's result (mul/add on
    small floats: exact), a library comes with its header, a jit function
    keeps its compile options, and a bad argument or a failed compile
    leaves no file."""
    import paddle_mlir as pm

    def f(x, y):
        return x * y + x

    x = rng.standard_normal((4, 8)).astype(np.float32)
    y = rng.standard_normal((4, 8)).astype(np.float32)
    exe = pm.compile_aot(f, x, y, path=tmp_path / "f", emit="exe")
    np.save(tmp_path / "x.npy", x)
    np.save(tmp_path / "y.npy", y)
    run = subprocess.run([exe, "--input", str(tmp_path / "x.npy"), "--input",
                          str(tmp_path / "y.npy"), "--output-dir", str(tmp_path / "out")],
                         capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    np.testing.assert_array_equal(np.load(tmp_path / "out" / "f_0.npy"), x * y + x)

    so = pm.compile_aot(f, x, y, path=tmp_path / "libf.so")
    assert "paddle_status_t f_f(" in (tmp_path / "libf.h").read_text()
    (out := tmp_path / "so_out").mkdir()
    run = subprocess.run([str(BUILD / "bin" / "paddle-run"), so, "--input", str(tmp_path / "x.npy"),
                          "--input", str(tmp_path / "y.npy"), "--output-dir", str(out)],
                         capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    np.testing.assert_array_equal(np.load(out / "f_0.npy"), x * y + x)

    mlir = pm.compile_aot(pm.jit(f, device="h200"), x, y, path=tmp_path / "f.mlir",
                          emit="mlir")
    assert '#paddle.target<device = "h200"' in Path(mlir).read_text()

    before = sorted(p.name for p in tmp_path.iterdir())
    with pytest.raises(ValueError, match="emit must be 'so', 'exe', 'obj' or 'mlir'; got 'dll'"):
        pm.compile_aot(f, x, y, path=tmp_path / "g", emit="dll")
    with pytest.raises(ValueError, match="weights must be 'embed' or 'sidecar'; got 'nope'"):
        pm.compile_aot(f, x, y, path=tmp_path / "g", emit="exe", weights="nope")
    with pytest.raises(pm._core.MLIRError, match="symbol prefix '9x'"):
        pm.compile_aot(f, x, y, path=tmp_path / "libg.so", symbol_prefix="9x")
    assert sorted(p.name for p in tmp_path.iterdir()) == before
