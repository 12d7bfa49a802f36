"""The target (#paddle.target) and the compile options, through every entry
point: paddle-opt, paddle-run, paddle-compile and paddle_mlir.jit take the
same options (docs/architecture.md, "Targets"), and `device` decides what the
cost model picks. The example: a 256^3 f32 matmul goes to oneDNN on the
default device (its spec has a oneDNN path that beats our loops there) and
stays on generated code on h200 (a spec without a oneDNN path). Results are
checked against numpy (float64 reference, rtol/atol 1e-4 scaled by the
largest magnitude) whichever path runs.
"""

import json
import shutil
import subprocess

import numpy as np
import pytest
from paddle_testing import BUILD, PADDLE_OPT, PADDLE_RUN, PaddleRunError, REPO, run_module

import paddle_mlir as pm

PADDLE_COMPILE = BUILD / "bin" / "paddle-compile"
CALL = "call @paddle_onednn_matmul"
T = "tensor<256x256xf32>"
MATMUL = (f"func.func @main(%a: {T}, %b: {T}) -> {T} {{\n"
          f"  %0 = paddle.matmul %a, %b : {T}, {T} -> {T}\n"
          f"  return %0 : {T}\n}}\n")


@pytest.fixture
def inputs(rng):
    return [rng.uniform(-1, 1, (256, 256)).astype(np.float32) for _ in range(2)]


def close(r, a, b):
    ref = a.astype(np.float64) @ b
    np.testing.assert_allclose(r, ref, rtol=1e-4, atol=1e-4 * np.abs(ref).max())


def opt(*args, text=MATMUL):
    proc = subprocess.run([str(PADDLE_OPT), "-", *args], input=text, capture_output=True,
                          text=True, timeout=120)
    return proc


@pytest.fixture
def spec_file(tmp_path):
    """A spec as paddle-calibrate writes it, under another name: h200's
    numbers (no oneDNN path)."""
    spec = json.loads((REPO / "specs" / "devices" / "h200.json").read_text())
    spec["name"] = "my-gpu"
    path = tmp_path / "my-gpu.json"
    path.write_text(json.dumps(spec))
    return path


def test_paddle_opt_device_changes_the_library_choice():
    default = opt("--paddle-cpu-pipeline")
    assert default.returncode == 0, default.stderr
    assert CALL in default.stdout
    h200 = opt("--paddle-cpu-pipeline=device=h200")
    assert h200.returncode == 0, h200.stderr
    assert CALL not in h200.stdout
    assert '#paddle.target<device = "h200"' in h200.stdout


def test_paddle_opt_cost_report_reads_the_target(spec_file):
    default = opt("--paddle-set-target", "--paddle-cost-report", "-o", "-")
    assert "cost report: device xeon-amx-2c" in default.stdout
    assert "library choice: onednn" in default.stdout
    for device, name in [("h200", "h200"), (str(spec_file), "my-gpu")]:
        proc = opt(f"--paddle-set-target=device={device}", "--paddle-cost-report")
        assert proc.returncode == 0, proc.stderr
        assert f"cost report: device {name} (gpu" in proc.stdout
        # No oneDNN path on these devices: no choice to report.
        assert "library choice" not in proc.stdout


def test_paddle_run_device(tmp_path, inputs):
    (tmp_path / "run").mkdir()
    for args, calls in [([], True), (["--device", "h200"], False),
                        (["--device=h200", "--library=onednn"], True)]:
        proc_args = args + ["--mlir-print-ir-after=paddle-use-onednn"]
        cmd = [str(PADDLE_RUN), str(tmp_path / "m.mlir"), *proc_args]
        (tmp_path / "m.mlir").write_text(MATMUL)
        ir = subprocess.run(cmd, capture_output=True, text=True, timeout=120).stderr
        assert (CALL in ir) == calls, (args, ir[-2000:])
        (r,) = run_module(tmp_path / "run", MATMUL, inputs, extra_args=args)
        close(r, *inputs)


def test_paddle_run_keeps_the_module_target(tmp_path, inputs):
    """A module that names its target (here attached by paddle-opt) keeps
    it: paddle-run without --device compiles for h200."""
    (tmp_path / "run").mkdir()
    proc = opt("--paddle-set-target=device=h200")
    assert proc.returncode == 0, proc.stderr
    (tmp_path / "m.mlir").write_text(proc.stdout)
    ir = subprocess.run([str(PADDLE_RUN), str(tmp_path / "m.mlir"),
                         "--mlir-print-ir-after=paddle-use-onednn"],
                        capture_output=True, text=True, timeout=120).stderr
    assert '#paddle.target<device = "h200"' in ir
    assert CALL not in ir
    (r,) = run_module(tmp_path / "run", proc.stdout, inputs)
    close(r, *inputs)


