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


# -- function names ------------------------------------------------------------------

@pytest.mark.parametrize("name", ["", "1x", "a-b", "a b", "f\u00e9"])
def test_function_name_must_be_a_c_identifier(tmp_path, name):
    x = np.zeros((2, 3), np.float32)
    model = node_model("Relu", [x])
    with pytest.raises(ValueError, match="is not valid: use a C identifier"):
        import_model(model, context=context(), function_name=name)
    path = tmp_path / "m.onnx"
    onnx.save(model, path)
    with pytest.raises(ValueError, match="is not valid: use a C identifier"):
        load(path, context=context(), function_name=name)
    out = tmp_path / "out.mlir"
    proc = run_cli(str(path), "-o", str(out), "--function", name)
    assert proc.returncode == 2, proc.stderr
    assert "--function: function name" in proc.stderr and "Traceback" not in proc.stderr
    assert not out.exists()


def test_empty_function_name_in_the_builder():
    from paddle_mlir import _core
    with pytest.raises(ValueError, match="a function name must not be empty"):
        _core.Module(context()).add_function("", ["tensor<2xf32>"])


# -- external data ----------------------------------------------------------------------

def external_model(tmp_path, folder="model"):
    """x + w with w (2x3 float32, 24 bytes) in `folder`/w.bin."""
    w = np.arange(6, dtype=np.float32).reshape(2, 3)
    graph = helper.make_graph(
        [helper.make_node("Add", ["x", "w"], ["y"], name="add")], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])],
        [numpy_helper.from_array(w, "w")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    (tmp_path / folder).mkdir()
    path = tmp_path / folder / "m.onnx"
    onnx.save(model, path, save_as_external_data=True, location="w.bin", size_threshold=0)
    return path, w


def set_external(path, **fields):
    """Rewrites external_data entries of tensor 'w' (None removes one)."""
    model = onnx.load(path, load_external_data=False)
    entries = model.graph.initializer[0].external_data
    kept = {e.key: e.value for e in entries if e.key not in fields}
    kept.update({k: str(v) for k, v in fields.items() if v is not None})
    del entries[:]
    for k, v in kept.items():
        entries.add(key=k, value=v)
    onnx.save(model, path)


def test_external_data_imports(tmp_path):
    path, w = external_model(tmp_path)
    run = load(path, context=context()).compile(opt_level=0)
    x = np.ones((2, 3), np.float32)
    np.testing.assert_array_equal(run(x)[0], x + w)


@pytest.mark.parametrize("case, expected", [
    ("missing", "the external data of tensor 'w' is in '{folder}/w.bin', which does not "
                "exist"),
    ("directory", "the external data of tensor 'w' is in '{folder}/w.bin', which is not a "
                  "regular file"),
    ("outside", "the external data of tensor 'w' is at '../w.bin', outside the model's folder "
                "'{folder}'"),
    ("symlink_outside", "the external data of tensor 'w' is at 'link.bin', outside the "
                        "model's folder"),
    ("absolute", "the external data of tensor 'w' is at '{folder}/w.bin', an absolute path"),
    ("no_location", "the external data of tensor 'w' names no file"),
    ("truncated", "the external data of tensor 'w' is in '{folder}/w.bin', which is "
                  "truncated: the tensor needs bytes 0 to 24, the file has 10"),
    ("offset", "which is truncated: the tensor needs bytes 8 to 32, the file has 24"),
    ("length", "the external data of tensor 'w' has length 12 bytes, but the tensor (shape "
               "[2, 3]) needs 24"),
    ("bad_offset", "has an offset ('x') or length ('24') that is not an integer"),
])
def test_external_data_errors(tmp_path, case, expected):
    path, _ = external_model(tmp_path)
    folder = path.parent
    data = folder / "w.bin"
    if case == "missing":
        data.unlink()
    elif case == "directory":
        data.unlink()
        data.mkdir()
    elif case == "outside":
        data.rename(tmp_path / "w.bin")
        set_external(path, location="../w.bin")
    elif case == "symlink_outside":
        data.rename(tmp_path / "w.bin")
        (folder / "link.bin").symlink_to(tmp_path / "w.bin")
        set_external(path, location="link.bin")
    elif case == "absolute":
        set_external(path, location=str(data))
    elif case == "no_location":
        set_external(path, location="")
    elif case == "truncated":
        data.write_bytes(data.read_bytes()[:10])
    elif case == "offset":
        set_external(path, offset=8)
    elif case == "length":
        set_external(path, length=12)
    elif case == "bad_offset":
        set_external(path, offset="x")
    with pytest.raises(OnnxImportError) as e:
        load(path, context=context())
    message = str(e.value)
    assert message.startswith(f"ONNX model '{path}': "), message
    assert expected.format(folder=folder) in message, message
    assert "not a valid ONNX protobuf" not in message and not e.value.unsupported


# -- graph structure -----------------------------------------------------------------------

def graph_model(nodes, inputs, outputs, inits=(), opset=17):
    def vi(name):
        return helper.make_tensor_value_info(name, TensorProto.FLOAT, [2, 3])
    graph = helper.make_graph(nodes, "g", [vi(n) for n in inputs], [vi(n) for n in outputs],
                              list(inits))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    return model


def w_init(name="w"):
    return numpy_helper.from_array(np.ones((2, 3), np.float32), name)


@pytest.mark.parametrize("model, expected", [
    (graph_model([helper.make_node("Relu", ["x"], ["y"], name="r")], ["x"], []),
     "the graph has no outputs"),
    (graph_model([helper.make_node("Add", ["x", "x"], ["y"], name="a")], ["x", "x"], ["y"]),
     "graph input 'x' is defined twice (also as graph input)"),
    (graph_model([helper.make_node("Add", ["x", "w"], ["y"], name="a")], ["x"], ["y"],
                 [w_init(), w_init()]),
     "initializer 'w' is defined twice (also as initializer)"),
    (graph_model([helper.make_node("Relu", ["x"], ["y"], name="r1"),
                  helper.make_node("Relu", ["x"], ["y"], name="r2")], ["x"], ["y"]),
     "node 'r2' (Relu): output 'y' is already defined (as node 'r1' (Relu))"),
    (graph_model([helper.make_node("Relu", ["x"], ["x"], name="r")], ["x"], ["x"]),
     "node 'r' (Relu): output 'x' is already defined (as graph input)"),
    (graph_model([helper.make_node("Add", ["x", ""], ["y"], name="a")], ["x"], ["y"]),
     "node 'a' (Add): input 1 is required but the node has an empty name there"),
    (graph_model([helper.make_node("Add", ["x"], ["y"], name="a")], ["x"], ["y"]),
     "node 'a' (Add): input 1 is required but the node has no such input"),
])
def test_broken_graph_structure(model, expected):
    e = import_error(model)
    assert expected in str(e), str(e)
    assert not e.unsupported


def test_an_input_with_an_initializer_default_is_not_a_duplicate():
    model = graph_model([helper.make_node("Add", ["x", "w"], ["y"], name="a")], ["x", "w"],
                        ["y"], [w_init()])
    imported = import_model(model, context=context())
    assert imported.inputs == ["x"]


def test_opset_newer_than_onnx_knows():
    newest = onnx.defs.onnx_opset_version()
    model = graph_model([helper.make_node("Relu", ["x"], ["y"], name="r")], ["x"], ["y"],
                        opset=newest + 1)
    e = import_error(model)
    assert f"ONNX opset {newest + 1}, newer than the newest this onnx package" in str(e)
    import_model(graph_model([helper.make_node("Relu", ["x"], ["y"], name="r")], ["x"], ["y"],
                             opset=newest), context=context())


# -- shapes from tensors -----------------------------------------------------------------

def shape_model(op, shape, data=None):
    """`op` of a constant (or, for ConstantOfShape, nothing) by shape `shape`."""
    inits = {"s": np.array(shape, np.int64)}
    inputs = ["s"]
    if op != "ConstantOfShape":
        inits["c"] = np.ones(1, np.int64) if data is None else data
        inputs = ["c", "s"]
    return node_model(op, inputs, inits=inits, out_types={0: TensorProto.INT64
                                                          if op != "ConstantOfShape"
                                                          else TensorProto.FLOAT})


@pytest.mark.parametrize("op", ["ConstantOfShape", "Expand", "Reshape"])
@pytest.mark.parametrize("shape, expected", [
    ([-3, 4], "has a negative size -3"),
    ([2**40, 2**40], "has more elements than fit in 64 bits"),
])
def test_shape_input_out_of_range(op, shape, expected):
    e = import_error(shape_model(op, shape))
    which = "input 0" if op == "ConstantOfShape" else "input 1"
    assert str(e).startswith(f"node '{op.lower()}_node' ({op}): the shape ({which}) "
                             f"{shape} {expected}"), str(e)
    assert not e.unsupported


def test_folded_reshape_to_the_wrong_size():
    e = import_error(shape_model("Reshape", [3, 4], np.ones(6, np.int64)))
    assert "node 'reshape_node' (Reshape): cannot reshape 6 elements (shape [6]) to [3, 4]" \
        in str(e)


def test_large_expand_of_a_constant_is_not_folded():
    # 2**40 elements: folding it with numpy would try to allocate 8 TiB.
    imported = import_model(shape_model("Expand", [2**20, 2**20]), context=context())
    assert "paddle.broadcast_to" in imported.to_text()


def test_range_too_large_for_a_constant():
    model = node_model("Range", ["a", "b", "d"],
                       inits={"a": np.array(0, np.int64), "b": np.array(10**12, np.int64),
                              "d": np.array(1, np.int64)})
    e = import_error(model)
    assert "node 'range_node' (Range): the range has 1000000000000 elements: too large" \
        in str(e)
