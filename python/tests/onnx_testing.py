"""Helpers for the ONNX importer tests: one-node models made with
onnx.helper, run through onnxruntime (the reference) and through
import + compile + run (`paddle_mlir._core`)."""

import sys
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

REPO = Path(__file__).resolve().parents[2]
if str(REPO / "python") not in sys.path:
    sys.path.insert(0, str(REPO / "python"))

ONNX_TYPES = {
    np.dtype(np.float32): TensorProto.FLOAT, np.dtype(np.float64): TensorProto.DOUBLE,
    np.dtype(np.float16): TensorProto.FLOAT16, np.dtype(np.bool_): TensorProto.BOOL,
    np.dtype(np.int8): TensorProto.INT8, np.dtype(np.int32): TensorProto.INT32,
    np.dtype(np.int64): TensorProto.INT64, np.dtype(np.uint8): TensorProto.UINT8,
}

_CONTEXT = None


def context():
    """One Context for all tests of a session (as the conformance runner)."""
    global _CONTEXT
    from paddle_mlir import _core
    if _CONTEXT is None:
        _CONTEXT = _core.Context()
    return _CONTEXT


def node_model(op_type, inputs, n_outputs=1, attrs=None, inits=None, opset=18,
               dynamic=None, out_types=None, input_names=None):
    """A model with one node `op_type`.

    `inputs`: list of graph inputs (numpy arrays, used for shape and dtype)
    and/or names of `inits` (initializers) and "" (absent optional input).
    `dynamic`: {input index: [dims made dynamic]}. Outputs have unknown shape.
    """
    inits = inits or {}
    dynamic = dynamic or {}
    graph_inputs, node_inputs = [], []
    for i, x in enumerate(inputs):
        if isinstance(x, str):
            node_inputs.append(x)
            continue
        name = (input_names or {}).get(i, f"in{i}")
        dims = [f"d{i}_{k}" if k in dynamic.get(i, ()) else d for k, d in enumerate(x.shape)]
        graph_inputs.append(helper.make_tensor_value_info(name, ONNX_TYPES[x.dtype], dims))
        node_inputs.append(name)
    outputs = [f"out{k}" for k in range(n_outputs)]
    node = helper.make_node(op_type, node_inputs, outputs, name=f"{op_type.lower()}_node",
                            **(attrs or {}))
    graph_outputs = [helper.make_tensor_value_info(
        o, (out_types or {}).get(k, 0), None) for k, o in enumerate(outputs)]
    graph = helper.make_graph([node], f"{op_type}_test", graph_inputs, graph_outputs,
                              [numpy_helper.from_array(np.asarray(v), k)
                               for k, v in inits.items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8 if opset <= 18 else 10
    return infer_output_types(model)


def infer_output_types(model):
    """Fills the outputs' element types (onnx.helper needs them) by shape
    inference, so tests need not spell them out."""
    inferred = onnx.shape_inference.infer_shapes(model)
    types = {vi.name: vi.type for vi in list(inferred.graph.value_info) +
             list(inferred.graph.output)}
    for vi in model.graph.output:
        if vi.type.tensor_type.elem_type == 0 and vi.name in types:
            # The inferred type with its shape: onnx.checker (run by
            # paddle_mlir.onnx.load) wants one on graph outputs.
            vi.type.CopyFrom(types[vi.name])
    return model


def feeds_of(model, arrays):
    names = [vi.name for vi in model.graph.input
             if vi.name not in {t.name for t in model.graph.initializer}]
    return dict(zip(names, arrays))


def run_ort(model, arrays):
    import onnxruntime as ort
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    sess = ort.InferenceSession(model.SerializeToString(), opts,
                                providers=["CPUExecutionProvider"])
    return sess.run(None, feeds_of(model, arrays))


def run_paddle(model, arrays):
    from paddle_mlir.onnx import import_model
    imported = import_model(model, context=context())
    return imported.compile()(*[np.require(a, requirements="C") for a in arrays])


def check(model, arrays, rtol=1e-5, atol=1e-6):
    """Compares import + compile + run with onnxruntime; returns our results."""
    expected = run_ort(model, arrays)
    got = run_paddle(model, arrays)
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        assert g.dtype == e.dtype, (g.dtype, e.dtype)
        assert g.shape == e.shape, (g.shape, e.shape)
        if e.dtype.kind == "f":
            np.testing.assert_allclose(g, e, rtol=rtol, atol=atol)
        else:
            np.testing.assert_array_equal(g, e)
    return got
