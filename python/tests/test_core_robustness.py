"""paddle_mlir._core: misuse and run-time failures give clear Python
exceptions (never a crash); donation, memory limits, threads."""

import threading
from pathlib import Path

import numpy as np
import pytest

from paddle_mlir import _core as C

REPO = Path(__file__).resolve().parents[2]
ADD = """
func.func @f(%a: tensor<3xf32>, %b: tensor<3xf32>) -> tensor<3xf32> {
  %0 = paddle.add %a, %b : tensor<3xf32>, tensor<3xf32> -> tensor<3xf32>
  return %0 : tensor<3xf32>
}
"""


def test_verify_failure_names_user_location(ctx):
    m = C.Module(ctx)
    m.add_function("f", ["tensor<2xf32>"], loc=("user.py", 21, 4))
    with pytest.raises(C.MLIRError) as e:
        m.verify()  # the body has no terminator
    assert "the module does not verify" in str(e.value)
    assert "user.py:21:4: error:" in str(e.value)


def test_file_errors(ctx, tmp_path):
    m = C.Module.parse(ctx, ADD)
    target = tmp_path / "no-such-dir" / "m.mlir"
    with pytest.raises(OSError, match="cannot write .*no-such-dir"):
        m.save(str(target))
    with pytest.raises(OSError, match="cannot read .*missing.mlir"):
        C.Module.load(ctx, str(tmp_path / "missing.mlir"))
    good = tmp_path / "m.mlirbc"
    m.save(str(good))
    corrupt = tmp_path / "corrupt.mlirbc"
    corrupt.write_bytes(good.read_bytes()[:40])
    with pytest.raises(C.MLIRError, match=r"corrupt.mlirbc' is not valid MLIR bytecode: "
                       r"section \d+ at byte \d+ is \d+ bytes long, past the end of the file"):
        C.Module.load(ctx, str(corrupt))
    with pytest.raises(C.MLIRError, match="'<string>' is not valid MLIR bytecode"):
        C.Module.parse(ctx, b"ML\xefR\x00garbage")


def test_pipeline_errors(ctx):
    m = C.Module.parse(ctx, ADD)
    with pytest.raises(C.MLIRError, match="invalid pass pipeline"):
        m.run_passes("builtin.module(no-such-pass)")
    with pytest.raises(C.MLIRError, match="invalid pass pipeline"):
        m.run_passes("canonicalize{bogus-option=1}")
    # The module is unchanged and still compiles.
    a = np.ones(3, np.float32)
    np.testing.assert_array_equal(C.compile(m).run("f", [a, a])[0], 2 * a)


def test_stale_values_and_closed_builders(ctx):
    m = C.Module(ctx)
    fb = m.add_function("f", ["tensor<2xf32>"])
    (x,) = fb.args
    (n,) = fb.op("paddle.neg", [x])
    fb.ret([n])
    with pytest.raises(RuntimeError, match="ret\\(\\) was called"):
        fb.op("paddle.neg", [x])
    m.run_passes("canonicalize")
    with pytest.raises(RuntimeError, match="transformed"):
        x.type
    assert "stale" in repr(x)
    fb2 = m.add_function("g", ["tensor<2xf32>"])
    m.erase_function("f")
    with pytest.raises(RuntimeError, match="transformed"):
        fb2.args
    with pytest.raises(ValueError, match="no function 'nope'"):
        m.erase_function("nope")
    with pytest.raises(ValueError, match="already has a symbol 'g'"):
        m.add_function("g", [])
    with pytest.raises(ValueError, match="visibility"):
        m.add_function("h", [], visibility="secret")
    with pytest.raises(IndexError, match="no argument 3"):
        m.set_arg_attr("g", 3, "a", "unit")
    with pytest.raises(C.MLIRError, match="invalid attribute"):
        m.set_function_attr("g", "a", "[1,")


def test_operands_from_elsewhere_are_rejected(ctx):
    m = C.Module(ctx)
    f = m.add_function("f", ["tensor<2xf32>"])
    g = m.add_function("g", ["tensor<2xf32>"])
    with pytest.raises(ValueError, match="operand 0 is not a value of "
                                         "function 'g'"):
        g.op("paddle.neg", f.args)
    with pytest.raises(ValueError, match="not a value of function 'g'"):
        g.ret(f.args)


def test_inline_call_errors(ctx):
    lib = C.Module.parse(ctx, ADD)
    m = C.Module(ctx)
    fb = m.add_function("g", ["tensor<3xf32>", "tensor<4xf32>"])
    x, y = fb.args
    with pytest.raises(ValueError, match="takes 2 arguments, 1 given"):
        fb.inline_call(lib, "f", [x])
    with pytest.raises(ValueError, match="argument 1 has type tensor<3xf32>"):
        fb.inline_call(lib, "f", [x, y])
    with pytest.raises(ValueError, match="no such function"):
        fb.inline_call(lib, "nope", [x, x])
    with pytest.raises(ValueError, match="another Context"):
        fb.inline_call(C.Module.parse(C.Context(), ADD), "f", [x, x])
    with pytest.raises(ValueError, match="cannot inline itself"):
        fb.inline_call(m, "g", [x, y])
    lib.add_declaration("d", ["tensor<3xf32>"], ["tensor<3xf32>"])
    with pytest.raises(ValueError, match="declaration"):
        fb.inline_call(lib, "d", [x])


