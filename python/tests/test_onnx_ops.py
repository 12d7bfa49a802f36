"""Every op the ONNX importer covers, as one-node models (plus attribute
variants and dynamic dims), imported, compiled, run and compared with
onnxruntime.

Tolerances: elementwise and data movement rtol=1e-5, atol=1e-6 (integers
and booleans exact); ops that accumulate (Conv, Gemm, MatMul, pools,
normalizations, reductions, Softmax) rtol=1e-4, atol=1e-5.
"""

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper
from onnx_testing import check, node_model, run_paddle

ACC = {"rtol": 1e-4, "atol": 1e-5}


def f32(rng, *shape, lo=-3.0, hi=3.0):
    return rng.uniform(lo, hi, size=shape).astype(np.float32)


# --- elementwise ------------------------------------------------------------------------------

UNARY = ["Relu", "Sigmoid", "Tanh", "Erf", "Exp", "Abs", "Neg", "Floor", "Ceil", "Sin",
         "Cos", "Sign", "Reciprocal", "Identity"]


@pytest.mark.parametrize("op", UNARY)
def test_unary(rng, op):
    x = f32(rng, 3, 4, 5)
    check(node_model(op, [x], opset=17), [x])


@pytest.mark.parametrize("op", ["Sqrt", "Log"])
def test_unary_positive(rng, op):
    x = f32(rng, 2, 7, lo=0.1, hi=5)
    check(node_model(op, [x]), [x])


def test_not(rng):
    x = rng.integers(0, 2, size=(4, 3)).astype(bool)
    check(node_model("Not", [x]), [x])


@pytest.mark.parametrize("op", ["Add", "Sub", "Mul", "Div"])
def test_binary_broadcast(rng, op):
    a, b = f32(rng, 2, 3, 4), f32(rng, 3, 1, lo=0.5, hi=2)
    check(node_model(op, [a, b]), [a, b])


@pytest.mark.parametrize("op", ["Add", "Sub", "Mul", "Div"])
def test_binary_int(rng, op):
    # Div on integers truncates toward zero in ONNX (paddle.div floors).
    a = rng.integers(-50, 50, size=(3, 4)).astype(np.int64)
    b = rng.integers(1, 7, size=(4,)).astype(np.int64) * rng.choice([-1, 1], size=4)
    check(node_model(op, [a, b]), [a, b])


def test_pow(rng):
    a, b = f32(rng, 3, 4, lo=0.5, hi=3), f32(rng, 4, lo=-2, hi=2)
    check(node_model("Pow", [a, b]), [a, b])


def test_pow_scalar_exponent_of_other_float_type(rng):
    a = f32(rng, 5, lo=0.5, hi=3)
    check(node_model("Pow", [a, "e"], inits={"e": np.array(2.0, np.float64)}), [a])


@pytest.mark.parametrize("op", ["Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual"])
def test_compare(rng, op):
    a = rng.integers(-3, 3, size=(4, 5)).astype(np.int32)
    b = rng.integers(-3, 3, size=(1, 5)).astype(np.int32)
    check(node_model(op, [a, b]), [a, b])


def test_where(rng):
    c = rng.integers(0, 2, size=(3, 4)).astype(bool)
    a, b = f32(rng, 3, 4), f32(rng, 4)
    check(node_model("Where", [c, a, b]), [c, a, b])


@pytest.mark.parametrize("bounds", [(-1.0, 1.5), (0.0, None), (None, 2.0), (None, None)])
def test_clip(rng, bounds):
    x = f32(rng, 4, 6)
    inputs, inits = [x], {}
    for name, v in zip(("lo", "hi"), bounds):
        if v is None:
            inputs.append("")
        else:
            inputs.append(name)
            inits[name] = np.array(v, np.float32)
    while isinstance(inputs[-1], str) and inputs[-1] == "":
        inputs.pop()
    check(node_model("Clip", inputs, inits=inits), [x])


