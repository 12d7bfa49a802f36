"""The opt-in bf16 mode (--precision bf16, paddle-convert-precision; docs/bf16.md).

f32 matmuls and convolutions read their operands rounded to bf16 and
accumulate in f32. Each result is checked twice:

- against a float64 numpy reference computed on the bf16-rounded inputs:
  |got - ref| <= 1e-5 * (|a| @ |b|) elementwise (the bound of an f32
  accumulation of exact products over K <= 600 terms, with margin), so
  the rounding must be exactly bf16 round-to-nearest-even and the
  accumulation f32;
- against the plain f32 numpy result, loosely: |got - ref| <= 1e-2 *
  (|a| @ |b|) (each input is off by at most 2^-9 relative), and the results
  must differ somewhere by more than 1e-5 of that scale, so a mode that
  silently ran in f32 fails.
"""

import os
import subprocess

import numpy as np
import pytest
from paddle_testing import BUILD, PADDLE_OPT, PADDLE_RUN, PaddleRunError, run_module, tensor_type
from test_exec_nn import conv2d_ref

PADDLE_COMPILE = BUILD / "bin" / "paddle-compile"


def bf16_round(x):
    """float32 `x` rounded to the nearest bf16 (ties to even), as float32."""
    bits = np.asarray(x, dtype=np.float32).view(np.uint32).astype(np.uint64)
    rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16 << 16
    return rounded.astype(np.uint32).view(np.float32)


def matmul_scale(a, b):
    return np.abs(a.astype(np.float64)) @ np.abs(b.astype(np.float64))


def check(got, exact, plain, scale):
    """`exact`: float64 reference on bf16 inputs; `plain`: on f32 inputs."""
    assert got.dtype == np.float32 and got.shape == exact.shape
    err = np.abs(got - exact)
    assert np.all(err <= 1e-5 * scale + 1e-30), float((err / (scale + 1e-30)).max())
    loose = np.abs(got - plain)
    assert np.all(loose <= 1e-2 * scale + 1e-30)
    assert (loose / (scale + 1e-30)).max() > 1e-5, "result looks like f32, not bf16"


def uniform(rng, shape):
    return rng.uniform(-1, 1, size=shape).astype(np.float32)


def module(inputs, body, result_types, dynamic=None):
    dynamic = dynamic or [()] * len(inputs)
    args = ", ".join(f"%arg{i}: {tensor_type(x.shape, x.dtype, d)}"
                     for i, (x, d) in enumerate(zip(inputs, dynamic)))
    return f"func.func @main({args}) -> ({', '.join(result_types)}) {{\n{body}\n}}\n"


def dense(x):
    """An MLIR dense literal holding float32 `x` exactly (raw hex bytes)."""
    return 'dense<"0x' + np.asarray(x, "<f4").tobytes().hex().upper() + '">'


# (lhs shape, rhs shape, dynamic dims of lhs)
MATMUL_CASES = [
    ((7, 64), (64, 33), ()),
    ((33, 600), (600, 17), ()),
    ((2, 5, 48), (48, 9), (0,)),
    ((3, 4, 40), (3, 40, 6), ()),
    ((40,), (40, 8), ()),
]


# Both paths: oneDNN's bf16 primitives (AMX or avx512_bf16 where the CPU
# has them) and our generated code.
LIBRARIES = ["onednn", "none"]


@pytest.mark.parametrize("library", LIBRARIES)
@pytest.mark.parametrize("ls,rs,dyn", MATMUL_CASES)
def test_matmul(tmp_path, rng, ls, rs, dyn, library):
    a, b = uniform(rng, ls), uniform(rng, rs)
    out_shape = np.matmul(a, b).shape
    lt = tensor_type(ls, "f32", dyn)
    ot = tensor_type(out_shape, "f32", {0} if dyn else ())
    body = (f"  %r = paddle.matmul %arg0, %arg1 : {lt}, {tensor_type(rs, 'f32')} -> {ot}\n"
            f"  return %r : {ot}")
    text = module([a, b], body, [ot], [dyn, ()])
    (got,) = run_module(tmp_path, text, [a, b],
                        extra_args=["--precision=bf16", f"--library={library}"])
    exact = np.matmul(bf16_round(a).astype(np.float64), bf16_round(b).astype(np.float64))
    plain = np.matmul(a.astype(np.float64), b.astype(np.float64))
    check(got, exact, plain, np.matmul(np.abs(a.astype(np.float64)), np.abs(b.astype(np.float64))))


