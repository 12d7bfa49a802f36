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
        [BIN / "paddle-opt", module, f"--paddle-cost-report=device={spec}",
         "-o", os.devnull], capture_output=True, text=True)
    assert report.returncode == 0, report.stderr
    assert "cost report: device here (cpu" in report.stdout
    assert "paddle.matmul" in report.stdout and "1024" in report.stdout
    assert "library choice: onednn" in report.stdout


def test_calibrate_reports_an_unwritable_output(tmp_path):
    bad = tmp_path / "missing" / "dir" / "spec.json"
    run = subprocess.run([BIN / "paddle-calibrate", "--quick", "-o", bad],
                         capture_output=True, text=True)
    assert run.returncode == 1
    assert f"paddle-calibrate: cannot write '{bad}'" in run.stderr


if __name__ == "__main__":
    pytest.main([__file__])
