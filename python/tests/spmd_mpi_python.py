"""Run under `mpirun -np N python spmd_mpi_python.py PLAN KIND`: the Python
package with each process one device of the mesh (test_spmd_mpi.py).

PLAN "data": TrainStep(mesh=pm.Mesh(N)), five Adam steps; every process
gets the full results, so every process's loss, outputs and parameters
must equal the single-device run's. PLAN "pipeline": TrainStep(...,
parallel="pipeline") over N stages; each process trains its stage's
parameters, gets the loss, and the last one the outputs. PLAN
"pipeline-killed": the same, but the last process is killed in its third
step. Prints "rank R: ok" or raises."""

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import paddle_mlir as pm  # noqa: E402
from paddle_mlir import _core  # noqa: E402
import test_spmd_pipeline as pipeline_models  # noqa: E402
import test_spmd_training as models  # noqa: E402

TOL = 1e-5


def kill_last_rank_at_step(k):
    """The last process SIGKILLs itself inside its k-th pipeline step,
    after its stage ran (its neighbours are mid-step)."""
    import os
    import signal

    from paddle_mlir.nn.pipeline import PipelineStep
    run_stage, calls = PipelineStep._run_stage, [0]

    def dying(self, s, *args):
        calls[0] += 1
        if calls[0] == k and s == self.n - 1:
            os.kill(os.getpid(), signal.SIGKILL)
        return run_stage(self, s, *args)

    PipelineStep._run_stage = dying


def main():
    plan, kind = sys.argv[1], sys.argv[2]
    world = _core.mpi_world()
    n, rank = world.size, world.rank
    if plan == "pipeline-killed":
        kill_last_rank_at_step(3)
        plan = "pipeline"
    if plan == "data":
        cls, loss_cls, batches = models.MODELS[kind]
        make, options = cls, dict(mesh=pm.Mesh(n), parallel="data")
    else:
        make, loss_cls, batches = pipeline_models.MODELS[kind]
        options = dict(mesh=pm.Mesh(n, "pipe"), parallel="pipeline", microbatches=2)
    train = pipeline_models.train_model
    ref_losses, ref_outputs, ref_params, _ = train(make, loss_cls, batches)
    losses, outputs, params, step = train(make, loss_cls, batches, **options)
    np.testing.assert_allclose(losses, ref_losses, rtol=TOL, atol=TOL)
    initial = make(np.random.default_rng(0)).named_parameters()
    if plan == "data":
        mine = list(params)
    else:
        mine = step._pipeline.stages[rank]["trained"]
        # Another stage's parameters stay as they were here.
        for k in params:
            if k not in mine:
                np.testing.assert_array_equal(params[k], initial[k], err_msg=k)
    last = plan == "data" or rank == n - 1
    for got, want in zip(outputs, ref_outputs):
        if last:
            np.testing.assert_allclose(got, want, rtol=TOL, atol=TOL)
        else:
            assert got is None
    for k in mine:
        np.testing.assert_allclose(params[k], ref_params[k], rtol=TOL, atol=TOL, err_msg=k)
        assert not np.array_equal(params[k], initial[k]), f"{k} never trained"
    print(f"rank {rank}: ok ({len(mine)} parameters checked)", flush=True)


if __name__ == "__main__":
    main()
