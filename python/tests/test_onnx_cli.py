"""paddle-import-onnx end to end: a small CNN (Conv, BatchNormalization,
Relu, MaxPool, GlobalAveragePool, Flatten, Gemm, Softmax) with a dynamic
batch dim is imported by the CLI and the file runs unchanged under
build/bin/paddle-run on .npy inputs; results match onnxruntime within
rtol=1e-4, atol=1e-5."""

import os
import subprocess
import sys

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper, save
from onnx_testing import REPO, run_ort
from paddle_testing import PADDLE_RUN, run_module


def small_cnn(rng):
    def w(name, *shape):
        return numpy_helper.from_array(rng.uniform(-0.5, 0.5, shape).astype(np.float32), name)
    inits = [w("cw", 8, 3, 3, 3), w("cb", 8), w("s", 8), w("b", 8), w("m", 8),
             numpy_helper.from_array(rng.uniform(0.5, 1.5, 8).astype(np.float32), "v"),
             w("fw", 10, 8), w("fb", 10)]
    nodes = [
        helper.make_node("Conv", ["x", "cw", "cb"], ["c"], pads=[1, 1, 1, 1], name="conv"),
        helper.make_node("BatchNormalization", ["c", "s", "b", "m", "v"], ["n"], name="bn"),
        helper.make_node("Relu", ["n"], ["r"], name="relu"),
        helper.make_node("MaxPool", ["r"], ["p"], kernel_shape=[2, 2], strides=[2, 2],
                         name="pool"),
        helper.make_node("GlobalAveragePool", ["p"], ["g"], name="gap"),
        helper.make_node("Flatten", ["g"], ["f"], name="flatten"),
        helper.make_node("Gemm", ["f", "fw", "fb"], ["logits"], transB=1, name="fc"),
        helper.make_node("Softmax", ["logits"], ["prob"], axis=1, name="softmax"),
    ]
    graph = helper.make_graph(
        nodes, "cnn", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3, 8, 8])],
        [helper.make_tensor_value_info("prob", TensorProto.FLOAT, ["N", 10]),
         helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["N", 10])], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def import_cli(args, tmp_path):
    env = dict(os.environ, PYTHONPATH=str(REPO / "python"))
    return subprocess.run([sys.executable, "-m", "paddle_mlir.onnx"] + args,
                          capture_output=True, text=True, env=env, timeout=120)


@pytest.mark.parametrize("suffix", [".mlir", ".mlirbc"])
def test_cli_import_then_paddle_run(tmp_path, rng, suffix):
    model = small_cnn(rng)
    path = tmp_path / "cnn.onnx"
    save(model, path)
    out = tmp_path / ("cnn" + suffix)
    proc = import_cli([str(path), "-o", str(out)], tmp_path)
    assert proc.returncode == 0, proc.stderr
    if suffix == ".mlir":
        text = out.read_text()
        assert "paddle.conv2d" in text and "tensor<?x3x8x8xf32>" in text
    for n in (1, 3):
        x = rng.standard_normal((n, 3, 8, 8)).astype(np.float32)
        expected = run_ort(model, [x])
        np.save(tmp_path / "x.npy", x)
        outdir = tmp_path / f"out{n}"
        cmd = [str(PADDLE_RUN), str(out), "--input", str(tmp_path / "x.npy"),
               "--output-dir", str(outdir)]
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
        assert proc.returncode == 0, proc.stderr
        got = [np.load(outdir / f"main_{k}.npy") for k in range(2)]
        for g, e in zip(got, expected):
            np.testing.assert_allclose(g, e, rtol=1e-4, atol=1e-5)


def test_cli_function_name_and_debug_info(tmp_path, rng):
    model = small_cnn(rng)
    path = tmp_path / "cnn.onnx"
    save(model, path)
    out = tmp_path / "cnn.mlir"
    proc = import_cli([str(path), "-o", str(out), "--function", "predict", "--debug-info"],
                      tmp_path)
    assert proc.returncode == 0, proc.stderr
    text = out.read_text()
    assert "func.func @predict(" in text
    # Locations name the model file and the node.
    assert "cnn.onnx@conv" in text
    x = rng.standard_normal((2, 3, 8, 8)).astype(np.float32)
    prob, logits = run_module(tmp_path, text, [x], function="predict")
    expected = run_ort(model, [x])
    np.testing.assert_allclose(prob, expected[0], rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(logits, expected[1], rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("suffix", [".mlir", ".mlirbc"])
def test_cli_locations_only_with_debug_info(tmp_path, rng, suffix):
    path = tmp_path / "cnn.onnx"
    save(small_cnn(rng), path)
    umask = os.umask(0)
    os.umask(umask)
    contents = {}
    for flag in ([], ["--debug-info"]):
        out = tmp_path / (f"cnn{len(flag)}" + suffix)
        proc = import_cli([str(path), "-o", str(out)] + flag, tmp_path)
        assert proc.returncode == 0, proc.stderr
        assert out.stat().st_mode & 0o777 == 0o666 & ~umask
        contents[bool(flag)] = out.read_bytes()
    # Node names (the location of each op) are in the file with the flag only.
    assert b"cnn.onnx@conv" in contents[True] and b"cnn.onnx@conv" not in contents[False]
    if suffix == ".mlir":
        assert b"loc(" not in contents[False]
