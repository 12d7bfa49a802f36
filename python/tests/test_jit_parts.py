"""The JIT compiles a module in parts, on several threads.

JitModule::create splits the lowered module into parts (sets of kernels
that call one another; each entry function alone), translates each into its
own LLVM context and compiles them at once (lib/Execution/Jit.cpp); a
loop-free entry function is compiled unoptimized. These tests check that the
code is the same whatever the number of parts: results bit for bit equal
across `compile_threads`, and against numpy.
"""

import numpy as np
import pytest

from paddle_mlir import _core

from paddle_testing import tensor_type

OPS = ["tanh", "exp", "neg", "abs", "sqrt", "sigmoid", "tanh", "exp"]


def many_kernels_module(shapes):
    """@main(x_i...) -> (op_i(x_i) * x_i ...): one kernel per input (the
    shapes differ, so no two fuse), and a matmul of the first two."""
    args, lines, results, returns = [], [], [], []
    for i, (shape, op) in enumerate(zip(shapes, OPS)):
        t = tensor_type(shape, np.float32)
        args.append(f"%arg{i}: {t}")
        lines.append(f"  %u{i} = paddle.{op} %arg{i} : {t} -> {t}")
        lines.append(f"  %r{i} = paddle.mul %u{i}, %arg{i} : {t}, {t} -> {t}")
        results.append(t)
        returns.append(f"%r{i}")
    ta, tb = tensor_type(shapes[0], np.float32), tensor_type(shapes[1], np.float32)
    tm = tensor_type((shapes[0][0], shapes[1][1]), np.float32)
    lines.append(f"  %m = paddle.matmul %arg0, %arg1 : {ta}, {tb} -> {tm}")
    results.append(tm)
    returns.append("%m")
    return (f"func.func @main({', '.join(args)}) -> ({', '.join(results)}) {{\n"
            + "\n".join(lines) + "\n  return " + ", ".join(returns) + " : "
            + ", ".join(results) + "\n}\n")


def reference(xs):
    f = {"tanh": np.tanh, "exp": np.exp, "neg": np.negative, "abs": np.abs,
         "sqrt": np.sqrt, "sigmoid": lambda v: 1 / (1 + np.exp(-v))}
    out = [f[op](x.astype(np.float64)) * x for x, op in zip(xs, OPS)]
    return out + [xs[0].astype(np.float64) @ xs[1]]


@pytest.fixture
def many_kernels(rng):
    shapes = [(32, 48), (48, 40)] + [(64, 100 + 3 * i) for i in range(6)]
    xs = [rng.uniform(0.1, 2.0, size=s).astype(np.float32) for s in shapes]
    return many_kernels_module(shapes), xs


def compile_text(text, **kwargs):
    return _core.compile(_core.Module.parse(_core.Context(), text), **kwargs)


def test_results_do_not_depend_on_the_parts(many_kernels):
    text, xs = many_kernels
    runs = {}
    for threads in [1, 2, 3, 8]:
        exe = compile_text(text, compile_threads=threads)
        runs[exe.compile_parts()] = exe.run("main", xs)
    # Eight kernels of different cost and the entry: each count is reached.
    assert sorted(runs) == [1, 2, 3, 8]
    for got in runs.values():
        for g, w in zip(got, runs[1]):
            np.testing.assert_array_equal(g, w)
    for g, r in zip(runs[1], reference(xs)):
        np.testing.assert_allclose(g, r, rtol=2e-6, atol=1e-6)


def test_default_is_one_part_per_core(many_kernels):
    import os
    text, xs = many_kernels
    exe = compile_text(text)
    assert exe.compile_parts() == min(os.cpu_count(), 8)
    np.testing.assert_allclose(exe.run("main", xs)[2], reference(xs)[2], rtol=2e-6)


def test_a_small_module_is_one_part():
    t = tensor_type((4,), np.float32)
    text = (f"func.func @main(%a: {t}) -> {t} {{\n"
            f"  %r = paddle.tanh %a : {t} -> {t}\n  return %r : {t}\n}}\n")
    exe = compile_text(text, compile_threads=4)
    assert exe.compile_parts() == 1
    x = np.linspace(-2, 2, 4, dtype=np.float32)
    np.testing.assert_allclose(exe.run("main", [x])[0], np.tanh(x), rtol=1e-6)


def test_paddle_run_compile_threads(tmp_path, many_kernels):
    """paddle-run --compile-threads gives the same results bit for bit."""
    from paddle_testing import run_module
    text, xs = many_kernels
    (tmp_path / "one").mkdir()
    (tmp_path / "four").mkdir()
    one = run_module(tmp_path / "one", text, xs, extra_args=["--compile-threads", "1"])
    four = run_module(tmp_path / "four", text, xs, extra_args=["--compile-threads", "4"])
    for a, b in zip(one, four):
        np.testing.assert_array_equal(a, b)


def test_entry_functions_with_and_without_loops(rng):
    """A loop-free entry function (calls and descriptors) is compiled
    unoptimized; one with a loop of its own (here a sequential sum that no
    kernel takes) keeps -O3. Both compute the same as numpy."""
    n = 1000
    t = f"tensor<{n}xf32>"
    text = (f"func.func @main(%x: {t}) -> tensor<1xf32> {{\n"
            "  %c0 = arith.constant 0 : index\n  %c1 = arith.constant 1 : index\n"
            f"  %n = arith.constant {n} : index\n  %z = arith.constant 0.0 : f32\n"
            "  %s = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %z) -> (f32) {\n"
            f"    %v = tensor.extract %x[%i] : {t}\n"
            "    %w = arith.mulf %v, %v : f32\n    %a = arith.addf %acc, %w : f32\n"
            "    scf.yield %a : f32\n  }\n"
            "  %r = tensor.from_elements %s : tensor<1xf32>\n"
            "  return %r : tensor<1xf32>\n}\n")
    x = rng.standard_normal(n).astype(np.float32)
    (r,) = compile_text(text).run("main", [x])
    exact = np.sum(x.astype(np.float64) ** 2)
    np.testing.assert_allclose(r[0], exact, rtol=1e-5)
    # The loop-free case: every model above; here with a kernel per op.
    t4 = tensor_type((4,), np.float32)
    text = (f"func.func @main(%a: {t4}) -> {t4} {{\n"
            f"  %e = paddle.exp %a : {t4} -> {t4}\n"
            f"  %r = paddle.mul %e, %a : {t4}, {t4} -> {t4}\n  return %r : {t4}\n}}\n")
    x4 = np.array([-1.5, 0.0, 0.5, 2.0], np.float32)
    np.testing.assert_allclose(compile_text(text).run("main", [x4])[0],
                               np.exp(x4) * x4, rtol=1e-6)
