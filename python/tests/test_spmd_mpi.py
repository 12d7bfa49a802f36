"""SPMD programs on MPI processes: the training step of an MLP and of a
GPT-2-style block, partitioned for a mesh, compiled ahead of time into one
executable (paddle-compile --emit exe) and run for five Adam steps under
MPICH's `mpirun -np 2` and `-np 4`, feeding each step's new state to the
next; the parameters match the single-device TrainStep to 1e-5. Also
`mpirun -np N paddle-run`, and the faults: a process count that is not the
mesh's, and a rank that fails mid-step (the others fail too, naming it,
and nothing is written). And the Python package under mpirun, each
process one device: data-parallel and pipeline TrainSteps."""

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

import paddle_mlir as pm
from paddle_mlir import nn, optim
from test_spmd_training import BLOCK_TENSOR, MODELS, STEPS, TOL, reference

BUILD = Path(os.environ["PADDLE_BUILD_DIR"])
PADDLE_RUN = BUILD / "bin" / "paddle-run"
PADDLE_COMPILE = BUILD / "bin" / "paddle-compile"
MPIRUN = shutil.which("mpirun.mpich") or shutil.which("mpirun")


def mpirun(np_, *cmd, timeout=120):
    # MPI is a dependency (scripts/setup.sh installs MPICH): missing is a
    # failure, not a skip.
    assert MPIRUN is not None, "mpirun not found: run scripts/setup.sh"
    return subprocess.run([MPIRUN, "-np", str(np_), *map(str, cmd)],
                          capture_output=True, text=True, timeout=timeout)


def save_inputs(folder, arrays):
    folder.mkdir(parents=True, exist_ok=True)
    args = []
    for i, a in enumerate(arrays):
        path = folder / f"in{i}.npy"
        np.save(path, np.array(a, order="C"))  # (ascontiguousarray makes 0-d 1-d)
        args += ["--input", str(path)]
    return args


CONFIGS = {
    # (model, processes, mesh, TrainStep options)
    "mlp-data-2": ("mlp", 2, pm.Mesh(2), dict(parallel="data")),
    "mlp-tensor-2": ("mlp", 2, pm.Mesh(2, "model"), dict(parallel="tensor")),
    "mlp-data-x-tensor-4": ("mlp", 4, pm.Mesh((2, 2), ("data", "model")),
                            dict(parallel="tensor")),
    "block-data-4": ("block", 4, pm.Mesh(4), dict(parallel="data")),
    "block-tensor-2": ("block", 2, pm.Mesh(2, "model"), dict(parallel=BLOCK_TENSOR)),
}


@pytest.mark.parametrize("config", list(CONFIGS))
def test_training_steps_under_mpirun_match_one_device(tmp_path, config):
    kind, procs, mesh, options = CONFIGS[config]
    cls, loss_cls, batches = MODELS[kind]
    model = cls(np.random.default_rng(0))
    opt = optim.Adam(model, lr=0.01)
    step = nn.TrainStep(model, loss_cls(), opt, mesh=mesh, **options)
    data = batches()
    # Trace and partition the step once (in process), then build the SPMD
    # executable from the same module.
    step(*data[0])
    module_path = tmp_path / "step.mlirbc"
    step.last_module.save(str(module_path))
    exe = tmp_path / "step"
    built = subprocess.run([str(PADDLE_COMPILE), str(module_path), "--emit", "exe",
                            "-o", str(exe)], capture_output=True, text=True, timeout=300)
    assert built.returncode == 0, built.stderr

    # Fresh state, then five steps in MPI processes.
    model = cls(np.random.default_rng(0))
    opt = optim.Adam(model, lr=0.01)
    step = nn.TrainStep(model, loss_cls(), opt, mesh=mesh, **options)
    n_state = len(step._trained) + len(opt.state) + len(model.named_buffers())
    state = step._arguments([])[:n_state]
    frozen = step._arguments([])[n_state:]
    losses = []
    for i, batch in enumerate(data):
        out = tmp_path / f"out{i}"
        run = mpirun(procs, exe, *save_inputs(tmp_path / f"in{i}",
                                              state + frozen + list(batch)),
                     "--output-dir", out)
        assert run.returncode == 0, run.stderr
        results = [np.load(out / f"train_step_{k}.npy")
                   for k in range(2 + n_state)]
        losses.append(float(results[0]))
        state = results[2:]
    ref_losses, _, ref_params, _ = reference(kind)
    np.testing.assert_allclose(losses, ref_losses, rtol=TOL, atol=TOL)
    for (name, want), got in zip(ref_params.items(), state):
        np.testing.assert_allclose(got, want, rtol=TOL, atol=TOL, err_msg=name)
    assert len(losses) == STEPS


def sharded_exp_module(tmp_path, devices):
    text = (f"shard.grid @mesh(shape = {devices})\n"
            "func.func @f(%x: tensor<8x4xf32>) -> tensor<8x4xf32> {\n"
            "  %s = shard.sharding @mesh split_axes = [[0]] : !shard.sharding\n"
            "  %a = shard.shard %x to %s : tensor<8x4xf32>\n"
            "  %r = paddle.exp %a : tensor<8x4xf32> -> tensor<8x4xf32>\n"
            "  return %r : tensor<8x4xf32>\n}\n")
    path = tmp_path / "module.mlir"
    path.write_text(text)
    return path