def test_clip_runtime_bounds(rng):
    x, lo, hi = f32(rng, 10), np.array(-0.5, np.float32), np.array(0.7, np.float32)
    check(node_model("Clip", [x, lo, hi]), [x, lo, hi])


@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_gelu(rng, approximate):
    x = f32(rng, 3, 8)
    check(node_model("Gelu", [x], attrs={"approximate": approximate}, opset=20), [x],
          rtol=1e-5, atol=1e-5)


# --- nn --------------------------------------------------------------------------------------

CONV_CASES = [
    {},
    {"pads": [1, 1, 1, 1], "strides": [2, 2]},
    {"pads": [0, 1, 2, 1], "dilations": [2, 1]},
    {"group": 2, "pads": [1, 1, 1, 1]},
    {"auto_pad": "SAME_UPPER", "strides": [2, 2]},
    {"auto_pad": "SAME_LOWER"},
    {"auto_pad": "VALID", "kernel_shape": [3, 3]},
]


@pytest.mark.parametrize("attrs", CONV_CASES, ids=lambda a: ",".join(a) or "default")
@pytest.mark.parametrize("bias", [False, True])
def test_conv(rng, attrs, bias):
    x = f32(rng, 2, 4, 9, 8)
    w = f32(rng, 6, 4 // attrs.get("group", 1), 3, 3)
    inits = {"w": w}
    inputs = [x, "w"]
    if bias:
        inits["b"] = f32(rng, 6)
        inputs.append("b")
    check(node_model("Conv", inputs, attrs=attrs, inits=inits), [x], **ACC)


def test_conv_dynamic_batch(rng):
    w = f32(rng, 5, 3, 3, 3)
    model = node_model("Conv", [f32(rng, 1, 3, 8, 8), "w"], attrs={"pads": [1, 1, 1, 1]},
                       inits={"w": w}, dynamic={0: [0]})
    for n in (1, 3):
        x = f32(rng, n, 3, 8, 8)
        check(model, [x], **ACC)


def test_batch_norm(rng):
    x = f32(rng, 2, 3, 4, 5)
    inits = {"s": f32(rng, 3), "b": f32(rng, 3), "m": f32(rng, 3),
             "v": f32(rng, 3, lo=0.5, hi=2)}
    check(node_model("BatchNormalization", [x, "s", "b", "m", "v"], inits=inits,
                     attrs={"epsilon": 1e-3}), [x], **ACC)


POOL_CASES = [
    {"kernel_shape": [2, 2], "strides": [2, 2]},
    {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1]},
    {"kernel_shape": [3, 2], "strides": [2, 1], "ceil_mode": 1},
    {"kernel_shape": [3, 3], "auto_pad": "SAME_UPPER", "strides": [2, 2]},
]


@pytest.mark.parametrize("attrs", POOL_CASES, ids=lambda a: ",".join(f"{k}" for k in a))
def test_max_pool(rng, attrs):
    x = f32(rng, 2, 3, 9, 8)
    check(node_model("MaxPool", [x], attrs=attrs), [x])


@pytest.mark.parametrize("attrs", POOL_CASES + [
    {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1], "count_include_pad": 1}],
    ids=lambda a: ",".join(f"{k}" for k in a))
def test_average_pool(rng, attrs):
    x = f32(rng, 2, 3, 9, 8)
    check(node_model("AveragePool", [x], attrs=attrs), [x], **ACC)


def test_global_average_pool(rng):
    x = f32(rng, 2, 5, 6, 7)
    check(node_model("GlobalAveragePool", [x], dynamic={0: [0]}), [x], **ACC)


@pytest.mark.parametrize("attrs", [{}, {"transA": 1}, {"transB": 1},
                                   {"alpha": 0.5, "beta": 2.0, "transA": 1, "transB": 1}])
