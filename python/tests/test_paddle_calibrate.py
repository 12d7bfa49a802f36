"""paddle-calibrate --quick writes a spec that the cost model loads back."""

import json
import os
import subprocess
import time
from pathlib import Path

import pytest

BIN = Path(os.environ["PADDLE_BUILD_DIR"]) / "bin"


def test_calibrate_writes_a_loadable_spec(tmp_path):
    spec = tmp_path / "local.json"
    start = time.monotonic()
    run = subprocess.run([BIN / "paddle-calibrate", "--quick", "--name", "here",
                          "-o", spec], capture_output=True, text=True)
    elapsed = time.monotonic() - start
    assert run.returncode == 0, run.stderr
    assert elapsed < 10, f"--quick took {elapsed:.1f} s"

    data = json.loads(spec.read_text())
    assert data["name"] == "here" and data["kind"] == "cpu"
    assert data["cores"] == os.cpu_count()
    # Plausible for any x86 core of the last decade: >= 1 GFLOP/s f32 per
    # core, f64 at most f32, >= 1 GB/s memory, caches faster than memory.
    peak = data["peak_flops_per_s"]
    assert peak["f32"] >= 1e9 * data["cores"]
    assert 0 < peak["f64"] <= peak["f32"] * 1.1
    assert data["memory_bandwidth_bytes_per_s"] >= 1e9
    assert 0 < data["call_overhead_s"] < 1e-3
    sizes = [c["size_bytes"] for c in data["caches"]]
    assert sizes == sorted(sizes) and len(sizes) >= 1
    assert data["caches"][0]["bandwidth_bytes_per_s"] > \
        data["memory_bandwidth_bytes_per_s"]

    # The library choice (docs/onednn.md): efficiencies are fractions of a
    # peak; a oneDNN call costs more than a generated kernel's, not more
    # than a millisecond; tiled code beats scalar loops.
    for value in [*data["onednn"].values(), *data["codegen"].values()]:
        assert value >= 0
    assert 0 < data["onednn"]["f32_efficiency"] <= 1
    assert 0 <= data["onednn"]["call_overhead_s"] < 1e-3
    codegen = data["codegen"]
    assert 0 < codegen["scalar_f32_efficiency"] < codegen["tiled_f32_efficiency"] <= 1
    assert 0 < codegen["memory_efficiency"] <= 1

    # The loader reads it back: the cost report names the device and uses
    # its peak.
    module = tmp_path / "m.mlir"
    module.write_text("""
func.func @f(%a: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %0 = paddle.matmul %a, %a : tensor<8x8xf32>, tensor<8x8xf32> -> tensor<8x8xf32>
  return %0 : tensor<8x8xf32>
}
""")
    report = subprocess.run(
        [BIN / "paddle-opt", module, f"--paddle-set-target=device={spec}", "--paddle-cost-report",
         "-o", tmp_path / "out.mlir"], capture_output=True, text=True)
    assert report.returncode == 0, report.stderr
    assert "cost report: device here (cpu" in report.stdout
    assert "paddle.matmul" in report.stdout and "1024" in report.stdout
    assert "library choice: onednn" in report.stdout


def cpu_flags():
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("flags"):
                return set(line.split(":", 1)[1].split())
    return set()