@pytest.mark.parametrize("np_", [2, 4])
def test_paddle_run_under_mpirun(tmp_path, np_):
    x = np.random.default_rng(3).standard_normal((8, 4)).astype(np.float32)
    module = sharded_exp_module(tmp_path, np_)
    run = mpirun(np_, PADDLE_RUN, module, *save_inputs(tmp_path, [x]),
                 "--output-dir", tmp_path / "out")
    assert run.returncode == 0, run.stderr
    np.testing.assert_allclose(np.load(tmp_path / "out" / "f_0.npy"), np.exp(x),
                               rtol=1e-6)


def test_process_count_must_be_the_mesh_size(tmp_path):
    x = np.zeros((8, 4), np.float32)
    run = mpirun(3, PADDLE_RUN, sharded_exp_module(tmp_path, 2),
                 *save_inputs(tmp_path, [x]), "--output-dir", tmp_path / "out")
    assert run.returncode != 0
    assert ("partitioned for a mesh of shape [2] (2 devices), but mpirun "
            "started 3 processes") in run.stderr
    assert not (tmp_path / "out").exists()


def test_a_failing_rank_fails_the_others_and_writes_nothing(tmp_path):
    # Data-parallel gather: rank 1's rows hold an index out of range.
    table = np.random.default_rng(4).standard_normal((16, 6)).astype(np.float32)
    idx = np.zeros((4, 2), np.int64)
    idx[2, 1] = 99
    text = ("shard.grid @mesh(shape = 2)\n"
            "func.func @f(%t: tensor<16x6xf32>, %i: tensor<4x2xi64>) -> tensor<4x2x6xf32> {\n"
            "  %s = shard.sharding @mesh split_axes = [[0]] : !shard.sharding\n"
            "  %a = shard.shard %i to %s : tensor<4x2xi64>\n"
            "  %g = paddle.gather %t, %a axis = 0 : tensor<16x6xf32>, tensor<4x2xi64> -> tensor<4x2x6xf32>\n"
            "  %w = shard.sharding @mesh split_axes = [[]] : !shard.sharding\n"
            "  %r = shard.shard %g to %w annotate_for_users : tensor<4x2x6xf32>\n"
            "  return %r : tensor<4x2x6xf32>\n}\n")
    module = tmp_path / "module.mlir"
    module.write_text(text)
    run = mpirun(2, PADDLE_RUN, module, *save_inputs(tmp_path, [table, idx]),
                 "--output-dir", tmp_path / "out", "--collective-timeout", "30")
    assert run.returncode != 0
    assert "rank 1: " in run.stderr and "out of range" in run.stderr, run.stderr
    assert not (tmp_path / "out").exists()


PYTHON_SCRIPT = Path(__file__).resolve().parent / "spmd_mpi_python.py"


@pytest.mark.parametrize("plan,kind,np_", [("data", "mlp", 2), ("data", "block", 4),
                                           ("pipeline", "mlp", 2), ("pipeline", "block", 4)])
def test_python_under_mpirun_is_one_device_per_process(plan, kind, np_):
    # The Python package under mpirun: TrainStep's data-parallel and
    # pipeline steps, each process one device (spmd_mpi_python.py checks
    # its results against the single-device run to 1e-5).
    run = mpirun(np_, sys.executable, PYTHON_SCRIPT, plan, kind, timeout=600)
    assert run.returncode == 0, run.stdout + run.stderr
    for r in range(np_):
        assert f"rank {r}: ok" in run.stdout, run.stdout + run.stderr


def test_python_mesh_and_process_count_must_agree(tmp_path):
    script = tmp_path / "mismatch.py"
    script.write_text(
        "import sys, numpy as np\n"
        f"sys.path.insert(0, {str(Path(__file__).resolve().parents[1])!r})\n"
        "import paddle_mlir as pm\n"
        "from paddle_mlir import nn, optim\n"
        "f = pm.jit(lambda x: x * 2.0, mesh=pm.Mesh(2), in_shardings=pm.P('data'))\n"
        "try:\n"
        "    f(np.zeros((4, 2), np.float32))\n"
        "except Exception as e:\n"
        "    print(f'jit: {e}', flush=True)\n"
        "rng = np.random.default_rng(0)\n"
        "m = nn.Sequential(nn.Linear(2, 2, rng=rng), nn.Linear(2, 2, rng=rng))\n"
        "step = nn.TrainStep(m, nn.MSELoss(), optim.SGD(m, lr=0.1), mesh=pm.Mesh(2, 'pipe'),\n"
        "                    parallel='pipeline')\n"
        "try:\n"
        "    step(np.zeros((4, 2), np.float32), np.zeros((4, 2), np.float32))\n"
        "except Exception as e:\n"
        "    print(f'pipeline: {e}', flush=True)\n")
    run = mpirun(3, sys.executable, script, timeout=300)
    assert run.returncode == 0, run.stderr
    # Every process fails with the message (their lines may interleave).
    assert run.stdout.count("(2 devices), but the run has 3 processes") == 3, run.stdout
    assert run.stdout.count("the pipeline has 2 stages (the mesh's devices), but mpirun "
                            "started 3") == 3, run.stdout


def test_a_killed_process_ends_the_python_job():
    # The last pipeline stage is SIGKILLed mid-step: mpirun ends the job
    # (the first stage, waiting for its gradients, never reports success)
    # well within the timeout, with a failing exit.
    start = time.monotonic()
    run = mpirun(2, sys.executable, PYTHON_SCRIPT, "pipeline-killed", "mlp", timeout=300)
    assert run.returncode != 0
    assert "Killed (signal 9)" in run.stdout + run.stderr, run.stdout + run.stderr
    assert "ok" not in run.stdout, run.stdout
    assert time.monotonic() - start < 120