@pytest.mark.parametrize("c_shape", [None, (5,), (4, 5), (1, 1)])
def test_gemm(rng, attrs, c_shape):
    a = f32(rng, *((6, 4) if attrs.get("transA") else (4, 6)))
    b = f32(rng, *((5, 6) if attrs.get("transB") else (6, 5)))
    inputs, inits = [a, "b"], {"b": b}
    if c_shape:
        inits["c"] = f32(rng, *c_shape)
        inputs.append("c")
    check(node_model("Gemm", inputs, attrs=attrs, inits=inits), [a], **ACC)


@pytest.mark.parametrize("shapes", [((3, 4), (4, 5)), ((2, 3, 4), (4, 5)),
                                    ((2, 1, 3, 4), (5, 4, 2)), ((4,), (4, 3))])
def test_matmul(rng, shapes):
    a, b = f32(rng, *shapes[0]), f32(rng, *shapes[1])
    check(node_model("MatMul", [a, b]), [a, b], **ACC)


@pytest.mark.parametrize("axis", [-1, 0, 1])
def test_softmax(rng, axis):
    x = f32(rng, 3, 4, 5)
    check(node_model("Softmax", [x], attrs={"axis": axis}), [x], **ACC)


@pytest.mark.parametrize("axis,bias", [(-1, True), (1, True), (-1, False)])
def test_layer_norm(rng, axis, bias):
    x = f32(rng, 2, 3, 8)
    norm_shape = x.shape[axis:]
    inits = {"s": f32(rng, *norm_shape)}
    inputs = [x, "s"]
    if bias:
        inits["b"] = f32(rng, *norm_shape)
        inputs.append("b")
    check(node_model("LayerNormalization", inputs, attrs={"axis": axis, "epsilon": 1e-4},
                     inits=inits, opset=17), [x], **ACC)


# --- shapes and data movement ------------------------------------------------------------------

@pytest.mark.parametrize("shape,allowzero", [([4, -1], 0), ([0, 6], 0), ([-1], 0),
                                             ([2, 2, 3, 2], 1)])
def test_reshape(rng, shape, allowzero):
    x = f32(rng, 4, 3, 2)
    check(node_model("Reshape", [x, "s"], inits={"s": np.array(shape, np.int64)},
                     attrs={"allowzero": allowzero}), [x])


@pytest.mark.parametrize("perm", [None, [0, 2, 1], [2, 0, 1]])
def test_transpose(rng, perm):
    x = f32(rng, 2, 3, 4)
    check(node_model("Transpose", [x], attrs={"perm": perm} if perm else {}), [x])


@pytest.mark.parametrize("axis", [0, -1])
def test_concat(rng, axis):
    a, b = f32(rng, 2, 3), f32(rng, 2, 3)
    check(node_model("Concat", [a, b], attrs={"axis": axis}), [a, b])


SLICES = [
    ([1], [3], None, None),
    ([0, -3], [100, -1], [0, 1], None),
    ([-1], [-100], [1], [-1]),
    ([0, 1], [5, 6], [1, 2], [2, 3]),
    ([4, 0], [0, 100], [0, 2], [-2, 1]),
]


@pytest.mark.parametrize("starts,ends,axes,steps", SLICES)
def test_slice(rng, starts, ends, axes, steps):
    x = f32(rng, 5, 6, 7)
    inits = {"st": np.array(starts, np.int64), "en": np.array(ends, np.int64)}
    inputs = [x, "st", "en"]
    if axes is not None:
        inits["ax"] = np.array(axes, np.int64)
        inputs.append("ax")
    if steps is not None:
        inits["sp"] = np.array(steps, np.int64)
        inputs.append("sp")
    check(node_model("Slice", inputs, inits=inits), [x])


def test_slice_dynamic(rng):
    model = node_model("Slice", [f32(rng, 2, 6), "st", "en", "ax"],
                       inits={"st": np.array([1], np.int64), "en": np.array([4], np.int64),
                              "ax": np.array([1], np.int64)}, dynamic={0: [0]})
    check(model, [f32(rng, 5, 6)])


