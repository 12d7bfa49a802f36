"""Hostile shapes and indices (issue 34): sizes that overflow 64 bits are
rejected where the types are built (every op's verifier, the Python builder,
the ONNX importer); sizes and indices only the run knows are checked by the
compiled code, which fails with the op and its location instead of crashing
or returning uninitialized memory."""

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper
from onnx_testing import context, node_model
from paddle_testing import RUNTIME_CHECK_ERROR, PaddleRunError, run_module

from paddle_mlir import _core as C
from paddle_mlir.onnx import OnnxImportError, import_model

MAX = 2**63 - 1


# ---------------------------------------------------------------------------
# Static sizes: one check for every op
# ---------------------------------------------------------------------------

def build_error(ctx, arg_types, op, operands, attrs=None, result_types=None):
    m = C.Module(ctx)
    fb = m.add_function("f", arg_types)
    with pytest.raises(C.MLIRError) as e:
        fb.op(op, [fb.args[i] for i in operands], attrs,
              result_types=result_types, loc=("model.py", 7, 3))
    return str(e.value)


@pytest.mark.parametrize("op,arg_types,operands,attrs,result_types", [
    # [MAX, MAX] is one element modulo 2^64: a corrupt .npy header, and a
    # reduction over it crashed.
    ("paddle.broadcast_to", ["tensor<f32>"], [0],
     {"shape": f"array<i64: {MAX}, {MAX}>"}, None),
    ("paddle.broadcast_to", ["tensor<i64>"], [0],
     {"shape": "array<i64: 2305843009213693952>"}, None),
    ("paddle.reshape", ["tensor<?xi8>"], [0],
     {"shape": "array<i64: 4294967296, 4294967296>"},
     ["tensor<4294967296x4294967296xi8>"]),
    ("paddle.concat", ["tensor<?x4294967296xf32>"], [0, 0],
     {"axis": "0 : i64"}, ["tensor<4294967296x4294967296xf32>"]),
    ("paddle.iota", [], [], {"dimension": "0 : i64"},
     [f"tensor<{MAX}x{MAX}xi32>"]),
    ("paddle.rng_uniform", ["tensor<i64>"], [0], None,
     ["tensor<4611686018427387904xf32>"]),
    ("paddle.neg", ["tensor<3037000500x3037000500xf32>"], [0], None, None),
])
def test_static_size_overflow_is_a_build_error(ctx, op, arg_types, operands,
                                               attrs, result_types):
    text = build_error(ctx, arg_types, op, operands, attrs, result_types)
    assert "model.py:7:3: error:" in text
    assert f"'{op}' op" in text and "more than 2^63 - 1 bytes" in text


def test_full_of_overflowing_shape(ctx):
    """A full() of the frontend: a scalar constant broadcast to the shape."""
    m = C.Module(ctx)
    fb = m.add_function("f", [])
    one = fb.constant(np.float32(1.0))
    with pytest.raises(C.MLIRError, match=r"result #0 has shape \[9223372036854775807, "
                       r"9223372036854775807\] of 'f32': more than 2\^63 - 1 bytes"):
        fb.op("paddle.broadcast_to", [one], {"shape": f"array<i64: {MAX}, {MAX}>"})


def test_huge_splat_constant_module_runs_out_of_memory(tmp_path):
    """A splat of 10^11 floats is filled when the code runs: an ordinary
    out-of-memory error, where LLVM expanding it aborted the process."""
    text = ("func.func @main() -> tensor<100000000000xf32> {\n"
            "  %0 = paddle.constant dense<1.0> : tensor<100000000000xf32>\n"
            "  return %0 : tensor<100000000000xf32>\n}\n")
    with pytest.raises(PaddleRunError, match="out of memory"):
        run_module(tmp_path, text, [], extra_args=["--memory-limit", "64M"])


# ---------------------------------------------------------------------------
# The ONNX importer
# ---------------------------------------------------------------------------

def constant_of_shape(shape):
    return node_model("ConstantOfShape", ["shape"],
                      inits={"shape": np.array(shape, np.int64)},
                      attrs={"value": numpy_helper.from_array(
                          np.array([1.0], np.float32))})


@pytest.mark.parametrize("shape", [[MAX, MAX], [2**62, 4], [3037000500] * 2])
def test_onnx_constant_of_shape_overflow(shape):
    with pytest.raises(OnnxImportError) as e:
        import_model(constant_of_shape(shape), context=context())
    text = str(e.value)
    assert "constantofshape_node" in text and "(ConstantOfShape)" in text
    # The importer checks shape values before folding with numpy; a product
    # that fits int64 elements but not bytes reaches the dialect's check.
    assert ("has more elements than fit in 64 bits" in text
            or "more than 2^63 - 1 bytes" in text), text