# (input shape, filter shape, strides, padding, dilations, groups)
CONV_CASES = [
    ((1, 3, 8, 8), (4, 3, 3, 3), (1, 1), (0, 0, 0, 0), (1, 1), 1),
    ((2, 8, 9, 7), (6, 8, 3, 2), (2, 1), (1, 0, 1, 1), (1, 1), 1),
    ((2, 4, 10, 10), (6, 2, 3, 3), (1, 2), (1, 1, 1, 1), (2, 1), 2),
]


@pytest.mark.parametrize("library", LIBRARIES)
@pytest.mark.parametrize("constant_filter", [False, True])
@pytest.mark.parametrize("xs,ws,st,pd,dl,g", CONV_CASES)
def test_conv2d(tmp_path, rng, xs, ws, st, pd, dl, g, constant_filter, library):
    x, w = uniform(rng, xs), uniform(rng, ws)
    ref = conv2d_ref(x, w, st, pd, dl, g)
    xt, wt, ot = tensor_type(xs, "f32"), tensor_type(ws, "f32"), tensor_type(ref.shape, "f32")
    attrs = (f"{{strides = array<i64: {st[0]}, {st[1]}>, padding = array<i64: "
             f"{', '.join(map(str, pd))}>, dilations = array<i64: {dl[0]}, {dl[1]}>, "
             f"groups = {g}}}")
    inputs = [x] if constant_filter else [x, w]
    filt = "%w" if constant_filter else "%arg1"
    body = ""
    if constant_filter:
        # The weight arrives as a constant, converted at compile time.
        body += f"  %w = paddle.constant {dense(w)} : {wt}\n"
    body += (f"  %r = paddle.conv2d %arg0, {filt} {attrs} : {xt}, {wt} -> {ot}\n"
             f"  return %r : {ot}")
    (got,) = run_module(tmp_path, module(inputs, body, [ot]), inputs,
                        extra_args=["--precision=bf16", f"--library={library}"])
    exact = conv2d_ref(bf16_round(x), bf16_round(w), st, pd, dl, g)
    scale = conv2d_ref(np.abs(x), np.abs(w), st, pd, dl, g)
    check(got, exact, ref, scale)


@pytest.mark.parametrize("library", LIBRARIES)
def test_mlp_with_constant_weights(tmp_path, rng, library):
    """x @ W1 + b1 -> relu -> @ W2 + b2 with constant weights. The hidden
    activation is also returned, so each matmul is checked tightly against
    the rounding of its own inputs (a float64 reference of the hidden layer
    would round to bf16 differently where f32 sums land near a tie)."""
    x, w1, b1 = uniform(rng, (16, 96)), uniform(rng, (96, 64)), uniform(rng, (64,))
    w2, b2 = uniform(rng, (64, 10)), uniform(rng, (10,))
    ht, ot = "tensor<16x64xf32>", "tensor<16x10xf32>"
    body = f"""  %w1 = paddle.constant {dense(w1)} : tensor<96x64xf32>
  %b1 = paddle.constant {dense(b1)} : tensor<64xf32>
  %w2 = paddle.constant {dense(w2)} : tensor<64x10xf32>
  %b2 = paddle.constant {dense(b2)} : tensor<10xf32>
  %0 = paddle.matmul %arg0, %w1 : tensor<16x96xf32>, tensor<96x64xf32> -> {ht}
  %1 = paddle.add %0, %b1 : {ht}, tensor<64xf32> -> {ht}
  %h = paddle.relu %1 : {ht} -> {ht}
  %2 = paddle.matmul %h, %w2 : {ht}, tensor<64x10xf32> -> {ot}
  %y = paddle.add %2, %b2 : {ot}, tensor<10xf32> -> {ot}
  return %h, %y : {ht}, {ot}"""
    h, y = run_module(tmp_path, module([x], body, [ht, ot]), [x],
                      extra_args=["--precision=bf16", f"--library={library}"])
    f64 = np.float64
    h_exact = np.maximum(bf16_round(x).astype(f64) @ bf16_round(w1).astype(f64) + b1, 0)
    h_plain = np.maximum(x.astype(f64) @ w1.astype(f64) + b1, 0)
    check(h, h_exact, h_plain, matmul_scale(x, w1) + np.abs(b1))
    y_exact = bf16_round(h).astype(f64) @ bf16_round(w2).astype(f64) + b2
    y_plain = h.astype(f64) @ w2.astype(f64) + b2
    check(y, y_exact, y_plain, matmul_scale(h, w2) + np.abs(b2))