def test_paddle_compile_device(tmp_path, spec_file):
    (src := tmp_path / "m.mlir").write_text(MATMUL)
    for args, calls, device in [([], True, "xeon-amx-2c"), (["--device", "h200"], False, "h200"),
                                ([f"--device={spec_file}"], False, "my-gpu")]:
        out = tmp_path / "out.mlir"
        proc = subprocess.run([str(PADDLE_COMPILE), str(src), "-o", str(out), "--emit", "mlir",
                               *args], capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0, proc.stderr
        text = out.read_text()
        assert (CALL in text) == calls, args
        assert f'#paddle.target<device = "{device}"' in text


@pytest.mark.parametrize("flag, message", [
    ("--device=no-such-device", "--device: unknown device 'no-such-device'"),
    ("--device=/nonexistent-dir/spec.json", "--device: cannot read device spec"),
    ("--library=mkl", "--library must be auto, onednn or none; got 'mkl'"),
    ("--vector-bits=100", "--vector-bits must be 128, 256 or 512; got 100"),
    ("--device=", "--device needs a value"),
])
def test_bad_compile_flags(tmp_path, flag, message):
    (src := tmp_path / "m.mlir").write_text(MATMUL)
    out = tmp_path / "m.so"
    proc = subprocess.run([str(PADDLE_COMPILE), str(src), "-o", str(out), flag],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1 and message in proc.stderr, proc.stderr
    assert not out.exists()
    with pytest.raises(PaddleRunError, match=message.replace("(", r"\(")):
        run_module(tmp_path, MATMUL, [], extra_args=[flag])


def test_compile_flags_on_a_compiled_library(tmp_path):
    (src := tmp_path / "m.mlir").write_text(MATMUL)
    so = tmp_path / "m.so"
    proc = subprocess.run([str(PADDLE_COMPILE), str(src), "-o", str(so), "--emit", "so"],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    run = subprocess.run([str(PADDLE_RUN), str(so), "--device=h200"], capture_output=True,
                         text=True, timeout=60)
    assert run.returncode == 1
    assert "compile options (device=h200) apply when compiling a module" in run.stderr


def matmul(a, b):
    return a @ b


def test_jit_device(inputs, spec_file):
    a, b = inputs
    default = pm.jit(matmul)
    assert CALL in default.lower(a, b, stage="llvm")
    assert "paddle.target" not in default.lower(a, b)
    for device in ["h200", spec_file]:
        f = pm.jit(matmul, device=device)
        assert CALL not in f.lower(a, b, stage="llvm")
        assert "paddle.target = #paddle.target<device = " in f.lower(a, b)
        close(f(a, b), a, b)
    forced = pm.jit(matmul, device="h200", library="onednn")
    assert CALL in forced.lower(a, b, stage="llvm")
    close(forced(a, b), a, b)


def test_jit_export_keeps_the_target(tmp_path, inputs):
    path = pm.jit(matmul, device="h200").export(tmp_path / "m.mlir", *inputs)
    ir = subprocess.run([str(PADDLE_RUN), path, "--mlir-print-ir-after=paddle-use-onednn"],
                        capture_output=True, text=True, timeout=120).stderr
    assert '#paddle.target<device = "h200"' in ir and CALL not in ir


@pytest.mark.parametrize("options, message", [
    ({"library": "mkl"}, "library must be auto, onednn or none; got 'mkl'"),
    ({"device": "tpu"}, "unknown device 'tpu'"),
    ({"no_such_option": 1}, "no-such-option"),
    ({"fuse": "maybe"}, "fuse"),
])
def test_jit_bad_options(options, message):
    with pytest.raises(ValueError, match=message):
        pm.jit(matmul, **options)
    with pytest.raises(ValueError, match=message):
        pm.jit(**options)


def test_onnx_compile_takes_the_options(inputs):
    onnx = pytest.importorskip("onnx")
    from onnx import TensorProto, helper
    from paddle_mlir.onnx import import_model
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["a", "b"], ["c"])], "g",
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, [256, 256]) for n in "ab"],
        [helper.make_tensor_value_info("c", TensorProto.FLOAT, [256, 256])])
    imported = import_model(helper.make_model(graph))
    run = imported.compile(device="h200", library="none")
    close(run(*inputs)[0], *inputs)
    with pytest.raises(ValueError, match="got 'mkl'"):
        imported.compile(library="mkl")


BROADCAST = """func.func @main(%x: tensor<2x64x128xf32>, %b: tensor<64x128xf32>) -> tensor<2x64x128xf32> {
  %0 = paddle.neg %b : tensor<64x128xf32> -> tensor<64x128xf32>
  %1 = paddle.add %x, %0 : tensor<2x64x128xf32>, tensor<64x128xf32> -> tensor<2x64x128xf32>
  return %1 : tensor<2x64x128xf32>
}
"""


def test_fusion_follows_the_device(tmp_path, rng):
    """paddle-fuse recomputes a cheap op read broadcast when the extra FLOPs
    cost less than the traffic saved (test/Transforms/fuse.mlir): on the
    default device it does; on a device with a 1 GFLOP/s peak the 8192
    extra FLOPs (8 us) cost more, and the neg stays a kernel of its own."""
    spec = json.loads((REPO / "specs" / "devices" / "xeon-amx-2c.json").read_text())
    spec["name"] = "slow"
    spec["peak_flops_per_s"] = {"f32": 1e9}
    (slow := tmp_path / "slow.json").write_text(json.dumps(spec))
    fused = opt("--paddle-set-target", "--paddle-fuse", text=BROADCAST)
    assert fused.returncode == 0 and 'paddle.fusion "elementwise"' in fused.stdout
    apart = opt(f"--paddle-set-target=device={slow}", "--paddle-fuse", text=BROADCAST)
    assert apart.returncode == 0 and "paddle.fusion" not in apart.stdout
    (src := tmp_path / "m.mlir").write_text(BROADCAST)
    for args, groups in [([], True), ([f"--device={slow}"], False)]:
        proc = subprocess.run([str(PADDLE_COMPILE), str(src), "-o", str(tmp_path / "o.mlir"),
                               "--emit", "mlir", "--mlir-print-ir-after=paddle-fuse", *args],
                              capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0, proc.stderr
        assert ("paddle.fusion" in proc.stderr) == groups, args
    x = rng.standard_normal((2, 64, 128)).astype(np.float32)
    b = rng.standard_normal((64, 128)).astype(np.float32)
    for device in [None, slow]:
        f = pm.jit(lambda x, b: x + (-b), device=device)
        np.testing.assert_array_equal(f(x, b), x - b)
