"""The ONNX importer's errors: each names the op type, the node and what
is missing, as an exception (pm.onnx.load) and as exit code 1 with one
message (paddle-import-onnx); nothing is written on failure."""

import subprocess
import sys

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from onnx_testing import REPO, context, node_model

from paddle_mlir.onnx import OnnxImportError, import_model, load

ENV_PY = [sys.executable, "-m", "paddle_mlir.onnx"]


def import_error(model):
    with pytest.raises(OnnxImportError) as info:
        import_model(model, context=context())
    return info.value


def test_unsupported_op():
    x = np.zeros((2, 3), np.float32)
    e = import_error(node_model("Hardmax", [x]))
    assert "Hardmax" in str(e) and "hardmax_node" in str(e) and "not supported" in str(e)
    assert e.op_type == "Hardmax" and e.node == "hardmax_node" and e.unsupported


def test_unknown_attribute():
    x = np.zeros((2, 3), np.float32)
    model = node_model("Relu", [x])
    model.graph.node[0].attribute.append(helper.make_attribute("alpha", 0.5))
    e = import_error(model)
    assert "relu_node" in str(e) and "(Relu)" in str(e) and "'alpha'" in str(e)


@pytest.mark.parametrize("op,inputs,attrs,inits,expected", [
    ("Pad", ["x", "p"], {"mode": "reflect"}, {"p": np.array([1, 1, 1, 1], np.int64)},
     "mode='reflect'"),
    ("MaxPool", ["x"], {"kernel_shape": [2, 2], "storage_order": 1}, {}, "storage_order=1"),
    ("AveragePool", ["x"], {"kernel_shape": [2, 2], "dilations": [2, 2]}, {}, "dilations"),
    ("ArgMax", ["x"], {"select_last_index": 1}, {}, "select_last_index=1"),
    ("Gelu", ["x"], {"approximate": "fast"}, {}, "approximate='fast'"),
])
def test_unsupported_attribute_value(op, inputs, attrs, inits, expected):
    x = np.zeros((1, 2, 4, 4), np.float32)
    model = node_model(op, [x if i == "x" else i for i in inputs], attrs=attrs, inits=inits,
                       opset=20 if op == "Gelu" else 18)
    e = import_error(model)
    assert f"({op})" in str(e) and expected in str(e), str(e)


def test_unsupported_element_type():
    x = np.zeros((2, 3), np.uint8)
    e = import_error(node_model("Identity", [x]))
    assert "in0" in str(e) and "UINT8" in str(e)


def test_cast_to_unsupported_type():
    x = np.zeros((2,), np.float32)
    e = import_error(node_model("Cast", [x], attrs={"to": TensorProto.UINT16}))
    assert "(Cast)" in str(e) and "UINT16" in str(e)


def test_dynamic_shape_input_is_an_error_not_a_guess():
    x = np.zeros((2, 3), np.float32)
    model = node_model("Reshape", [x, np.array([3, 2], np.int64)])
    e = import_error(model)
    assert "(Reshape)" in str(e) and "shape" in str(e) and "import time" in str(e)


def test_old_opset():
    x = np.zeros((2, 3), np.float32)
    e = import_error(node_model("Relu", [x], opset=11))
    assert "opset 11" in str(e)


def test_other_domain():
    x = np.zeros((2, 3), np.float32)
    model = node_model("Relu", [x])
    model.graph.node[0].domain = "com.microsoft"
    model.opset_import.append(helper.make_opsetid("com.microsoft", 1))
    e = import_error(model)
    assert "com.microsoft" in str(e) and "relu_node" in str(e)


def test_missing_file(tmp_path):
    with pytest.raises(FileNotFoundError, match="nope.onnx"):
        load(tmp_path / "nope.onnx", context=context())


def test_corrupt_file(tmp_path):
    path = tmp_path / "bad.onnx"
    path.write_bytes(b"\x08\x07garbage that is not a protobuf \xff\xff\xff")
    with pytest.raises(OnnxImportError, match="bad.onnx"):
        load(path, context=context())


def test_truncated_file(tmp_path):
    x = np.zeros((2, 3), np.float32)
    model = node_model("Add", [x, "w"], inits={"w": np.ones((2, 3), np.float32)})
    data = model.SerializeToString()
    path = tmp_path / "cut.onnx"
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(OnnxImportError, match="cut.onnx"):
        load(path, context=context())


def run_cli(*args):
    env = {"PYTHONPATH": str(REPO / "python")}
    import os
    env = dict(os.environ, **env)
    return subprocess.run(ENV_PY + list(args), capture_output=True, text=True, env=env,
                          timeout=120)


@pytest.mark.parametrize("case", ["missing", "corrupt", "unsupported_op", "bad_attr"])
def test_cli_errors(tmp_path, case):
    path = tmp_path / "m.onnx"
    x = np.zeros((1, 2, 4, 4), np.float32)
    if case == "corrupt":
        path.write_bytes(b"not an onnx file")
    elif case == "unsupported_op":
        onnx.save(node_model("NonZero", [x]), path)
    elif case == "bad_attr":
        onnx.save(node_model("Pad", [x, "p"], attrs={"mode": "edge"},
                             inits={"p": np.zeros(8, np.int64)}), path)
    out = tmp_path / "out.mlir"
    proc = run_cli(str(path), "-o", str(out))
    assert proc.returncode == 1, proc.stderr
    assert proc.stderr.startswith("paddle-import-onnx: error:"), proc.stderr
    assert "Traceback" not in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    assert not out.exists() and not list(tmp_path.glob(".paddle-import-onnx-*"))
    expected = {"missing": "does not exist", "corrupt": "m.onnx",
                "unsupported_op": "node 'nonzero_node' (NonZero)",
                "bad_attr": "node 'pad_node' (Pad): attribute mode='edge'"}[case]
    assert expected in proc.stderr, proc.stderr


def test_graph_with_two_nodes_names_the_failing_one():
    nodes = [helper.make_node("Relu", ["x"], ["r"], name="first"),
             helper.make_node("Einsum", ["r", "r"], ["y"], name="second", equation="ij,ij->ij")]
    graph = helper.make_graph(nodes, "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 2])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 2])],
                              [numpy_helper.from_array(np.zeros(1, np.float32), "unused")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    e = import_error(model)
    assert "node 'second' (Einsum)" in str(e)