def test_constant_errors(ctx):
    m = C.Module(ctx)
    fb = m.add_function("f", [])
    with pytest.raises(TypeError, match="unsupported dtype uint8"):
        fb.constant(np.zeros(3, np.uint8))
    with pytest.raises(TypeError, match="unsupported dtype object"):
        fb.constant(np.array([None, 1], dtype=object))
    # Non-native byte order and views are converted, not misread.
    big_endian = np.arange(6, dtype=">i4").reshape(2, 3)[:, ::2]
    c = fb.constant(big_endian)
    fb.ret([c])
    (out,) = C.compile(m).run("f", [])
    np.testing.assert_array_equal(out, [[0, 2], [3, 5]])


def test_compile_errors(ctx):
    with pytest.raises(C.MLIRError, match="compilation failed"):
        C.compile(C.Module(ctx))  # no public function
    m = C.Module.parse(ctx, ADD)
    with pytest.raises(ValueError, match="opt_level"):
        C.compile(m, opt_level=7)


def test_run_time_check_failure_is_value_error(ctx):
    m = C.Module.parse(ctx, """
    func.func @f(%a: tensor<?xf32>, %b: tensor<?xf32>) -> tensor<?xf32> {
      %0 = paddle.add %a, %b : tensor<?xf32>, tensor<?xf32> -> tensor<?xf32>
      return %0 : tensor<?xf32>
    }""")
    exe = C.compile(m)
    with pytest.raises(ValueError):
        exe.run("f", [np.ones(3, np.float32), np.ones(4, np.float32)])
    # The session is still usable afterwards.
    (out,) = exe.run("f", [np.ones(5, np.float32), np.ones(5, np.float32)])
    np.testing.assert_array_equal(out, np.full(5, 2, np.float32))


def test_memory_limit_is_memory_error(ctx, rng):
    m = C.Module.load(ctx, str(REPO / "examples" / "mlp" / "mlp.mlir"))
    f = np.float32
    args = [rng.standard_normal((64, 64)).astype(f),
            rng.standard_normal((64, 128)).astype(f),
            rng.standard_normal(128).astype(f),
            rng.standard_normal((128, 10)).astype(f),
            rng.standard_normal(10).astype(f)]
    name = C.compile(m).functions()[0]
    # The first layer alone needs 64 x 128 floats (32 KiB).
    with pytest.raises(MemoryError, match="out of memory"):
        C.compile(m, memory_limit=16 * 1024).run(name, args)
    probs, classes = C.compile(m, memory_limit=1 << 20).run(name, args)
    assert probs.shape == (64, 10) and classes.shape == (64,)


def test_concurrent_runs_release_the_gil(ctx, rng):
    m = C.Module(ctx)
    fb = m.add_function("f", ["tensor<64x64xf32>", "tensor<64x64xf32>"])
    (p,) = fb.op("paddle.matmul", fb.args)
    fb.ret(fb.op("paddle.tanh", [p]))
    exe = C.compile(m)
    inputs = [(rng.standard_normal((64, 64)).astype(np.float32),
               rng.standard_normal((64, 64)).astype(np.float32))
              for _ in range(4)]
    expected = [np.tanh(a @ b) for a, b in inputs]
    errors = []

    def worker(i):
        try:
            for _ in range(20):
                (out,) = exe.run("f", list(inputs[i]))
                np.testing.assert_allclose(out, expected[i], rtol=1e-4,
                                           atol=1e-5)
        except Exception as e:  # reported below, on the main thread
            errors.append(e)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors


DONATE = """
func.func @step(%w: tensor<4xf32> {paddle.aliasing_output = 0 : i64},
                %g: tensor<4xf32>) -> (tensor<4xf32>, tensor<f32>) {
  %0 = paddle.sub %w, %g : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  %1 = paddle.reduce_sum %g : tensor<4xf32> -> tensor<f32>
  return %0, %1 : tensor<4xf32>, tensor<f32>
}
"""


def test_donated_inputs(ctx, rng):
    exe = C.compile(C.Module.parse(ctx, DONATE))
    sig = exe.signature("step")
    assert sig["aliases"] == {0: 0}
    assert sig["outputs"] == [("f32", ())]
    w = rng.standard_normal(4).astype(np.float32)
    g = rng.standard_normal(4).astype(np.float32)
    w0 = w.copy()
    (total,) = exe.run("step", [w, g])  # result 0 lands in w
    np.testing.assert_allclose(w, w0 - g, rtol=1e-6)
    np.testing.assert_allclose(total, g.sum(), rtol=1e-5)
    strided = np.zeros(8, np.float32)[::2]
    with pytest.raises(ValueError, match="argument 0 of 'step' is donated.*"
                                         "C-contiguous"):
        exe.run("step", [strided, g])
    frozen = w.copy()
    frozen.flags.writeable = False
    with pytest.raises(ValueError, match="argument 0 of 'step' is donated.*"
                                         "writable"):
        exe.run("step", [frozen, g])
    with pytest.raises(ValueError, match="argument 0 of 'step'.*float64"):
        exe.run("step", [w.astype(np.float64), g])
    with pytest.raises(ValueError, match="argument 0 of 'step' is donated"):
        exe.run("step", [list(w), g])
