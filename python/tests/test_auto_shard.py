"""The cost model's own plans (paddle-auto-shard) run and match the
single-device results: pm.jit(..., in_shardings="auto") and
pm.nn.TrainStep(..., parallel="auto") on in-process meshes."""

import subprocess

import numpy as np
import pytest

import paddle_mlir as pm
from paddle_mlir import nn, optim

from paddle_testing import PADDLE_OPT, run_module
from test_spmd_training import MODELS, STEPS, TOL, partitioned_text, reference, train


def test_auto_jit_splits_a_wide_batch(rng):
    # A wide batch through a small weight: splitting the batch divides the
    # work by 4 and needs no communication, the plan the search must find.
    x = rng.standard_normal((2048, 64)).astype(np.float32)
    w = rng.standard_normal((64, 64)).astype(np.float32)
    f = pm.jit(lambda a, b: pm.relu(a @ b), mesh=pm.Mesh(4),
               in_shardings="auto")
    np.testing.assert_allclose(f(x, w), np.maximum(x @ w, 0), rtol=1e-5,
                               atol=1e-5)
    module = f._trace((x, w), {})[0]
    module.run_passes("builtin.module(paddle-partition)")
    text = str(module)
    # Each device's program takes a quarter of the batch, the weight whole.
    assert "%arg0: tensor<512x64xf32>" in text, text[:3000]
    assert "%arg1: tensor<64x64xf32>" in text, text[:3000]
    assert "paddle_spmd_all" not in text


@pytest.mark.parametrize("mesh", [pm.Mesh(2), pm.Mesh((2, 2), ("data", "model"))],
                         ids=["2", "2x2"])
@pytest.mark.parametrize("kind", list(MODELS))
def test_auto_training_matches_one_device(kind, mesh):
    ref_losses, ref_outputs, ref_params, _ = reference(kind)
    losses, outputs, params, step = train(kind, mesh, parallel="auto")
    np.testing.assert_allclose(losses, ref_losses, rtol=TOL, atol=TOL)
    for got, want in zip(outputs, ref_outputs):
        np.testing.assert_allclose(got, want, rtol=TOL, atol=TOL)
    for k, want in ref_params.items():
        np.testing.assert_allclose(params[k], want, rtol=TOL, atol=TOL, err_msg=k)
    text = partitioned_text(step)
    assert "paddle.plan" in text and 'status = "optimal"' in text, text[:3000]
    assert len(losses) == STEPS


def test_auto_plan_keeps_the_users_constraints(rng):
    # pm.shard inside an auto-planned function is a constraint: the product
    # is split by columns, whatever the cost model would rather do.
    x = rng.standard_normal((8, 16)).astype(np.float32)
    f = pm.jit(lambda a: pm.shard(a * 2, pm.P(None, "data")) + 1,
               mesh=pm.Mesh(2), in_shardings="auto")
    np.testing.assert_allclose(f(x), x * 2 + 1, rtol=1e-6)
    module = f._trace((x,), {})[0]
    module.run_passes("builtin.module(paddle-partition)")
    assert "tensor<8x8xf32>" in str(module)


def test_auto_shard_errors():
    mesh = pm.Mesh(2)
    with pytest.raises(ValueError, match="leave out_shardings out"):
        pm.jit(lambda a: a, mesh=mesh, in_shardings="auto",
               out_shardings=pm.P("data"))
    with pytest.raises(ValueError, match='the only string is "auto"'):
        pm.jit(lambda a: a, mesh=mesh, in_shardings="manual")
    # An unsplittable ask (a softmax's normalized dim) names the op.
    f = pm.jit(lambda a: pm.shard(pm.softmax(a, -1), pm.P(None, "data")),
               mesh=mesh, in_shardings="auto")
    with pytest.raises(Exception, match="cannot be taken by result 0 of "
                                        "'paddle.softmax'"):
        f(np.ones((4, 4), np.float32))
    model = MODELS["mlp"][0](np.random.default_rng(0))
    with pytest.raises(ValueError, match="zero=1 is a hand plan"):
        nn.TrainStep(model, nn.MSELoss(), optim.Adam(model), mesh=mesh,
                     parallel="auto", zero=1)


DYNAMIC_MLP = """
func.func @f(%x: tensor<?x64xf32>, %w: tensor<64x64xf32>) -> tensor<?x64xf32> {
  %h = paddle.matmul %x, %w : tensor<?x64xf32>, tensor<64x64xf32> -> tensor<?x64xf32>
  %r = paddle.relu %h : tensor<?x64xf32> -> tensor<?x64xf32>
  return %r : tensor<?x64xf32>
}
"""


def plan_text(tmp_path, text, options):
    src = tmp_path / "in.mlir"
    src.write_text(text)
    proc = subprocess.run([str(PADDLE_OPT), str(src), f"--paddle-auto-shard={options}"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_dynamic_batch_plan_holds_for_every_declared_size(tmp_path, rng):
    # Batches declared multiples of 4, priced at 4096 rows: the batch is
    # split over the 4 devices, and every multiple of 4 runs and matches.
    planned = plan_text(tmp_path, DYNAMIC_MLP,
                        "mesh=4 dynamic-dim-size=4096 dynamic-dim-multiple=4")
    assert "split_axes = [[0]]" in planned
    w = rng.standard_normal((64, 64)).astype(np.float32)
    for rows in (4, 8, 36, 1024):
        x = rng.standard_normal((rows, 64)).astype(np.float32)
        (tmp_path / str(rows)).mkdir()
        (got,) = run_module(tmp_path / str(rows), planned, [x, w],
                            extra_args=["--mesh", "4"])
        np.testing.assert_allclose(got, np.maximum(x @ w, 0), rtol=1e-5, atol=1e-5)
    # Without a declaration the dynamic dim stays whole: any size runs.
    whole = plan_text(tmp_path, DYNAMIC_MLP, "mesh=4 dynamic-dim-size=4096")
    assert "split_axes = [[0]]" not in whole
    x = rng.standard_normal((7, 64)).astype(np.float32)
    (tmp_path / "odd").mkdir()
    (got,) = run_module(tmp_path / "odd", whole, [x, w], extra_args=["--mesh", "4"])
    np.testing.assert_allclose(got, np.maximum(x @ w, 0), rtol=1e-5, atol=1e-5)
