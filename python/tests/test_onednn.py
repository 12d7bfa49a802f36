"""The oneDNN library path (paddle-use-onednn, docs/onednn.md).

Each op runs through paddle-run with --library=onednn (every supported op
is a oneDNN call) and --library=none (our own loops), checked against a
float64 numpy reference: f32 rtol 1e-4, atol 1e-4 times the largest
reference magnitude (sums of up to a few thousand products of values in
[-1, 1], whose cancellation makes small outputs' relative error
meaningless). The lowered IR is checked too, so a test cannot pass by
silently not using oneDNN. AOT: an executable and a .so that call oneDNN
run and match numpy; with --library=none the executable links no oneDNN.
"""

import re
import subprocess

import numpy as np
import pytest
from paddle_testing import BUILD, PADDLE_OPT, PaddleRunError, run_module, tensor_type
from test_exec_nn import POOL_CASES, conv2d_ref, pool_ref, type_of

PADDLE_COMPILE = BUILD / "bin" / "paddle-compile"
LIBRARIES = ["onednn", "none"]


def close(r, ref):
    assert r.shape == ref.shape and r.dtype == np.float32
    np.testing.assert_allclose(r, ref, rtol=1e-4, atol=1e-4 * max(1.0, np.abs(ref).max()))


def lowered(text, library):
    """The module after the CPU pipeline, as LLVM dialect text."""
    proc = subprocess.run([str(PADDLE_OPT), "-", f"--paddle-cpu-pipeline=library={library}"],
                          input=text, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def run_checked(tmp_path, body, inputs, result_types, library, kernel, threads=None,
                run_library=None):
    """Runs `body` with `run_library` (default `library`) and checks that
    `kernel` is called exactly when `library` is onednn."""
    arg_types = [tensor_type(x.shape, x.dtype) for x in inputs]
    args = ", ".join(f"%arg{i}: {t}" for i, t in enumerate(arg_types))
    text = f"func.func @main({args}) -> ({', '.join(result_types)}) {{\n{body}\n}}\n"
    run_library = run_library or library
    calls = f"_mlir_ciface_paddle_onednn_{kernel}" in lowered(text, run_library)
    assert calls == (library == "onednn")
    extra = [f"--library={run_library}"] + ([f"--threads={threads}"] if threads else [])
    return run_module(tmp_path, text, inputs, extra_args=extra)


def uniform(rng, shape):
    return rng.uniform(-1, 1, size=shape).astype(np.float32)


MATMUL_SHAPES = [(1, 1, 1), (1, 300, 257), (7, 64, 128), (33, 65, 17), (128, 256, 96), (300, 3, 200)]


@pytest.mark.parametrize("library", LIBRARIES)
@pytest.mark.parametrize("m,k,n", MATMUL_SHAPES)
def test_matmul(tmp_path, rng, library, m, k, n):
    a, b = uniform(rng, (m, k)), uniform(rng, (k, n))
    ta, tb, tr = (tensor_type(s, np.float32) for s in [(m, k), (k, n), (m, n)])
    body = f"  %0 = paddle.matmul %arg0, %arg1 : {ta}, {tb} -> {tr}\n  return %0 : {tr}"
    (r,) = run_checked(tmp_path, body, [a, b], [tr], library, "matmul")
    close(r, a.astype(np.float64) @ b)


@pytest.mark.parametrize("library", LIBRARIES)
@pytest.mark.parametrize("sa,sb", [
    ((4, 33, 20), (4, 20, 50)),          # linalg.batch_matmul
    # Elementwise fusion folds the batch reshapes and broadcasts into the
    # contraction (a linalg.generic); oneDNN broadcasts the missing dims.
    ((2, 3, 16, 8), (2, 3, 8, 24)),
    ((2, 3, 16, 8), (8, 24)),
    ((40, 8), (3, 2, 8, 24)),
    ((5, 1, 9, 31), (3, 31, 12))])
def test_batch_matmul(tmp_path, rng, library, sa, sb):
    a, b = uniform(rng, sa), uniform(rng, sb)
    ref = np.matmul(a.astype(np.float64), b)
    ta, tb, tr = (tensor_type(s, np.float32) for s in [sa, sb, ref.shape])
    body = f"  %0 = paddle.matmul %arg0, %arg1 : {ta}, {tb} -> {tr}\n  return %0 : {tr}"
    (r,) = run_checked(tmp_path, body, [a, b], [tr], library, "matmul")
    close(r, ref)


@pytest.mark.parametrize("library", LIBRARIES)
def test_matmul_transposed_operand(tmp_path, rng, library):
    """x @ w.T: the transpose folds into the contraction's indexing map;
    oneDNN reads w through its strides."""
    x, w = uniform(rng, (48, 64)), uniform(rng, (80, 64))
    tx, tw, twt, tr = (tensor_type(s, np.float32) for s in [(48, 64), (80, 64), (64, 80), (48, 80)])
    body = (f"  %t = paddle.transpose %arg1 perm = [1, 0] : {tw} -> {twt}\n"
            f"  %0 = paddle.matmul %arg0, %t : {tx}, {twt} -> {tr}\n  return %0 : {tr}")
    (r,) = run_checked(tmp_path, body, [x, w], [tr], library, "matmul")
    close(r, x.astype(np.float64) @ w.T)


@pytest.mark.parametrize("case", ["lhs", "rhs", "both", "shared", "batched-rows"])
def test_matmul_absorbs_transposes(tmp_path, rng, case):
    """A transpose written only for a oneDNN matmul is absorbed: the call
    reads the source through swapped strides (paddle-use-onednn,
    absorbTransposes). "shared" feeds one transpose to two matmuls (kept);
    "batched-rows" is x @ W^T with x [4, 16, 64] (the rows folded)."""
    m, k, n = 40, 64, 24
    if case == "batched-rows":
        x, w = uniform(rng, (4, 16, k)), uniform(rng, (n, k))
        tx, tw, twt, tr = (tensor_type(s, np.float32)
                           for s in [(4, 16, k), (n, k), (k, n), (4, 16, n)])
        body = (f"  %t = paddle.transpose %arg1 perm = [1, 0] : {tw} -> {twt}\n"
                f"  %0 = paddle.matmul %arg0, %t : {tx}, {twt} -> {tr}\n  return %0 : {tr}")
        (r,) = run_checked(tmp_path, body, [x, w], [tr], "onednn", "matmul")
        close(r, x.astype(np.float64) @ w.T)
        return
    a, b = uniform(rng, (k, m)), uniform(rng, (n, k))
    ta, tat, tb, tbt, tr = (tensor_type(s, np.float32)
                            for s in [(k, m), (m, k), (n, k), (k, n), (m, n)])
    at = f"  %at = paddle.transpose %arg0 perm = [1, 0] : {ta} -> {tat}\n"
    bt = f"  %bt = paddle.transpose %arg1 perm = [1, 0] : {tb} -> {tbt}\n"
    ref = a.T.astype(np.float64) @ b.T
    if case == "shared":
        body = (at + bt + f"  %0 = paddle.matmul %at, %bt : {tat}, {tbt} -> {tr}\n"
                f"  %1 = paddle.matmul %at, %bt : {tat}, {tbt} -> {tr}\n"
                f"  %2 = paddle.add %0, %1 : {tr}, {tr} -> {tr}\n  return %2 : {tr}")
        ref = 2 * ref
    else:
        lhs = "%at" if case in ("lhs", "both") else "%a2"
        rhs = "%bt" if case in ("rhs", "both") else "%b2"
        # The operand not transposed here is made by a copy of a transposed
        # view (a reshape keeps it contiguous) so the product stays a.T @ b.T.
        body = at + bt
        if lhs == "%a2":
            body += f"  %a2 = paddle.mul %at, %at : {tat}, {tat} -> {tat}\n"
            ref = (a.T.astype(np.float64) ** 2) @ b.T
        if rhs == "%b2":
            body += f"  %b2 = paddle.mul %bt, %bt : {tbt}, {tbt} -> {tbt}\n"
            ref = a.T.astype(np.float64) @ (b.T.astype(np.float64) ** 2)
        body += f"  %0 = paddle.matmul {lhs}, {rhs} : {tat}, {tbt} -> {tr}\n  return %0 : {tr}"
    for threads in (1, 2):
        (r,) = run_checked(tmp_path, body, [a, b], [tr], "onednn", "matmul", threads=threads)
        close(r, ref)


def test_matmul_dynamic_dims(tmp_path, rng):
    """Sizes known only at run time reach oneDNN through the descriptors."""
    a, b = uniform(rng, (37, 70)), uniform(rng, (70, 45))
    text = ("func.func @main(%a: tensor<?x?xf32>, %b: tensor<?x?xf32>) -> tensor<?x?xf32> {\n"
            "  %0 = paddle.matmul %a, %b : tensor<?x?xf32>, tensor<?x?xf32> -> tensor<?x?xf32>\n"
            "  return %0 : tensor<?x?xf32>\n}\n")
    assert "_mlir_ciface_paddle_onednn_matmul" in lowered(text, "onednn")
    (r,) = run_module(tmp_path, text, [a, b], extra_args=["--library=onednn"])
    close(r, a.astype(np.float64) @ b)


def test_matmul_threads_and_repeats(tmp_path, rng):
    """1 and 2 threads (oneDNN's OpenMP team follows --threads) both match."""
    a, b = uniform(rng, (96, 160)), uniform(rng, (160, 72))
    ta, tb, tr = (tensor_type(s, np.float32) for s in [a.shape, b.shape, (96, 72)])
    body = f"  %0 = paddle.matmul %arg0, %arg1 : {ta}, {tb} -> {tr}\n  return %0 : {tr}"
    ref = a.astype(np.float64) @ b
    for threads in (1, 2):
        (tmp_path / str(threads)).mkdir()
        (r,) = run_checked(tmp_path / str(threads), body, [a, b], [tr], "onednn", "matmul",
                           threads=threads)
        close(r, ref)


# (input shape, filter shape, strides, padding, dilations, groups)
CONV_CASES = [
    ((1, 3, 8, 8), (4, 3, 3, 3), (1, 1), (0, 0, 0, 0), (1, 1), 1),
    ((2, 16, 14, 14), (32, 16, 3, 3), (1, 1), (1, 1, 1, 1), (1, 1), 1),
    ((2, 3, 9, 7), (5, 3, 3, 2), (2, 1), (1, 0, 1, 1), (1, 1), 1),
    ((1, 8, 12, 12), (8, 8, 3, 3), (2, 2), (1, 1, 1, 1), (2, 2), 1),
    ((2, 4, 10, 10), (6, 2, 3, 3), (1, 2), (1, 1, 1, 1), (2, 1), 2),
    ((1, 6, 7, 9), (6, 1, 3, 3), (2, 2), (0, 2, 1, 0), (1, 2), 6),
    ((1, 32, 8, 8), (64, 8, 1, 1), (1, 1), (0, 0, 0, 0), (1, 1), 4),
]


@pytest.mark.parametrize("library", LIBRARIES)
@pytest.mark.parametrize("case", CONV_CASES)
def test_conv2d(tmp_path, rng, library, case):
    sx, sw, strides, pads, dil, groups = case
    x, w = uniform(rng, sx), uniform(rng, sw)
    ref = conv2d_ref(x, w, strides, pads, dil, groups)
    tx, tw, tr = (tensor_type(s, np.float32) for s in [sx, sw, ref.shape])
    attrs = (f"strides = array<i64: {strides[0]}, {strides[1]}>, "
             f"padding = array<i64: {', '.join(map(str, pads))}>, "
             f"dilations = array<i64: {dil[0]}, {dil[1]}>, groups = {groups}")
    body = (f"  %0 = paddle.conv2d %arg0, %arg1 {{{attrs}}} : {tx}, {tw} -> {tr}\n"
            f"  return %0 : {tr}")
    kernel = "conv2d_grouped" if groups > 1 else "conv2d"
    (r,) = run_checked(tmp_path, body, [x, w], [tr], library, kernel)
    close(r, ref)
    if library == "onednn" and any(pads):
        # The padding is oneDNN's: the copy through a padded buffer is gone.
        text = f"func.func @main(%arg0: {tx}, %arg1: {tw}) -> {tr} {{\n{body}\n}}\n"
        proc = subprocess.run([str(PADDLE_OPT), "-", "--paddle-cpu-pipeline=library=onednn",
                               "--mlir-print-ir-after=paddle-use-onednn", "-o", str(tmp_path / "out.mlir")],
                              input=text, capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0, proc.stderr
        assert "paddle_onednn_conv2d" in proc.stderr
        assert "paddle.zero_pad" not in proc.stderr


@pytest.mark.parametrize("library", LIBRARIES)
@pytest.mark.parametrize("case", POOL_CASES)
def test_max_pool2d(tmp_path, rng, library, case):
    """max_pool2d through oneDNN's pooling on the shapes the generated
    loops are tested on (padding, ceil mode, dynamic dims), on 1 and 2
    threads; a max is exact, so the results equal numpy's."""
    shape, kernel, strides, pads, ceil_mode, dyn = case
    x = uniform(rng, shape) * 50
    ref = pool_ref(x, kernel, strides, pads, ceil_mode, "max")
    tx, tr = type_of(shape, "f32", dyn), type_of(ref.shape, "f32", dyn)
    attrs = (f"kernel = array<i64: {kernel[0]}, {kernel[1]}>, "
             f"strides = array<i64: {strides[0]}, {strides[1]}>, "
             f"padding = array<i64: {', '.join(map(str, pads))}>" + (", ceil_mode" if ceil_mode else ""))
    body = f"  %0 = paddle.max_pool2d %arg0 {{{attrs}}} : {tx} -> {tr}\n  return %0 : {tr}"
    text = f"func.func @main(%arg0: {tx}) -> {tr} {{\n{body}\n}}\n"
    assert ("_mlir_ciface_paddle_onednn_max_pool2d" in lowered(text, library)) == (library == "onednn")
    for threads in (1, 2):
        (r,) = run_module(tmp_path, text, [x], extra_args=[f"--library={library}", f"--threads={threads}"])
        np.testing.assert_array_equal(r, ref)
    if library == "onednn" and any(pads) and not dyn:
        # The -inf padding is oneDNN's: the copy through a padded buffer is gone.
        proc = subprocess.run([str(PADDLE_OPT), "-", "--paddle-cpu-pipeline=library=onednn",
                               "--mlir-print-ir-after=paddle-use-onednn", "-o", str(tmp_path / "out.mlir")],
                              input=text, capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0, proc.stderr
        assert "paddle.max_pool_pad" not in proc.stderr and "linalg.generic" not in proc.stderr


def report_choice(text, out):
    """The path paddle-cost-report predicts faster on the default device."""
    proc = subprocess.run([str(PADDLE_OPT), "-", "--paddle-cost-report", "-o", str(out)],
                          input=text, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    picks = re.findall(r"library choice: .* -> (onednn|codegen)", proc.stdout)
    assert len(picks) == 1, proc.stdout
    return picks[0]


def test_auto_follows_cost_model(tmp_path):
    """auto: each op goes where the cost model of the default device spec
    predicts it faster (docs/onednn.md, "Choosing"); the pipeline's choice
    equals the one paddle-cost-report prints. A tiny matmul stays ours, a
    large convolution (scalar loops in our code) goes to oneDNN."""
    def matmul(m, k, n):
        a, b, c = (tensor_type(s, np.float32) for s in [(m, k), (k, n), (m, n)])
        return (f"func.func @main(%a: {a}, %b: {b}) -> {c} {{\n"
                f"  %0 = paddle.matmul %a, %b : {a}, {b} -> {c}\n  return %0 : {c}\n}}\n")

    def conv(c, hw, f):
        x, w, y = (tensor_type(s, np.float32)
                   for s in [(1, c, hw, hw), (f, c, 3, 3), (1, f, hw - 2, hw - 2)])
        return (f"func.func @main(%x: {x}, %w: {w}) -> {y} {{\n"
                f"  %0 = paddle.conv2d %x, %w : {x}, {w} -> {y}\n  return %0 : {y}\n}}\n")

    cases = [(matmul(4, 4, 4), "codegen"), (conv(64, 30, 64), "onednn"),
             (matmul(64, 64, 64), None), (matmul(256, 256, 256), None),
             (matmul(64, 64, 3), None), (conv(3, 8, 4), None)]
    for text, expected in cases:
        pick = report_choice(text, tmp_path / "out.mlir")
        if expected:
            assert pick == expected, text
        calls = "_mlir_ciface_paddle_onednn_" in lowered(text, "auto")
        assert calls == (pick == "onednn"), text


def test_bad_library_flag(tmp_path, rng):
    a = uniform(rng, (2, 2))
    t = tensor_type((2, 2), np.float32)
    with pytest.raises(PaddleRunError, match="--library must be auto, onednn or none; got 'mkl'"):
        run_module(tmp_path, f"func.func @main(%a: {t}) -> {t} {{\n  return %a : {t}\n}}\n",
                   [a], extra_args=["--library=mkl"])
    proc = subprocess.run([str(PADDLE_COMPILE), "x.mlir", "-o", str(tmp_path / "o"),
                           "--library=mkl"], capture_output=True, text=True)
    assert proc.returncode == 1
    assert "--library must be auto, onednn or none; got 'mkl'" in proc.stderr


def test_core_compile_library(ctx, rng):
    from paddle_mlir import _core
    t = "tensor<64x64xf32>"
    module = _core.Module.parse(
        ctx, f"func.func @main(%a: {t}, %b: {t}) -> {t} {{\n"
        f"  %0 = paddle.matmul %a, %b : {t}, {t} -> {t}\n  return %0 : {t}\n}}\n")
    a, b = uniform(rng, (64, 64)), uniform(rng, (64, 64))
    for library in ["auto", "onednn", "none"]:
        (r,) = _core.compile(module, options=f"library={library}").run("main", [a, b])
        close(r, a.astype(np.float64) @ b)
    with pytest.raises(ValueError, match="library must be auto, onednn or none; got 'x'"):
        _core.compile(module, options="library=x")


MODEL = """func.func @model(%x: tensor<2x8x16x16xf32>, %w: tensor<16x8x3x3xf32>,
                  %m: tensor<256x64xf32>) -> tensor<32x64xf32> {
  %c = paddle.conv2d %x, %w {padding = array<i64: 1, 1, 1, 1>}
      : tensor<2x8x16x16xf32>, tensor<16x8x3x3xf32> -> tensor<2x16x16x16xf32>
  %r = paddle.reshape %c shape = [32, 256] : tensor<2x16x16x16xf32> -> tensor<32x256xf32>
  %y = paddle.matmul %r, %m : tensor<32x256xf32>, tensor<256x64xf32> -> tensor<32x64xf32>
  return %y : tensor<32x64xf32>
}
"""


def model_inputs(rng):
    return [uniform(rng, (2, 8, 16, 16)), uniform(rng, (16, 8, 3, 3)), uniform(rng, (256, 64))]


def model_ref(x, w, m):
    c = conv2d_ref(x, w, (1, 1), (1, 1, 1, 1), (1, 1), 1)
    return c.reshape(32, 256) @ m.astype(np.float64)


def save_inputs(tmp_path, inputs):
    args = []
    for i, x in enumerate(inputs):
        np.save(tmp_path / f"in{i}.npy", x)
        args += ["--input", str(tmp_path / f"in{i}.npy")]
    return args


def ldd(path):
    out = subprocess.run(["ldd", str(path)], capture_output=True, text=True).stdout
    return [line.split()[0] for line in out.splitlines() if line.strip()]


@pytest.mark.parametrize("library", LIBRARIES)
def test_aot_executable(tmp_path, rng, library):
    src = tmp_path / "model.mlir"
    src.write_text(MODEL)
    exe = tmp_path / "model"
    proc = subprocess.run([str(PADDLE_COMPILE), str(src), "-o", str(exe), "--emit", "exe",
                           f"--library={library}"], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    inputs = model_inputs(rng)
    run = subprocess.run([str(exe), *save_inputs(tmp_path, inputs), "--output-dir",
                          str(tmp_path / "out")], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    aot = np.load(tmp_path / "out" / "model_0.npy")
    close(aot, model_ref(*inputs))
    # The JIT with the same choice gives the same bits.
    (tmp_path / "jit").mkdir()
    (jit,) = run_module(tmp_path / "jit", MODEL, inputs, extra_args=[f"--library={library}"])
    assert jit.tobytes() == aot.tobytes()
    libs = ldd(exe)
    assert any(l.startswith("libdnnl") for l in libs) == (library == "onednn"), libs
    assert not [l for l in libs if "LLVM" in l or "MLIR" in l or "mlir" in l], libs


def test_aot_shared_object_in_paddle_run(tmp_path, rng):
    """A .so calling oneDNN through its import slots, loaded by paddle-run
    (whose runtime has the kernels)."""
    src = tmp_path / "model.mlir"
    src.write_text(MODEL)
    so = tmp_path / "model.so"
    proc = subprocess.run([str(PADDLE_COMPILE), str(src), "-o", str(so), "--library=onednn"],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert any(l.startswith("libdnnl") for l in ldd(so))
    inputs = model_inputs(rng)
    run = subprocess.run([str(BUILD / "bin" / "paddle-run"), str(so),
                          *save_inputs(tmp_path, inputs), "--output-dir", str(tmp_path / "out")],
                         capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    close(np.load(tmp_path / "out" / "model_0.npy"), model_ref(*inputs))
