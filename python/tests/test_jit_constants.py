"""Large constants (the weights) leave the JIT's LLVM module.

JitModule::create keeps every constant of at least 4 KiB in one block of
memory outside the generated code and resolves the globals to it
(lib/Execution/Jit.cpp); smaller ones stay in the module. These tests check
the values the code reads on both sides of the threshold and for several
element types, against numpy, and count the bytes that moved with
`memory_stats()["constant_bytes"]`.
"""

import gc

import numpy as np
import pytest

from paddle_mlir import _core

from paddle_testing import tensor_type

THRESHOLD = 4096


def dense_hex(values):
    """An MLIR dense attribute literal holding `values`' bytes."""
    return 'dense<"0x' + np.ascontiguousarray(values).tobytes().hex().upper() + '">'


def add_constants_module(constants):
    """@main(x_i...) returns x_i + c_i for each constant c_i."""
    args, lines, results, returns = [], [], [], []
    for i, c in enumerate(constants):
        t = tensor_type(c.shape, c.dtype)
        args.append(f"%arg{i}: {t}")
        lines.append(f"  %c{i} = paddle.constant {dense_hex(c)} : {t}")
        lines.append(f"  %r{i} = paddle.add %arg{i}, %c{i} : {t}, {t} -> {t}")
        results.append(t)
        returns.append(f"%r{i}")
    return (f"func.func @main({', '.join(args)}) -> ({', '.join(results)}) {{\n"
            + "\n".join(lines) + "\n  return " + ", ".join(returns) + " : "
            + ", ".join(results) + "\n}\n")


def parse(text):
    return _core.Module.parse(_core.Context(), text)


def compile_text(text):
    return _core.compile(parse(text))


@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.float64, np.int8,
                                   np.int32, np.int64])
def test_values_of_large_constants(rng, dtype):
    shape = (65, 67)  # odd sizes: no element count is a multiple of a vector
    if np.issubdtype(dtype, np.integer):
        c = rng.integers(-100, 100, size=shape).astype(dtype)
        x = rng.integers(-20, 20, size=shape).astype(dtype)
    else:
        c = rng.standard_normal(shape).astype(dtype)
        x = rng.standard_normal(shape).astype(dtype)
    assert c.nbytes >= THRESHOLD
    exe = compile_text(add_constants_module([c]))
    (r,) = exe.run("main", [x])
    np.testing.assert_array_equal(r, x + c)
    assert exe.memory_stats()["constant_bytes"] == c.nbytes


def test_threshold(rng):
    """4096 bytes move; 4092 stay in the module. Both read back exactly."""
    at = rng.standard_normal(THRESHOLD // 4).astype(np.float32)
    below = rng.standard_normal(THRESHOLD // 4 - 1).astype(np.float32)
    for c, moved in [(at, at.nbytes), (below, 0)]:
        exe = compile_text(add_constants_module([c]))
        x = rng.standard_normal(c.shape).astype(np.float32)
        (r,) = exe.run("main", [x])
        np.testing.assert_array_equal(r, x + c)
        assert exe.memory_stats()["constant_bytes"] == moved


def test_several_constants_keep_their_alignment_and_order(rng):
    """Constants of mixed sizes and types share the block, each aligned."""
    cs = [rng.standard_normal((64, 65)).astype(np.float32),
          rng.integers(-9, 9, size=(4099,)).astype(np.int8),
          rng.standard_normal((3, 7, 99)).astype(np.float64),
          rng.standard_normal((5,)).astype(np.float32),  # stays in the module
          rng.standard_normal((1025,)).astype(np.float32)]
    exe = compile_text(add_constants_module(cs))
    xs = [np.ones_like(c) for c in cs]
    rs = exe.run("main", xs)
    for r, x, c in zip(rs, xs, cs):
        np.testing.assert_array_equal(r, x + c)
    assert exe.memory_stats()["constant_bytes"] == sum(
        c.nbytes for c in cs if c.nbytes >= THRESHOLD)


def test_constants_outlive_the_module_and_die_with_the_executable(rng):
    """The executable owns the block: it keeps working after the module and
    other executables are gone, and many compiles do not pile up."""
    c = rng.standard_normal((256, 64)).astype(np.float32)
    module = parse(add_constants_module([c]))
    exes = [_core.compile(module) for _ in range(3)]
    del module
    del exes[0], exes[0]
    gc.collect()
    x = rng.standard_normal(c.shape).astype(np.float32)
    for _ in range(3):
        (r,) = exes[0].run("main", [x])
        np.testing.assert_array_equal(r, x + c)


def test_weights_of_a_matmul_layer(rng):
    """A constant weight used by a kernel of ours (no oneDNN), not only by an
    elementwise op, reads back the same."""
    w = rng.standard_normal((96, 80)).astype(np.float32)
    x = rng.standard_normal((8, 96)).astype(np.float32)
    tw, tx, tr = (tensor_type(w.shape, w.dtype), tensor_type(x.shape, x.dtype),
                  tensor_type((8, 80), np.float32))
    text = (f"func.func @main(%x: {tx}) -> {tr} {{\n"
            f"  %w = paddle.constant {dense_hex(w)} : {tw}\n"
            f"  %r = paddle.matmul %x, %w : {tx}, {tw} -> {tr}\n"
            f"  return %r : {tr}\n}}\n")
    for library in ["none", "onednn"]:
        exe = _core.compile(parse(text), options=f"library={library}")
        (r,) = exe.run("main", [x])
        np.testing.assert_allclose(r, x.astype(np.float64) @ w, rtol=1e-5, atol=1e-5)
        assert exe.memory_stats()["constant_bytes"] == w.nbytes