@pytest.mark.parametrize("case", ["sizes", "equal", "num_outputs"])
def test_split(rng, case):
    x = f32(rng, 4, 7)
    if case == "sizes":
        model = node_model("Split", [x, "s"], n_outputs=3, attrs={"axis": 1},
                           inits={"s": np.array([2, 4, 1], np.int64)})
    elif case == "equal":
        model = node_model("Split", [x], n_outputs=2, opset=13)
    else:
        model = node_model("Split", [x], n_outputs=3, attrs={"axis": 1, "num_outputs": 3})
    check(model, [x])


@pytest.mark.parametrize("axis,indices", [(0, [[0, 2], [-1, 1]]), (1, [3, 0, 0]), (-1, 2)])
def test_gather(rng, axis, indices):
    x = f32(rng, 3, 4, 5)
    check(node_model("Gather", [x, "i"], attrs={"axis": axis},
                     inits={"i": np.array(indices, np.int64)}), [x])


def test_gather_runtime_indices(rng):
    x = f32(rng, 6, 3)
    i = rng.integers(-6, 6, size=(2, 2)).astype(np.int32)
    check(node_model("Gather", [x, i]), [x, i])


@pytest.mark.parametrize("axes", [[0], [1, -1], [2]])
def test_unsqueeze(rng, axes):
    x = f32(rng, 3, 4)
    check(node_model("Unsqueeze", [x, "a"], inits={"a": np.array(axes, np.int64)}), [x])


def test_unsqueeze_two_dynamic_dims(rng):
    model = node_model("Unsqueeze", [f32(rng, 2, 3), "a"], inits={"a": np.array([0, 2],
                                                                           np.int64)},
                       dynamic={0: [0, 1]})
    check(model, [f32(rng, 4, 5)])


@pytest.mark.parametrize("axes", [None, [1], [-1, 1]])
def test_squeeze(rng, axes):
    x = f32(rng, 3, 1, 4, 1)
    if axes is None:
        check(node_model("Squeeze", [x]), [x])
    else:
        check(node_model("Squeeze", [x, "a"], inits={"a": np.array(axes, np.int64)}), [x])


@pytest.mark.parametrize("axis", [0, 1, 2, -1])
def test_flatten(rng, axis):
    x = f32(rng, 2, 3, 4)
    check(node_model("Flatten", [x], attrs={"axis": axis}), [x])


def test_flatten_dynamic(rng):
    model = node_model("Flatten", [f32(rng, 2, 3, 4)], dynamic={0: [0, 2]})
    check(model, [f32(rng, 3, 3, 5)])


def shape_reshape_model(dynamic_batch=True):
    """Shape -> Gather -> Unsqueeze -> Concat -> Reshape, as exporters write
    `x.view(x.size(0), -1)`; plus Shape(start/end) as a second output."""
    nodes = [
        helper.make_node("Shape", ["x"], ["s"], name="shape"),
        helper.make_node("Gather", ["s", "zero"], ["n"], axis=0, name="gather"),
        helper.make_node("Unsqueeze", ["n", "axes0"], ["n1"], name="unsqueeze"),
        helper.make_node("Concat", ["n1", "minus1"], ["target"], axis=0, name="concat"),
        helper.make_node("Reshape", ["x", "target"], ["y"], name="reshape"),
        helper.make_node("Shape", ["x"], ["tail"], start=1, end=-1, name="shape_tail"),
    ]
    inits = [numpy_helper.from_array(np.array(0, np.int64), "zero"),
             numpy_helper.from_array(np.array([0], np.int64), "axes0"),
             numpy_helper.from_array(np.array([-1], np.int64), "minus1")]
    graph = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info(
            "x", TensorProto.FLOAT, ["N" if dynamic_batch else 2, 3, 4, 5])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None),
         helper.make_tensor_value_info("tail", TensorProto.INT64, None)], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