def test_calibrate_measures_the_narrow_types_this_cpu_has(tmp_path):
    spec = tmp_path / "local.json"
    run = subprocess.run([BIN / "paddle-calibrate", "--quick", "-o", spec],
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    data = json.loads(spec.read_text())
    peak, notes, flags = data["peak_flops_per_s"], data["notes"], cpu_flags()

    # f16: FMAs on 32 half lanes, twice the f32 lanes (2x nominal; a loop
    # that spills its accumulators runs at a third of f32).
    if "avx512_fp16" in flags:
        assert "f16: AVX512-FP16 FMA chains" in notes
        assert peak["f16"] > 1.2 * peak["f32"], peak
    else:
        assert "f16" not in peak and "f16 (no AVX512-FP16)" in notes

    # bf16 and i8: AMX tiles where Linux grants them (8-16x the f32 FMAs
    # per core nominally, i8 twice bf16), else 512-bit dot products.
    if "AMX TDPBF16PS" in notes:
        assert {"amx_bf16", "amx_int8"} <= flags
        assert "i8: AMX TDPBSSD" in notes
        assert peak["bf16"] > 3 * peak["f32"], peak
        assert peak["i8"] > 3 * peak["f32"], peak
    elif "avx512_bf16" in flags:
        assert "bf16: AVX512-BF16 dot products" in notes
        assert peak["bf16"] > 0.2 * peak["f32"], peak
    else:
        assert "bf16" not in peak and "bf16 (no AMX or AVX512-BF16)" in notes
    # oneDNN's bf16 efficiency comes with a bf16 peak; on AMX its bf16
    # matmuls outrun its f32 ones (measured here: 2.8x).
    onednn = data["onednn"]
    if "bf16" in peak:
        assert "oneDNN bf16" in notes
        assert 0 < onednn["bf16_efficiency"] <= 1
        if "AMX TDPBF16PS" in notes:
            assert onednn["bf16_efficiency"] * peak["bf16"] > \
                onednn["f32_efficiency"] * peak["f32"], (onednn, peak)
    else:
        assert "bf16_efficiency" not in onednn
    if "AMX TDPBF16PS" not in notes:
        if "avx512_vnni" in flags:
            assert "i8: AVX512-VNNI dot products" in notes
            assert peak["i8"] > peak["f32"], peak
        else:
            assert "i8" not in peak


def test_calibrate_reports_an_unwritable_output(tmp_path):
    bad = tmp_path / "missing" / "dir" / "spec.json"
    run = subprocess.run([BIN / "paddle-calibrate", "--quick", "-o", bad],
                         capture_output=True, text=True)
    assert run.returncode == 1
    assert f"paddle-calibrate: cannot write '{bad}'" in run.stderr


if __name__ == "__main__":
    pytest.main([__file__])


def test_installed_host_spec_is_the_default(tmp_path):
    """`paddle-calibrate --install` puts this machine's spec where the
    compilers look: a module without a target then compiles for it (the IR
    shows device "host"); a spec measured on another CPU model (a home
    directory shared between machines) is ignored for the built-in default,
    and so is one that does not parse."""
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache")}
    run = subprocess.run([BIN / "paddle-calibrate", "--quick", "--install"],
                         capture_output=True, text=True, env=env)
    assert run.returncode == 0, run.stderr
    installed = tmp_path / "cache" / "paddle-mlir" / "host.json"
    data = json.loads(installed.read_text())
    assert data["name"] == "host" and data["cpu_model"]
    module = "func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {\n  return %a : tensor<4xf32>\n}\n"

    def default_device():
        proc = subprocess.run([BIN / "paddle-opt", "-", "--paddle-set-target"], input=module,
                              capture_output=True, text=True, env=env)
        assert proc.returncode == 0, proc.stderr
        return proc.stdout.split('#paddle.target<device = "')[1].split('"')[0]

    assert default_device() == "host"
    data["cpu_model"] = "Another CPU"
    installed.write_text(json.dumps(data))
    assert default_device() == "xeon-amx-2c"
    installed.write_text("{not json")
    assert default_device() == "xeon-amx-2c"
    both = subprocess.run([BIN / "paddle-calibrate", "--quick", "--install", "-o",
                           tmp_path / "x.json"], capture_output=True, text=True, env=env)
    assert both.returncode == 1 and "give -o or --install, not both" in both.stderr


def test_calibrate_writes_this_machine_as_a_cluster(tmp_path):
    """--cluster-out: one node of this machine's cores, joined by the
    measured link of the in-process mesh, naming the device spec; the
    auto-sharding search plans on it."""
    from paddle_mlir import _core
    spec, cluster = tmp_path / "host.json", tmp_path / "cluster.json"
    run = subprocess.run([BIN / "paddle-calibrate", "--quick", "-o", spec,
                          f"--cluster-out={cluster}"], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    c = _core.cluster_spec(str(cluster))
    assert c["nodes"] == 1 and c["devices_per_node"] == os.cpu_count()
    assert c["device"] == str(spec)
    link = json.loads(spec.read_text())["link"]
    # The measured link: a 4 KiB all-reduce between two threads takes
    # microseconds, a 16 MiB gather moves at least 100 MB/s.
    assert 0 < link["latency_s"] < 1e-3 and link["bandwidth_bytes_per_s"] > 1e8
    assert c["intra_node"] == link
    module = tmp_path / "m.mlir"
    module.write_text("""
func.func @f(%a: tensor<64x64xf32>) -> tensor<64x64xf32> {
  %0 = paddle.exp %a : tensor<64x64xf32> -> tensor<64x64xf32>
  return %0 : tensor<64x64xf32>
}
""")
    planned = subprocess.run([BIN / "paddle-opt", module,
                              f"--paddle-auto-shard=cluster={cluster}"],
                             capture_output=True, text=True)
    assert planned.returncode == 0, planned.stderr
    assert f"shard.grid @mesh(shape = {os.cpu_count()})" in planned.stdout
    assert 'cluster = "local-cpu-x' in planned.stdout
    # The cluster names the spec file: without one there is nothing to name.
    bad = subprocess.run([BIN / "paddle-calibrate", "--quick",
                          f"--cluster-out={tmp_path / 'c2.json'}"],
                         capture_output=True, text=True)
    assert bad.returncode == 1
    assert "give -o FILE or --install too" in bad.stderr
    assert not (tmp_path / "c2.json").exists()