def residual_block(rng):
    """conv -> +bias -> relu (h) -> conv -> +h -> relu (y), constant
    weights; returns (module text, x, w1, b1, w2)."""
    # 8 input channels: the input's bf16 cast (which keeps the caller's
    # plain layout) then shares no workspace bytes with h's.
    x = uniform(rng, (1, 8, 12, 12))
    w1, w2 = uniform(rng, (16, 8, 3, 3)), uniform(rng, (16, 16, 3, 3))
    b1 = uniform(rng, (1, 16, 1, 1))
    xt, w1t = "tensor<1x8x12x12xf32>", "tensor<16x8x3x3xf32>"
    t, wt = "tensor<1x16x12x12xf32>", "tensor<16x16x3x3xf32>"
    conv = ("{strides = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>, "
            "dilations = array<i64: 1, 1>, groups = 1}")
    body = f"""  %w1 = paddle.constant {dense(w1)} : {w1t}
  %w2 = paddle.constant {dense(w2)} : {wt}
  %b1 = paddle.constant {dense(b1)} : tensor<1x16x1x1xf32>
  %0 = paddle.conv2d %arg0, %w1 {conv} : {xt}, {w1t} -> {t}
  %1 = paddle.add %0, %b1 : {t}, tensor<1x16x1x1xf32> -> {t}
  %h = paddle.relu %1 : {t} -> {t}
  %2 = paddle.conv2d %h, %w2 {conv} : {t}, {wt} -> {t}
  %3 = paddle.add %2, %h : {t}, {t} -> {t}
  %y = paddle.relu %3 : {t} -> {t}
  return %y : {t}"""
    return module([x], body, [t]), x, w1, b1, w2


@pytest.mark.parametrize("library", LIBRARIES)
def test_residual_conv_block(tmp_path, rng, library):
    """With oneDNN, the activation between the two convolutions is stored
    channels-last: the f32 output of the first and its bf16 cast, which the
    second reads (docs/onednn.md). The reference rounds h to bf16 as the
    compiled code does; where h's f32 value differs in its last bit from
    the float64 one and lies at a bf16 rounding boundary, the two round
    apart (one bf16 ulp of one term), hence 1e-4 of the scale."""
    text, x, w1, b1, w2 = residual_block(rng)
    (y,) = run_module(tmp_path, text, [x],
                      extra_args=["--precision=bf16", f"--library={library}"])
    pad, one = (1, 1, 1, 1), (1, 1)
    h = np.maximum(conv2d_ref(bf16_round(x), bf16_round(w1), one, pad, one, 1) + b1, 0)
    exact = np.maximum(conv2d_ref(bf16_round(h.astype(np.float32)), bf16_round(w2),
                                  one, pad, one, 1) + h, 0)
    hp = np.maximum(conv2d_ref(x, w1, one, pad, one, 1) + b1, 0)
    plain = np.maximum(conv2d_ref(hp, w2, one, pad, one, 1) + hp, 0)
    scale = conv2d_ref(np.abs(h), np.abs(w2), one, pad, one, 1) + np.abs(h)
    err = np.abs(y - exact)
    assert np.all(err <= 1e-4 * scale), float((err / scale).max())
    loose = np.abs(y - plain)
    assert np.all(loose <= 2e-2 * scale)
    assert (loose / scale).max() > 1e-5, "result looks like f32, not bf16"