@pytest.mark.parametrize("dynamic", [False, True])
def test_shape_gather_concat_reshape(rng, dynamic):
    model = shape_reshape_model(dynamic)
    for n in ((2,) if not dynamic else (2, 5)):
        check(model, [f32(rng, n, 3, 4, 5)])


def test_shape_of_dynamic_dim_as_output(rng):
    model = node_model("Shape", [f32(rng, 2, 3)], dynamic={0: [0]})
    check(model, [f32(rng, 7, 3)])


def test_constant():
    value = np.arange(6, dtype=np.float32).reshape(2, 3)
    node = helper.make_node("Constant", [], ["c"], value=numpy_helper.from_array(value))
    add = helper.make_node("Add", ["x", "c"], ["y"])
    graph = helper.make_graph([node, add], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    x = np.ones((2, 3), np.float32)
    check(model, [x])


@pytest.mark.parametrize("value", [None, np.array([2.5], np.float32), np.array([7], np.int64)])
def test_constant_of_shape(rng, value):
    attrs = {"value": numpy_helper.from_array(value)} if value is not None else {}
    model = node_model("ConstantOfShape", ["s"], inits={"s": np.array([2, 3], np.int64)},
                       attrs=attrs)
    check(model, [])


def test_constant_of_shape_dynamic(rng):
    # ConstantOfShape(Shape(x)) keeps x's dynamic dims.
    nodes = [helper.make_node("Shape", ["x"], ["s"]),
             helper.make_node("ConstantOfShape", ["s"], ["y"],
                              value=numpy_helper.from_array(np.array([1.5], np.float32)))]
    graph = helper.make_graph(nodes, "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    check(model, [f32(rng, 4, 3)])


@pytest.mark.parametrize("xshape,target", [((3, 1), [2, 3, 4]), ((1, 4), [3, 1]),
                                           ((2, 1, 5), [1, 3, 1])])
def test_expand(rng, xshape, target):
    x = f32(rng, *xshape)
    check(node_model("Expand", [x, "t"], inits={"t": np.array(target, np.int64)}), [x])


@pytest.mark.parametrize("to,src", [(TensorProto.INT32, np.float32), (TensorProto.FLOAT, np.int64),
                                    (TensorProto.BOOL, np.float32), (TensorProto.INT64, np.bool_),
                                    (TensorProto.DOUBLE, np.float32)])
def test_cast(rng, to, src):
    x = (rng.uniform(-5, 5, size=(3, 4)) * (rng.random((3, 4)) > 0.3)).astype(src)
    check(node_model("Cast", [x], attrs={"to": to}), [x])


@pytest.mark.parametrize("upper", [0, 1])
@pytest.mark.parametrize("k", [None, -1, 2])
def test_trilu(rng, upper, k):
    x = f32(rng, 2, 4, 5)
    inputs, inits = [x], {}
    if k is not None:
        inputs.append("k")
        inits["k"] = np.array(k, np.int64)
    check(node_model("Trilu", inputs, attrs={"upper": upper}, inits=inits), [x])


def test_trilu_dynamic(rng):
    model = node_model("Trilu", [f32(rng, 3, 4)], dynamic={0: [0, 1]})
    check(model, [f32(rng, 5, 6)])


@pytest.mark.parametrize("op", ["ReduceMean", "ReduceSum", "ReduceMax", "ReduceMin"])
@pytest.mark.parametrize("axes,keepdims", [([1], 1), ([0, -1], 0), (None, 1), (None, 0)])
def test_reduce(rng, op, axes, keepdims):
    x = f32(rng, 3, 4, 5)
    inputs, inits = [x], {}
    if axes is not None:
        inputs.append("a")
        inits["a"] = np.array(axes, np.int64)
    check(node_model(op, inputs, attrs={"keepdims": keepdims}, inits=inits), [x], **ACC)


def test_reduce_mean_attribute_axes_opset13(rng):
    # Before opset 18 ReduceMean takes axes as an attribute.
    x = f32(rng, 3, 4, 5)
    check(node_model("ReduceMean", [x], attrs={"axes": [1, 2], "keepdims": 0}, opset=13), [x],
          **ACC)


def test_reduce_noop_with_empty_axes(rng):
    x = f32(rng, 3, 4)
    check(node_model("ReduceSum", [x], attrs={"noop_with_empty_axes": 1}), [x])


@pytest.mark.parametrize("pads,value,axes", [([1, 0, 2, 3], None, None),
                                             ([0, 2, 1, 0], 1.5, None),
                                             ([1, -1, 0, 2], None, None),
                                             ([2, 1], -2.0, [1])])
def test_pad(rng, pads, value, axes):
    x = f32(rng, 3, 4)
    inputs, inits = [x, "p"], {"p": np.array(pads, np.int64)}
    if value is not None or axes is not None:
        inputs.append("v" if value is not None else "")
        if value is not None:
            inits["v"] = np.array(value, np.float32)
    if axes is not None:
        inputs.append("a")
        inits["a"] = np.array(axes, np.int64)
    check(node_model("Pad", inputs, inits=inits), [x])


# --- import-time folding and several nodes ---------------------------------------------------------

def test_chain_with_initializer_that_is_also_an_input(rng):
    """Initializers listed among the graph inputs (IR < 4 style) are weights."""
    w = f32(rng, 4, 3)
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["y"]), helper.make_node("Relu", ["y"], ["z"])],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 4]),
         helper.make_tensor_value_info("w", TensorProto.FLOAT, [4, 3])],
        [helper.make_tensor_value_info("z", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(w, "w")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    x = f32(rng, 5, 4)
    got = run_paddle(model, [x])
    np.testing.assert_allclose(got[0], np.maximum(x @ w, 0), rtol=1e-5, atol=1e-6)


def test_attention_style_head_split_dynamic_batch(rng):
    """x.view(B, L, heads, E // heads) with B dynamic and the head size
    computed by Div/Mod of scalars (as torch's MHA export): folded at import
    time; the target keeps B and L from x, so several dynamic dims are
    carried through collapse/expand."""
    c = {"zero": np.array(0, np.int64), "one": np.array(1, np.int64),
         "two": np.array(2, np.int64), "heads": np.array(3, np.int64),
         "ax0": np.array([0], np.int64)}
    nodes = [
        helper.make_node("Shape", ["x"], ["s"]),
        helper.make_node("Gather", ["s", "zero"], ["b"]),
        helper.make_node("Gather", ["s", "one"], ["l"]),
        helper.make_node("Gather", ["s", "two"], ["e"]),
        helper.make_node("Div", ["e", "heads"], ["hd"]),
        helper.make_node("Mod", ["e", "heads"], ["rem"]),
        helper.make_node("Add", ["hd", "rem"], ["hd2"]),
        helper.make_node("Unsqueeze", ["b", "ax0"], ["b1"]),
        helper.make_node("Unsqueeze", ["l", "ax0"], ["l1"]),
        helper.make_node("Unsqueeze", ["heads", "ax0"], ["h1"]),
        helper.make_node("Unsqueeze", ["hd2", "ax0"], ["d1"]),
        helper.make_node("Concat", ["b1", "l1", "h1", "d1"], ["target"], axis=0),
        helper.make_node("Reshape", ["x", "target"], ["r"]),
        helper.make_node("Transpose", ["r"], ["y"], perm=[0, 2, 1, 3]),
    ]
    graph = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["B", "L", 12])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(v, k) for k, v in c.items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    for b, l in ((1, 5), (3, 2)):
        check(model, [f32(rng, b, l, 12)])
