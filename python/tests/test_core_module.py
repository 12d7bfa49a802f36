"""paddle_mlir._core: parsing, printing, saving and transforming modules."""

import os

import numpy as np
import pytest

from paddle_mlir import _core as C

ADD = """
func.func @f(%a: tensor<3xf32>, %b: tensor<3xf32>) -> tensor<3xf32> {
  %0 = paddle.add %a, %b : tensor<3xf32>, tensor<3xf32> -> tensor<3xf32>
  return %0 : tensor<3xf32>
}
"""


def run_f(m, *args):
    return C.compile(m).run("f", list(args))


def test_parse_print_and_clone(ctx):
    m = C.Module.parse(ctx, ADD, name="add.mlir")
    assert m.function_names() == ["f"]
    assert "paddle.add" in str(m) and "loc(" not in str(m)
    assert 'loc("add.mlir":3:' in m.to_text(debug_info=True)
    assert '"paddle.add"' in m.to_text(generic=True)
    c = m.clone()
    c.erase_function("f")
    assert c.function_names() == [] and m.function_names() == ["f"]
    assert m.context is not None


def test_save_and_load_text_and_bytecode(ctx, tmp_path):
    m = C.Module.parse(ctx, ADD)
    a = np.arange(3, dtype=np.float32)
    for name in ("m.mlir", "m.mlirbc"):
        path = str(tmp_path / name)
        m.save(path)
        loaded = C.Module.load(ctx, path)
        assert str(loaded) == str(m)
        np.testing.assert_array_equal(run_f(loaded, a, a)[0], a + a)
    with open(tmp_path / "m.mlirbc", "rb") as f:
        assert f.read(4) == b"ML\xefR"  # the bytecode magic number
    # Bytes from to_bytecode parse back as well.
    assert str(C.Module.parse(ctx, m.to_bytecode())) == str(m)
    # Nothing else was left in the folder (the writes went through renames).
    assert sorted(os.listdir(tmp_path)) == ["m.mlir", "m.mlirbc"]


def test_run_passes_canonicalize_folds(ctx):
    m = C.Module(ctx)
    fb = m.add_function("f", [])
    c1 = fb.constant(np.array([1.0, 2.0], np.float32))
    c2 = fb.constant(np.array([3.0, 5.0], np.float32))
    (s,) = fb.op("paddle.add", [c1, c2])
    fb.ret([s])
    assert "paddle.add" in str(m)
    m.run_passes("builtin.module(canonicalize,cse)")
    assert "paddle.add" not in str(m)
    np.testing.assert_array_equal(C.compile(m).run("f", [])[0], [4.0, 7.0])
    # A bare pipeline is anchored on the module.
    m.run_passes("canonicalize")


def test_attributes_and_declarations(ctx):
    m = C.Module.parse(ctx, ADD)
    m.set_function_attr("f", "user.test", "42 : i64")
    m.set_arg_attr("f", 1, "user.note", '"b"')
    m.add_declaration("f_vjp", ["tensor<3xf32>", "tensor<3xf32>"],
                      ["tensor<3xf32>"])
    m.set_function_attr("f_vjp", "paddle.vjp_of", "@f")
    m.set_function_attr("f_vjp", "paddle.wrt", "array<i64: 0, 1>")
    m.verify()
    text = str(m)
    assert "user.test = 42 : i64" in text
    assert 'user.note = "b"' in text
    assert ("func.func private @f_vjp(tensor<3xf32>, tensor<3xf32>) -> "
            "tensor<3xf32> attributes {paddle.vjp_of = @f, "
            "paddle.wrt = array<i64: 0, 1>}") in text
    # paddle.* attributes are declared (PaddleBase.td): another is an error.
    m.set_function_attr("f", "paddle.test", "42 : i64")
    with pytest.raises(C.MLIRError, match="unknown attribute 'paddle.test'"):
        m.verify()


def test_inline_call_from_another_module(ctx, rng):
    lib = C.Module.parse(ctx, ADD)
    m = C.Module(ctx)
    fb = m.add_function("g", ["tensor<3xf32>"])
    (x,) = fb.args
    (y,) = fb.inline_call(lib, "f", [x, x], loc=("caller.py", 7, 3))
    (z,) = fb.op("paddle.mul", [y, x])
    fb.ret([z])
    assert "call" not in str(m)
    assert "caller.py" in m.to_text(debug_info=True)
    a = rng.standard_normal(3).astype(np.float32)
    np.testing.assert_allclose(C.compile(m).run("g", [a])[0], (a + a) * a,
                               rtol=1e-6)


def test_our_passes_and_pipelines_are_registered(ctx):
    m = C.Module.parse(ctx, ADD)
    m.run_passes("builtin.module(inline,func.func(paddle-convert-paddle-to-linalg),"
                 "canonicalize,cse)")
    text = str(m)
    assert "paddle.add" not in text and "linalg" in text
    lowered = C.Module.parse(ctx, ADD)
    lowered.run_passes("paddle-cpu-pipeline")
    assert "llvm.func" in str(lowered)