def test_bf16_activations_stored_channels_last(tmp_path, rng):
    """The IR of the block above: h and its bf16 cast are NHWC views."""
    text, *_ = residual_block(rng)
    proc = subprocess.run(
        [str(PADDLE_OPT), "-", "--paddle-cpu-pipeline=precision=bf16 library=onednn",
         "--mlir-print-ir-after=paddle-use-onednn", "-o", str(tmp_path / "out.mlir")],
        input=text, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    nhwc = "strided<[2304, 1, 192, 16]>"
    assert f"memref<1x16x12x12xbf16, {nhwc}>" in proc.stderr
    assert f"memref<1x16x12x12xf32, {nhwc}>" in proc.stderr


def test_default_and_f32_precision_are_f32(tmp_path, rng):
    a, b = uniform(rng, (9, 70)), uniform(rng, (70, 11))
    body = ("  %r = paddle.matmul %arg0, %arg1 : tensor<9x70xf32>, tensor<70x11xf32> "
            "-> tensor<9x11xf32>\n  return %r : tensor<9x11xf32>")
    text = module([a, b], body, ["tensor<9x11xf32>"])
    plain = a.astype(np.float64) @ b.astype(np.float64)
    for extra in [[], ["--precision=f32"]]:
        (tmp := tmp_path / str(len(extra))).mkdir()
        (got,) = run_module(tmp, text, [a, b], extra_args=extra)
        np.testing.assert_allclose(got, plain, rtol=0, atol=1e-5 * matmul_scale(a, b).max())


def test_bf16_ops_call_the_bf16_kernels():
    """With bf16, --library=onednn calls oneDNN's bf16 matmul (bf16 inputs,
    f32 output; docs/bf16.md)."""
    text = ("func.func @main(%a: tensor<64x64xf32>, %b: tensor<64x64xf32>) -> tensor<64x64xf32> {\n"
            "  %r = paddle.matmul %a, %b : tensor<64x64xf32>, tensor<64x64xf32> -> tensor<64x64xf32>\n"
            "  return %r : tensor<64x64xf32>\n}\n")
    for precision, calls in [("f32", False), ("bf16", True)]:
        proc = subprocess.run(
            [str(PADDLE_OPT), "-",
             f"--paddle-cpu-pipeline=library=onednn precision={precision}"],
            input=text, capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0, proc.stderr
        assert "paddle_onednn_matmul" in proc.stdout
        assert ("paddle_onednn_matmul_bf16" in proc.stdout) == calls


def test_bf16_kernels_convert_where_onednn_has_none(tmp_path, rng):
    """oneDNN 2.6 has no bf16 kernels below AVX-512: capped at AVX2
    (ONEDNN_MAX_CPU_ISA), the runtime converts the bf16 inputs to f32 and
    runs the f32 primitive, which gives the same sums (ONEDNN_VERBOSE
    shows it ran on f32 sources)."""
    a, b = uniform(rng, (24, 300)), uniform(rng, (300, 40))
    x, w = uniform(rng, (1, 8, 10, 10)), uniform(rng, (16, 8, 3, 3))
    ref = conv2d_ref(x, w, (1, 1), (1, 1, 1, 1), (1, 1), 1)
    ot, rt = "tensor<24x40xf32>", tensor_type(ref.shape, "f32")
    body = (f"  %r = paddle.matmul %arg0, %arg1 : tensor<24x300xf32>, tensor<300x40xf32> -> {ot}\n"
            f"  %c = paddle.conv2d %arg2, %arg3 {{strides = array<i64: 1, 1>, padding = "
            f"array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, groups = 1}} : "
            f"tensor<1x8x10x10xf32>, tensor<16x8x3x3xf32> -> {rt}\n"
            f"  return %r, %c : {ot}, {rt}")
    text = module([a, b, x, w], body, [ot, rt])
    env = {"ONEDNN_MAX_CPU_ISA": "AVX2", "DNNL_MAX_CPU_ISA": "AVX2"}
    got, conv = run_module(tmp_path, text, [a, b, x, w], env=env,
                           extra_args=["--precision=bf16", "--library=onednn"])
    f64 = np.float64
    check(got, bf16_round(a).astype(f64) @ bf16_round(b).astype(f64),
          a.astype(f64) @ b.astype(f64), matmul_scale(a, b))
    check(conv, conv2d_ref(bf16_round(x), bf16_round(w), (1, 1), (1, 1, 1, 1), (1, 1), 1),
          ref, conv2d_ref(np.abs(x), np.abs(w), (1, 1), (1, 1, 1, 1), (1, 1), 1))
    (tmp_path / "module.mlir").write_text(text)
    args = []
    for i in range(4):
        args += ["--input", str(tmp_path / f"in{i}.npy")]
    proc = subprocess.run([str(PADDLE_RUN), str(tmp_path / "module.mlir"), "--precision=bf16",
                           "--library=onednn"] + args, capture_output=True, text=True,
                          timeout=300, env={**os.environ, **env, "ONEDNN_VERBOSE": "1"})
    assert proc.returncode == 0, proc.stderr
    runs = [line for line in proc.stdout.splitlines() if line.startswith("onednn_verbose,exec")
            or line.startswith("dnnl_verbose,exec")]
    kernels = [line for line in runs if ",matmul," in line or ",convolution," in line]
    assert kernels, proc.stdout[-2000:]
    assert all("src_f32" in line and "bf16" not in line.split("src_")[1].split(" ")[0]
               for line in kernels), kernels
    # The conversions ran: reorders from bf16.
    assert any(",reorder," in line and "src_bf16" in line for line in runs), runs


def test_core_compile_precision(ctx, rng):
    from paddle_mlir import _core
    a, b = uniform(rng, (12, 80)), uniform(rng, (80, 5))
    text = ("func.func @f(%a: tensor<12x80xf32>, %b: tensor<80x5xf32>) -> tensor<12x5xf32> {\n"
            "  %r = paddle.matmul %a, %b : tensor<12x80xf32>, tensor<80x5xf32> -> tensor<12x5xf32>\n"
            "  return %r : tensor<12x5xf32>\n}\n")
    m = _core.Module.parse(ctx, text)
    got = _core.compile(m, options="precision=bf16").run("f", [a, b])[0]
    exact = bf16_round(a).astype(np.float64) @ bf16_round(b).astype(np.float64)
    check(got, exact, a.astype(np.float64) @ b.astype(np.float64), matmul_scale(a, b))
    # The module itself stays f32 (compile lowers a clone).
    assert "bf16" not in str(m)
    f32 = _core.compile(m, options="precision=f32").run("f", [a, b])[0]
    np.testing.assert_allclose(f32, a.astype(np.float64) @ b, rtol=0,
                               atol=1e-5 * matmul_scale(a, b).max())
    with pytest.raises(ValueError, match="precision must be f32 or bf16; got 'fp8'"):
        _core.compile(m, options="precision=fp8")


@pytest.mark.parametrize("library", ["auto", "onednn"])
def test_aot_bf16_matches_jit(tmp_path, rng, library):
    a, b = uniform(rng, (8, 48)), uniform(rng, (48, 8))
    body = ("  %r = paddle.matmul %arg0, %arg1 : tensor<8x48xf32>, tensor<48x8xf32> "
            "-> tensor<8x8xf32>\n  return %r : tensor<8x8xf32>")
    text = module([a, b], body, ["tensor<8x8xf32>"])
    (path := tmp_path / "m.mlir").write_text(text)
    so = tmp_path / "m.so"
    proc = subprocess.run([str(PADDLE_COMPILE), str(path), "-o", str(so), "--emit", "so",
                           "--precision=bf16", f"--library={library}"],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    if library == "onednn":  # the artifact calls oneDNN's bf16 matmul
        assert b"paddle_onednn_matmul_bf16" in so.read_bytes()
    inputs = []
    for i, x in enumerate([a, b]):
        np.save(tmp_path / f"x{i}.npy", x)
        inputs += ["--input", str(tmp_path / f"x{i}.npy")]
    proc = subprocess.run([str(PADDLE_RUN), str(so), "--output-dir", str(tmp_path / "aot")]
                          + inputs, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    aot = np.load(tmp_path / "aot" / "main_0.npy")
    (tmp_path / "jit").mkdir()
    (jit,) = run_module(tmp_path / "jit", text, [a, b],
                        extra_args=["--precision=bf16", f"--library={library}"])
    np.testing.assert_array_equal(aot, jit)
    exact = bf16_round(a).astype(np.float64) @ bf16_round(b).astype(np.float64)
    check(jit, exact, a.astype(np.float64) @ b, matmul_scale(a, b))
    # A compiled library has its precision already.
    proc = subprocess.run([str(PADDLE_RUN), str(so), "--precision=bf16"] + inputs,
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1
    assert "compile options (precision=bf16) apply when compiling a module" in proc.stderr


@pytest.mark.parametrize("value", ["fp16", "BF16"])
def test_bad_precision_flag(tmp_path, value):
    text = ("func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {\n"
            "  return %a : tensor<2xf32>\n}\n")
    with pytest.raises(PaddleRunError, match=f"--precision must be f32 or bf16; got '{value}'"):
        run_module(tmp_path, text, [np.zeros(2, np.float32)], extra_args=[f"--precision={value}"])
    (path := tmp_path / "m.mlir").write_text(text)
    proc = subprocess.run([str(PADDLE_COMPILE), str(path), "-o", str(tmp_path / "m.so"),
                           f"--precision={value}"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1
    assert f"--precision must be f32 or bf16; got '{value}'" in proc.stderr
    assert not (tmp_path / "m.so").exists()


def test_empty_precision_flag(tmp_path):
    text = ("func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {\n"
            "  return %a : tensor<2xf32>\n}\n")
    with pytest.raises(PaddleRunError, match="--precision needs a value"):
        run_module(tmp_path, text, [np.zeros(2, np.float32)], extra_args=["--precision="])


def test_bad_precision_pipeline_option():
    proc = subprocess.run([str(PADDLE_OPT), "-", "--paddle-cpu-pipeline=precision=f16"],
                          input="", capture_output=True, text=True, timeout=60)
    assert proc.returncode != 0 and proc.returncode < 128
    assert "precision" in proc.stderr and "f16" in proc.stderr


@pytest.mark.parametrize("shape", [(64, 256, 128), (2, 8, 96, 48)])
def test_tiled_bf16_matmul_equals_scalar(tmp_path, rng, shape):
    """paddle-tile-and-vectorize takes bf16-input matmuls (extended to f32
    in registers). A product of two bf16 values is exact in f32, so the
    FMAs of the tiles give the scalar loops' result bit for bit."""
    *batch, m, k, n = shape
    a, b = uniform(rng, (*batch, m, k)), uniform(rng, (*batch, k, n))
    at, bt = tensor_type(a.shape, "f32"), tensor_type(b.shape, "f32")
    ot = tensor_type((*batch, m, n), "f32")
    text = module([a, b], f"  %r = paddle.matmul %arg0, %arg1 : {at}, {bt} -> {ot}\n"
                          f"  return %r : {ot}", [ot])
    proc = subprocess.run(
        [str(PADDLE_OPT), "-",
         "--paddle-cpu-pipeline=precision=bf16 library=none vector-bits=256"],
        input=text, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "-> vector<16xbf16>" in proc.stdout  # B rows loaded as bf16 vectors
    results = []
    for tile in ("0", "1"):
        (tmp := tmp_path / tile).mkdir()
        results += run_module(tmp, text, [a, b], extra_args=[
            "--precision=bf16", "--library=none", f"--tile-and-vectorize={tile}"])
    np.testing.assert_array_equal(results[0], results[1])
    f64 = np.float64
    exact = np.matmul(bf16_round(a).astype(f64), bf16_round(b).astype(f64))
    plain = np.matmul(a.astype(f64), b.astype(f64))
    check(results[1], exact, plain, np.matmul(np.abs(a.astype(f64)), np.abs(b.astype(f64))))