def test_onnx_constant_of_shape_large_but_valid():
    """10^11 elements fit the arithmetic: the import succeeds (the memory is
    a run-time matter)."""
    module = import_model(constant_of_shape([100000, 1000000]), context=context())
    assert "100000x1000000xf32" in module.to_text()


def test_onnx_gather_runtime_index_out_of_range(tmp_path):
    """ONNX (and onnxruntime) reject an out-of-range Gather index; it used to
    be clamped to the last row."""
    data = np.arange(12, dtype=np.float32).reshape(4, 3)
    idx = np.array([0, 4], np.int64)
    model = node_model("Gather", [data, idx], attrs={"axis": 0})
    text = import_model(model, context=context()).to_text(debug_info=True)
    (tmp_path / "ok").mkdir()
    (tmp_path / "bad").mkdir()
    (r,) = run_module(tmp_path / "ok", text, [data, np.array([-4, 3], np.int64)])
    np.testing.assert_array_equal(r, data[[-4, 3]])
    with pytest.raises(PaddleRunError, match=RUNTIME_CHECK_ERROR.replace(
            r"module\.mlir", r"[^:]*") + r"paddle\.gather: an index is out of range"):
        run_module(tmp_path / "bad", text, [data, idx])


# ---------------------------------------------------------------------------
# Dynamic sizes and indices: checked by the compiled code
# ---------------------------------------------------------------------------

SIZED = """func.func @main(%n: tensor<i64>) -> {result} {{
  %c = tensor.extract %n[] : tensor<i64>
  %i = arith.index_cast %c : i64 to index
  {op}
  return %0 : {result}
}}
"""


@pytest.mark.parametrize("op,result", [
    ("%0 = paddle.iota [%i] dim = 0 : tensor<?xi64>", "tensor<?xi64>"),
    ("%0 = paddle.iota [%i] dim = 1 : tensor<2x?xf32>", "tensor<2x?xf32>"),
    ("%s = paddle.constant dense<7> : tensor<i64>\n"
     "  %0 = paddle.rng_uniform %s [%i] : tensor<i64> -> tensor<?xf32>",
     "tensor<?xf32>"),
])
@pytest.mark.parametrize("n,message", [
    (-5, "has a negative size"),
    (2**62, "make more than 2\\^63 - 1 bytes"),
    (2**63 - 1, "make more than 2\\^63 - 1 bytes"),
])
def test_user_sizes_are_checked(tmp_path, op, result, n, message):
    text = SIZED.format(op=op, result=result)
    name = op.split("paddle.")[-1].split()[0]
    with pytest.raises(PaddleRunError, match=RUNTIME_CHECK_ERROR +
                       rf"paddle\.{name}: .*{message}"):
        run_module(tmp_path, text, [np.array(n, np.int64)])


def test_user_size_zero_and_small(tmp_path):
    text = SIZED.format(op="%0 = paddle.iota [%i] dim = 0 : tensor<?xi64>",
                        result="tensor<?xi64>")
    for n in (0, 5):
        (tmp_path / str(n)).mkdir()
        (r,) = run_module(tmp_path / str(n), text, [np.array(n, np.int64)])
        np.testing.assert_array_equal(r, np.arange(n))


def test_broadcast_to_huge_dynamic(tmp_path):
    """A 4 x 1 input broadcast to [-1, 2^62]: 2^64 bytes wrapped to 0 and
    the loop wrote past it."""
    text = ("func.func @main(%x: tensor<?x1xi8>) -> tensor<?x4611686018427387904xi8> {\n"
            "  %0 = paddle.broadcast_to %x shape = [-1, 4611686018427387904]"
            " : tensor<?x1xi8> -> tensor<?x4611686018427387904xi8>\n"
            "  return %0 : tensor<?x4611686018427387904xi8>\n}\n")
    with pytest.raises(PaddleRunError, match=RUNTIME_CHECK_ERROR +
                       r"paddle\.broadcast_to: the sizes of .* make more than"):
        run_module(tmp_path, text, [np.ones((4, 1), np.int8)])


@pytest.mark.parametrize("pad", [0, 1])
@pytest.mark.parametrize("dilation", [1, 2])
def test_conv2d_input_smaller_than_kernel(tmp_path, rng, pad, dilation):
    """It returned [1, 1, -2, -2] of uninitialized memory; pooling already
    checked this."""
    window = dilation * 2 + 1
    w = rng.standard_normal((1, 1, 3, 3)).astype(np.float32)
    text = ("func.func @main(%x: tensor<1x1x?x?xf32>, %w: tensor<1x1x3x3xf32>)"
            " -> tensor<1x1x?x?xf32> {\n"
            f"  %0 = paddle.conv2d %x, %w {{padding = array<i64: {pad}, {pad}, {pad}, {pad}>,"
            f" dilations = array<i64: {dilation}, {dilation}>}}"
            " : tensor<1x1x?x?xf32>, tensor<1x1x3x3xf32> -> tensor<1x1x?x?xf32>\n"
            "  return %0 : tensor<1x1x?x?xf32>\n}\n")
    fits = window - 2 * pad
    x = rng.standard_normal((1, 1, fits, fits + 1)).astype(np.float32)
    (tmp_path / "ok").mkdir()
    (r,) = run_module(tmp_path / "ok", text, [x, w])
    assert r.shape == (1, 1, 1, 2)
    small = np.ones((1, 1, fits - 1, fits + 1), np.float32)
    with pytest.raises(PaddleRunError, match=RUNTIME_CHECK_ERROR +
                       r"paddle\.conv2d: the padded input is smaller than the "
                       r"dilated kernel"):
        run_module(tmp_path, text, [small, w])


