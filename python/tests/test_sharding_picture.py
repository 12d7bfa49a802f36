"""scripts/sharding_picture.py: the picture of how a function is split over
a mesh, from --paddle-sharding-report's JSON. The Megatron MLP with a data
axis on a 2x2 mesh of examples/megatron-mlp.mlir: every block of every argument and result names the
devices that hold it, and each collective its device groups and bytes;
bad reports are clear errors that write nothing."""

import subprocess
import sys
import xml.etree.ElementTree as ET

from paddle_testing import PADDLE_OPT, REPO

SCRIPT = REPO / "scripts" / "sharding_picture.py"

EXAMPLE = REPO / "examples" / "megatron-mlp.mlir"  # the one docs/distributed.md draws


def picture(tmp_path, *extra):
    out = tmp_path / "picture.svg"
    run = subprocess.run([sys.executable, str(SCRIPT), str(tmp_path / "report.json"),
                          "-o", str(out), *extra], capture_output=True, text=True)
    return run, out


def report(tmp_path):
    subprocess.run([str(PADDLE_OPT), str(EXAMPLE),
                    f"--paddle-sharding-report=json={tmp_path / 'report.json'}",
                    "-o", str(tmp_path / "out.mlir")], check=True, capture_output=True)


def test_every_block_names_its_devices(tmp_path):
    report(tmp_path)
    run, out = picture(tmp_path)
    assert run.returncode == 0, run.stderr
    texts = [t.text for t in ET.parse(out).getroot().iter("{http://www.w3.org/2000/svg}text")]
    assert texts[0] == "@mlp on mesh [2, 2] (4 devices)"

    def blocks_of(label):
        # The block labels that follow a value's two label lines.
        i = texts.index(label) + 2
        found = []
        while i < len(texts) and texts[i].startswith("dev "):
            found.append(texts[i])
            i += 1
        return found

    # x: rows split over the data axis (devices 0,1 share coordinate 0).
    # A whole tensor would be one block, "dev all".
    assert blocks_of("argument 0: tensor<8x8xf32>  split [[0], []]") == ["dev 0,1", "dev 2,3"]
    # w1: columns over the model axis; w2: rows over it.
    assert blocks_of("argument 1: tensor<8x16xf32>  split [[], [1]]") == ["dev 0,2", "dev 1,3"]
    assert blocks_of("argument 2: tensor<16x8xf32>  split [[1], []]") == ["dev 0,2", "dev 1,3"]
    assert blocks_of("result 0: tensor<8x8xf32>  split [[0], []]") == ["dev 0,1", "dev 2,3"]
    # The row-split matmul's partial sums, 4x8 f32 per device, all-reduced
    # over the model axis.
    collectives = [t for t in texts if " over axes " in t]
    assert len(collectives) == 1, texts
    assert collectives[0].startswith("all_reduce over axes [1] (devices {0,1} {2,3}): 128 B")
    assert "megatron-mlp.mlir:12:" in collectives[0]  # the second matmul's line


def test_bad_reports_are_clear_errors_and_write_nothing(tmp_path):
    run, out = picture(tmp_path)
    assert run.returncode != 0 and "cannot read" in run.stderr and not out.exists()
    (tmp_path / "report.json").write_text('{"functions": [{"name": "f"')
    run, out = picture(tmp_path)
    assert run.returncode != 0 and "cannot read" in run.stderr and not out.exists()
    (tmp_path / "report.json").write_text('{"functions": [{"name": "f", "mesh": [2]}]}')
    run, out = picture(tmp_path)
    assert run.returncode != 0 and "is not a sharding report" in run.stderr
    assert not out.exists()
    report(tmp_path)
    run, out = picture(tmp_path, "--function", "nope")
    assert run.returncode != 0 and "no function 'nope'" in run.stderr and "mlp" in run.stderr
    assert not out.exists()


def test_block_owners_follow_the_mesh_order():
    import importlib.util
    spec = importlib.util.spec_from_file_location("sharding_picture", SCRIPT)
    sp = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(sp)
    # Whole on a 2x2 mesh: one block on every device.
    held, rows, columns = sp.blocks({"split": "[[], []]", "type": "tensor<8x8xf32>"}, [2, 2])
    assert (rows, columns) == (1, 1) and held == {(0, 0): [0, 1, 2, 3]}
    assert sp.device_list(held[(0, 0)], 4) == "all"
    # Dim 0 over both axes (axis 1 major), dim 2 over none, rank 3.
    held, rows, columns = sp.blocks({"split": "[[1, 0]]", "type": "tensor<8x2x4xf32>"},
                                    [2, 2])
    assert (rows, columns) == (4, 1)
    assert held == {(0, 0): [0], (1, 0): [2], (2, 0): [1], (3, 0): [3]}
    # Dims 0 and 1 over different axes: a 2x2 grid, one device each.
    held, rows, columns = sp.blocks({"split": "[[0], [1]]", "type": "tensor<4x4xf32>"},
                                    [2, 2])
    assert held == {(0, 0): [0], (0, 1): [1], (1, 0): [2], (1, 1): [3]}
    assert sp.groups([0], [2, 2]) == "{0,2} {1,3}"