def test_embedding_gradient_checks_indices(tmp_path):
    """The gradient of a gather (an embedding's) scatters into a zero tensor
    at the same indices: an out-of-range one is an error there too."""
    text = ("func.func @main(%i: tensor<?xi32>, %g: tensor<?x4xf32>) -> tensor<10x4xf32> {\n"
            "  %z = paddle.constant dense<0.0> : tensor<10x4xf32>\n"
            "  %0 = paddle.scatter_add %z, %i, %g axis = 0"
            " : tensor<10x4xf32>, tensor<?xi32>, tensor<?x4xf32> -> tensor<10x4xf32>\n"
            "  return %0 : tensor<10x4xf32>\n}\n")
    g = np.ones((3, 4), np.float32)
    (tmp_path / "ok").mkdir()
    (r,) = run_module(tmp_path / "ok", text, [np.array([1, 1, -1], np.int32), g])
    expected = np.zeros((10, 4), np.float32)
    np.add.at(expected, np.array([1, 1, -1]), g)
    np.testing.assert_array_equal(r, expected)
    with pytest.raises(PaddleRunError, match=RUNTIME_CHECK_ERROR +
                       r"paddle\.scatter_add: an index is out of range"):
        run_module(tmp_path, text, [np.array([1, 10, 2], np.int32), g])


@pytest.mark.parametrize("op", ["reduce_max", "reduce_min"])
def test_static_reduction_of_nothing_is_a_build_error(ctx, op):
    text = build_error(ctx, ["tensor<0x3xf32>"], f"paddle.{op}", [0],
                       {"axes": "array<i64: 0>"})
    assert "reduces dim 0 of size 0" in text and "numpy raises" in text


def test_unknown_fusion_kind(ctx):
    text = ('func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {\n'
            '  %0 = paddle.fusion "nope"(%x : tensor<4xf32>) -> tensor<4xf32> {\n'
            '  ^bb0(%a: tensor<4xf32>):\n'
            '    paddle.yield %a : tensor<4xf32>\n'
            '  }\n'
            '  return %0 : tensor<4xf32>\n}\n')
    with pytest.raises(C.MLIRError, match='unknown kind "nope"'):
        C.Module.parse(ctx, text, name="user.mlir")


def test_onnx_graph_keeps_valid_types():
    """An ONNX model whose intermediate shapes are large but valid imports;
    the Python builder infers each type and checks it (no false alarm)."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    shape = numpy_helper.from_array(np.array([2**20, 2, 3], np.int64), "shape")
    node = helper.make_node("Expand", ["x", "shape"], ["y"], name="expand_node")
    graph = helper.make_graph([node], "g", [x], [y], [shape])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    assert "1048576x2x3xf32" in import_model(model, context=context()).to_text()


def test_frontend_indices_out_of_range_raise():
    """take_along_axis and nn.Embedding index out of range: an error at the
    user's line, as numpy and PyTorch raise (before, take_along_axis read a
    neighbouring row of the flattened array and Embedding, a one-hot
    product, gave a row of zeros). In range, numpy's results."""
    import paddle_mlir as pm
    import paddle_mlir.nn as nn
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    along = pm.jit(lambda x, i: pm.take_along_axis(x, i, axis=1))
    ok = np.array([[0], [-1], [3]], np.int64)
    np.testing.assert_array_equal(along(x, ok), np.take_along_axis(x, ok, 1))
    for bad in ([[0], [4], [1]], [[-5], [0], [0]]):
        with pytest.raises(ValueError, match="paddle.gather: an index is out of range"):
            along(x, np.array(bad, np.int64))
    emb = nn.Embedding(5, 3)
    lookup = pm.jit(lambda i: emb(i))
    got = lookup(np.array([0, 4, -1], np.int64))
    np.testing.assert_array_equal(got, emb.weight[[0, 4, -1]])
    for bad in ([0, 5], [-6]):
        with pytest.raises(ValueError, match="test_robustness_shapes.py:\\d+:\\d+: "
                                             "paddle.gather: an index is out of range"):
            lookup(np.array(bad, np.int64))
