"""Every paddle op sharded on its legal dims, run on 2 and 4 in-process
devices (`paddle-run --mesh N`), against numpy on the unsharded inputs.

Each case annotates the function's arguments with a split (mesh axes per
dim, `shard.shard`), lets `paddle-spmd-pipeline` propagate and partition
the module, runs one thread per device, and compares the gathered result
with numpy (relative 1e-5, absolute 1e-5 after scaling)."""

import subprocess

import numpy as np
import pytest

from paddle_testing import PADDLE_OPT, PaddleRunError, run_module, tensor_type

MESHES = {"2": (2,), "4": (4,), "2x2": (2, 2)}

rng = np.random.default_rng(0)


def randn(*shape):
    return rng.standard_normal(shape).astype(np.float32)


def sharded_module(mesh, args, specs, body, result_type):
    """A module whose function @f takes `args` (numpy arrays), splits
    argument i as `specs[i]` (per dim, the mesh axes; None: whole), and
    returns `body` (MLIR lines using {0}, {1}, ... for the arguments and
    defining %r)."""
    shape = "x".join(str(s) for s in mesh)
    types = [tensor_type(a.shape, a.dtype) for a in args]
    params = ", ".join(f"%a{i}: {t}" for i, t in enumerate(types))
    lines = [f"shard.grid @mesh(shape = {shape})",
             f"func.func @f({params}) -> {result_type} {{"]
    names = []
    for i, (t, spec) in enumerate(zip(types, specs)):
        if spec is None:
            names.append(f"%a{i}")
            continue
        axes = ", ".join("[" + ", ".join(str(a) for a in d) + "]" for d in spec)
        lines.append(f"  %s{i} = shard.sharding @mesh split_axes = [{axes}] : "
                     "!shard.sharding")
        lines.append(f"  %x{i} = shard.shard %a{i} to %s{i} : {t}")
        names.append(f"%x{i}")
    lines += ["  " + ln.format(*names) for ln in body]
    lines += [f"  return %r : {result_type}", "}"]
    return "\n".join(lines) + "\n"


def check(tmp_path, mesh, args, specs, body, expected, rtol=1e-5):
    result_type = tensor_type(expected.shape, expected.dtype)
    text = sharded_module(mesh, args, specs, body, result_type)
    devices = int(np.prod(mesh))
    (got,) = run_module(tmp_path, text, args, extra_args=["--mesh", str(devices)])
    assert got.shape == expected.shape and got.dtype == expected.dtype, text
    if np.issubdtype(expected.dtype, np.floating):
        scale = max(1.0, float(np.abs(expected).max(initial=0)))
        np.testing.assert_allclose(got, expected, rtol=rtol, atol=rtol * scale,
                                   err_msg=text)
    else:
        np.testing.assert_array_equal(got, expected, err_msg=text)


# (name, args, body, numpy reference, {mesh: [specs per argument, ...]})
X = randn(8, 12)
Y = randn(8, 12)
B = randn(12)
A3 = randn(4, 8, 12)
W = randn(12, 16)
W3 = randn(4, 12, 6)
IMG = randn(4, 8, 6, 6)
FILT = randn(8, 8, 3, 3)
TABLE = randn(16, 6)
IDX = rng.integers(0, 16, size=(4, 2)).astype(np.int64)
# Negative indices count from the end; repeated ones add up in scatter_add.
IDX_NEG = np.array([[3, -1], [15, -16], [7, 3], [-9, 0]], np.int64)
UPD = randn(4, 2, 6)


def scatter_add(x, idx, upd):
    r = x.copy()
    np.add.at(r, idx, upd)
    return r



def softmax(x, axis):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def layer_norm(x, g):
    m = x.mean(-1, keepdims=True)
    v = ((x - m) ** 2).mean(-1, keepdims=True)
    return (x - m) / np.sqrt(v + 1e-5) * g


def conv2d(x, w):
    n, c, h, wd = x.shape
    o, _, kh, kw = w.shape
    out = np.zeros((n, o, h - kh + 1, wd - kw + 1), np.float64)
    for i in range(kh):
        for j in range(kw):
            patch = x[:, :, i:i + out.shape[2], j:j + out.shape[3]]
            out += np.einsum("nchw,oc->nohw", patch, w[:, :, i, j])
    return out.astype(np.float32)


def max_pool(x):
    n, c, h, w = x.shape
    return x.reshape(n, c, h // 2, 2, w // 2, 2).max(axis=(3, 5))


T = "tensor<{}>"
CASES = [
    ("exp", [X], ["%r = paddle.exp {0} : tensor<8x12xf32> -> tensor<8x12xf32>"],
     np.exp(X),
     {"2": [[[[0]]], [[[], [0]]]], "4": [[[[0]]], [[[], [0]]]],
      "2x2": [[[[0], [1]]], [[[1, 0]]], [[[], [0, 1]]]]}),
    ("bias_add", [X, B],
     ["%r = paddle.add {0}, {1} : tensor<8x12xf32>, tensor<12xf32> -> tensor<8x12xf32>"],
     X + B,
     {"2": [[[[0]], None], [[[], [0]], [[0]]]], "4": [[[[], [0]], None]],
      "2x2": [[[[0], [1]], [[1]]], [[[0, 1]], None]]}),
    ("mul_select_compare", [X, Y],
     ["%m = paddle.mul {0}, {1} : tensor<8x12xf32>, tensor<8x12xf32> -> tensor<8x12xf32>",
      "%c = paddle.compare gt, {0}, {1} : tensor<8x12xf32>, tensor<8x12xf32> -> tensor<8x12xi1>",
      "%r = paddle.select %c, %m, {1} : tensor<8x12xi1>, tensor<8x12xf32>, tensor<8x12xf32> -> tensor<8x12xf32>"],
     np.where(X > Y, X * Y, Y),
     {"2": [[[[0]], [[0]]], [[[0]], None]], "2x2": [[[[0], [1]], [[0], [1]]]]}),
    ("cast", [X],
     ["%r = paddle.cast {0} : tensor<8x12xf32> -> tensor<8x12xf64>"],
     X.astype(np.float64),
     {"2x2": [[[[1], [0]]]]}),
    ("matmul", [X, W],
     ["%r = paddle.matmul {0}, {1} : tensor<8x12xf32>, tensor<12x16xf32> -> tensor<8x16xf32>"],
     X @ W,
     # rows, columns, the contracted dim (all_reduce), both.
     {"2": [[[[0]], None], [None, [[], [0]]], [[[], [0]], [[0]]]],
      "4": [[[[0]], None], [[[], [0]], [[0]]]],
      "2x2": [[[[0]], [[], [1]]], [[[], [0, 1]], [[0, 1]]], [[[1], [0]], [[0]]]]}),
    ("batch_matmul", [A3, W3],
     ["%r = paddle.matmul {0}, {1} : tensor<4x8x12xf32>, tensor<4x12x6xf32> -> tensor<4x8x6xf32>"],
     A3 @ W3,
     {"2": [[[[0]], None]], "4": [[[[0]], [[0]]]], "2x2": [[[[0], [1]], None], [[[0], [], [1]], None]]}),
    ("reduce_sum", [X],
     ["%r = paddle.reduce_sum {0} axes = [0] : tensor<8x12xf32> -> tensor<12xf32>"],
     X.sum(0),
     {"2": [[[[0]]], [[[], [0]]]], "4": [[[[0]]]], "2x2": [[[[0], [1]]], [[[0, 1]]]]}),
    ("reduce_max_mean", [X],
     ["%m = paddle.reduce_max {0} axes = [1] : tensor<8x12xf32> -> tensor<8xf32>",
      "%n = paddle.reduce_mean {0} axes = [1] : tensor<8x12xf32> -> tensor<8xf32>",
      "%r = paddle.add %m, %n : tensor<8xf32>, tensor<8xf32> -> tensor<8xf32>"],
     X.max(1) + X.mean(1),
     {"2": [[[[], [0]]]], "4": [[[[], [0]]]], "2x2": [[[[0], [1]]]]}),
    ("softmax", [X],
     ["%r = paddle.softmax {0} axis = 1 : tensor<8x12xf32> -> tensor<8x12xf32>"],
     softmax(X, 1),
     {"2": [[[[0]]], [[[], [0]]]], "4": [[[[0]]]], "2x2": [[[[0, 1]]], [[[0], [1]]]]}),
    ("log_softmax", [X],
     ["%r = paddle.log_softmax {0} axis = 0 : tensor<8x12xf32> -> tensor<8x12xf32>"],
     np.log(softmax(X, 0)),
     {"2": [[[[], [0]]]], "2x2": [[[[], [1, 0]]]]}),
    ("layer_norm", [X, B],
     ["%r = paddle.layer_norm {0} scale {1} axes = [-1] : tensor<8x12xf32>, tensor<12xf32> -> tensor<8x12xf32>"],
     layer_norm(X, B),
     {"2": [[[[0]], None]], "4": [[[[0]], None]], "2x2": [[[[1, 0]], None], [[[0], [1]], None]]}),
    ("conv2d", [IMG, FILT],
     ["%r = paddle.conv2d {0}, {1} : tensor<4x8x6x6xf32>, tensor<8x8x3x3xf32> -> tensor<4x8x4x4xf32>"],
     conv2d(IMG, FILT),
     # batch, output channels, input channels (all_reduce).
     {"2": [[[[0]], None], [None, [[0]]], [[[], [0]], [[], [0]]]],
      "4": [[[[0]], None], [None, [[0]]]],
      "2x2": [[[[0]], [[1]]], [[[], [0, 1]], [[], [0, 1]]]]}),
    ("max_pool2d", [IMG],
     ["%r = paddle.max_pool2d {0} {{kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>}} : tensor<4x8x6x6xf32> -> tensor<4x8x3x3xf32>"],
     max_pool(IMG),
     {"2": [[[[0]]]], "2x2": [[[[0], [1]]]]}),
    ("transpose", [A3],
     ["%r = paddle.transpose {0} perm = [2, 0, 1] : tensor<4x8x12xf32> -> tensor<12x4x8xf32>"],
     A3.transpose(2, 0, 1),
     {"2": [[[[0]]], [[[], [], [0]]]], "2x2": [[[[0], [1]]]]}),
    ("reshape_heads", [A3],
     ["%r = paddle.reshape {0} shape = [4, 8, 3, 4] : tensor<4x8x12xf32> -> tensor<4x8x3x4xf32>"],
     A3.reshape(4, 8, 3, 4),
     {"2": [[[[0]]], [[[], [0]]]], "4": [[[[0]]]], "2x2": [[[[0], [1]]]]}),
    ("broadcast_to", [B[None, :]],
     ["%r = paddle.broadcast_to {0} shape = [8, 12] : tensor<1x12xf32> -> tensor<8x12xf32>"],
     np.broadcast_to(B[None, :], (8, 12)).copy(),
     {"2": [[[[], [0]]]], "2x2": [[[[], [0, 1]]]]}),
    ("slice", [X],
     ["%r = paddle.slice {0} start = [0, 2] limit = [8, 10] stride = [1, 2] : tensor<8x12xf32> -> tensor<8x4xf32>"],
     X[:, 2:10:2],
     {"2": [[[[0]]], [[[], [0]]]], "2x2": [[[[0, 1]]]]}),
    ("concat", [X, Y],
     ["%r = paddle.concat {0}, {1} axis = 1 : tensor<8x12xf32>, tensor<8x12xf32> -> tensor<8x24xf32>"],
     np.concatenate([X, Y], 1),
     {"2": [[[[0]], [[0]]], [[[], [0]], None]], "2x2": [[[[0, 1]], [[1]]]]}),
    ("pad", [X],
     ["%r = paddle.pad {0} low = [0, 1] high = [0, 2] value = 1.5 : f32 : tensor<8x12xf32> -> tensor<8x15xf32>"],
     np.pad(X, ((0, 0), (1, 2)), constant_values=1.5),
     {"2": [[[[0]]]], "4": [[[[0]]]], "2x2": [[[[0], [1]]]]}),
    ("embedding", [TABLE, IDX],
     ["%r = paddle.gather {0}, {1} axis = 0 : tensor<16x6xf32>, tensor<4x2xi64> -> tensor<4x2x6xf32>"],
     TABLE[IDX],
     # vocabulary-parallel (the table split by rows), data-parallel (indices).
     {"2": [[[[0]], None], [None, [[0]]]], "4": [[[[0]], None]],
      "2x2": [[[[0]], [[1]]], [[[0, 1]], None], [[[], [1]], [[0]]]]}),
    ("embedding-negative-indices", [TABLE, IDX_NEG],
     ["%r = paddle.gather {0}, {1} axis = 0 : tensor<16x6xf32>, tensor<4x2xi64> -> tensor<4x2x6xf32>"],
     TABLE[IDX_NEG],
     {"2": [[[[0]], None]], "4": [[[[0]], None]]}),
    ("scatter_add", [TABLE, IDX_NEG, UPD],
     ["%r = paddle.scatter_add {0}, {1}, {2} axis = 0 : tensor<16x6xf32>, tensor<4x2xi64>, tensor<4x2x6xf32> -> tensor<16x6xf32>"],
     scatter_add(TABLE, IDX_NEG, UPD),
     # vocabulary-parallel (the table by rows), data-parallel (indices and
     # updates: partial tables all-reduced), both, and the other dim.
     {"2": [[[[0]], None, None], [None, [[0]], [[0]]], [[[], [0]], None, None]],
      "4": [[[[0]], None, None], [None, [[0]], [[0]]]],
      "2x2": [[[[0]], [[1]], [[1]]], [[[0, 1]], None, None]]}),
    ("argmax", [X],
     ["%r = paddle.argmax {0} axis = 1 : tensor<8x12xf32> -> tensor<8xi64>"],
     X.argmax(1),
     {"2": [[[[0]]], [[[], [0]]]], "2x2": [[[[0], [1]]]]}),
]


def case_ids():
    for name, args, body, expected, specs in CASES:
        for mesh_name, spec_list in specs.items():
            for i, spec in enumerate(spec_list):
                yield pytest.param(name, mesh_name, i, id=f"{name}-{mesh_name}-{i}")


@pytest.mark.parametrize("name,mesh_name,index", list(case_ids()))
def test_sharded_op_matches_numpy(tmp_path, name, mesh_name, index):
    _, args, body, expected, specs = next(c for c in CASES if c[0] == name)
    check(tmp_path, MESHES[mesh_name], args, specs[mesh_name][index], body,
          expected)


def test_result_split_over_both_axes_of_a_2x2_mesh(tmp_path):
    # The result is returned split, so each device holds a quarter, and the
    # runner puts the quarters together; the reshard to it takes two steps.
    text = sharded_module((2, 2), [X], [[[0], [1]]],
                          ["%e = paddle.exp {0} : tensor<8x12xf32> -> tensor<8x12xf32>",
                           "%s = shard.sharding @mesh split_axes = [[], [1, 0]] : !shard.sharding",
                           "%r = shard.shard %e to %s annotate_for_users : tensor<8x12xf32>"],
                          "tensor<8x12xf32>")
    (got,) = run_module(tmp_path, text, [X], extra_args=["--mesh", "4"])
    np.testing.assert_allclose(got, np.exp(X), rtol=1e-6)


def test_an_uneven_split_names_the_dim_and_the_mesh(tmp_path):
    text = sharded_module((4,), [randn(6, 4)], [[[0]]],
                          ["%r = paddle.exp {0} : tensor<6x4xf32> -> tensor<6x4xf32>"],
                          "tensor<6x4xf32>")
    with pytest.raises(PaddleRunError,
                       match=r"splits dim 0 of size 6 over mesh axes \[0\] \(4 devices\)"):
        run_module(tmp_path, text, [randn(6, 4)], extra_args=["--mesh", "4"])


def test_an_unknown_mesh_axis_is_an_error(tmp_path):
    text = sharded_module((2,), [X], [[[], [1]]],
                          ["%r = paddle.exp {0} : tensor<8x12xf32> -> tensor<8x12xf32>"],
                          "tensor<8x12xf32>")
    with pytest.raises(PaddleRunError, match=r"mesh axis 1"):
        run_module(tmp_path, text, [X], extra_args=["--mesh", "2"])


def test_mesh_size_must_match_the_device_count(tmp_path):
    text = sharded_module((2, 2), [X], [[[0]]],
                          ["%r = paddle.exp {0} : tensor<8x12xf32> -> tensor<8x12xf32>"],
                          "tensor<8x12xf32>")
    with pytest.raises(PaddleRunError,
                       match=r"partitioned for a mesh of shape \[2, 2\] \(4 devices\), "
                             r"--mesh 2 given"):
        run_module(tmp_path, text, [X], extra_args=["--mesh", "2"])
    with pytest.raises(PaddleRunError, match=r"give --mesh 4 .* mpirun -np 4"):
        run_module(tmp_path, text, [X])


def test_a_failing_device_fails_the_others_and_is_named(tmp_path):
    # Data-parallel gather: device 1's indices hold one out of range, so
    # its run-time check fails; the others, waiting in the all_gather of the
    # result, are released by its abort instead of timing out.
    idx = IDX.copy()
    idx[1, 0] = 99  # rows 0-1 go to device 0, rows 2-3 to device 1 ... on 4
    idx_bad = idx.copy()
    text = sharded_module((4,), [TABLE, idx_bad], [None, [[0]]],
                          ["%g = paddle.gather {0}, {1} axis = 0 : tensor<16x6xf32>, tensor<4x2xi64> -> tensor<4x2x6xf32>",
                           "%s = shard.sharding @mesh split_axes = [[]] : !shard.sharding",
                           "%r = shard.shard %g to %s annotate_for_users : tensor<4x2x6xf32>"],
                          "tensor<4x2x6xf32>")
    with pytest.raises(PaddleRunError, match=r"device 1: .*out of range") as err:
        run_module(tmp_path, text, [TABLE, idx_bad],
                   extra_args=["--mesh", "4", "--collective-timeout", "30"])
    assert not (tmp_path / "out").exists(), "no partial output after a failure"
    assert "timed out" not in str(err.value)


def test_an_index_outside_a_split_table_is_still_an_error(tmp_path):
    # Vocabulary-parallel gather and scatter_add: an index outside the
    # whole table (99, or -17 from the end) falls outside every device's
    # rows, so the local op's check reports it instead of reading zeros.
    for bad in (99, -17):
        idx = IDX_NEG.copy()
        idx[2, 1] = bad
        for body, args in (
                (["%r = paddle.gather {0}, {1} axis = 0 : tensor<16x6xf32>, tensor<4x2xi64> -> tensor<4x2x6xf32>"],
                 [TABLE, idx]),
                (["%r = paddle.scatter_add {0}, {1}, {2} axis = 0 : tensor<16x6xf32>, tensor<4x2xi64>, tensor<4x2x6xf32> -> tensor<16x6xf32>"],
                 [TABLE, idx, UPD])):
            result = "tensor<4x2x6xf32>" if len(args) == 2 else "tensor<16x6xf32>"
            text = sharded_module((2,), args, [[[0]]] + [None] * (len(args) - 1), body, result)
            with pytest.raises(PaddleRunError, match="out of range"):
                run_module(tmp_path, text, args,
                           extra_args=["--mesh", "2", "--collective-timeout", "30"])


@pytest.mark.parametrize("mesh,split", [((2,), [[0]]), ((4,), [[], [0]]),
                                        ((2, 2), [[0], [1]]), ((2, 2), [[1, 0]])])
def test_a_split_rng_draws_the_unsharded_numbers(tmp_path, mesh, split):
    # Each device draws only its block (paddle.rng_uniform_block at its
    # offsets); together they are, bit for bit, the numbers of the
    # unsharded op, written out again from its documentation.
    from test_nn_layers import _splitmix_uniform
    seed = np.array(1234567, np.int64)
    axes = ", ".join("[" + ", ".join(map(str, d)) + "]" for d in split)
    text = sharded_module(mesh, [seed], [None],
                          ["%g = paddle.rng_uniform {0} {{low = -1.0, high = 2.0}} : tensor<i64> -> tensor<8x12xf32>",
                           f"%s = shard.sharding @mesh split_axes = [{axes}] : !shard.sharding",
                           "%r = shard.shard %g to %s annotate_for_users : tensor<8x12xf32>"],
                          "tensor<8x12xf32>")
    devices = int(np.prod(mesh))
    (got,) = run_module(tmp_path, text, [seed], extra_args=["--mesh", str(devices)])
    want = (-1.0 + 3.0 * _splitmix_uniform(int(seed), 96)).astype(np.float32).reshape(8, 12)
    np.testing.assert_array_equal(got, want)
    partitioned = subprocess.run(
        [str(PADDLE_OPT), str(tmp_path / "module.mlir"), "--pass-pipeline=builtin.module("
         "func.func(sharding-propagation),paddle-complete-sharding,func.func(shard-partition))"],
        capture_output=True, text=True, check=True).stdout
    assert "paddle.rng_uniform_block" in partitioned, partitioned


def test_a_dynamic_batch_dim_split_over_the_data_axis(tmp_path):
    # The batch size is known only at run time: each device takes its
    # block; a size the devices do not divide is an error naming the dim.
    text = ("shard.grid @mesh(shape = 2)\n"
            "func.func @f(%x: tensor<?x12xf32>, %w: tensor<12x16xf32>) -> tensor<?x16xf32> {\n"
            "  %s = shard.sharding @mesh split_axes = [[0]] : !shard.sharding\n"
            "  %a = shard.shard %x to %s : tensor<?x12xf32>\n"
            "  %m = paddle.matmul %a, %w : tensor<?x12xf32>, tensor<12x16xf32> -> tensor<?x16xf32>\n"
            "  %r = paddle.tanh %m : tensor<?x16xf32> -> tensor<?x16xf32>\n"
            "  return %r : tensor<?x16xf32>\n}\n")
    for batch in (2, 6, 10):
        x = randn(batch, 12)
        (got,) = run_module(tmp_path, text, [x, W], extra_args=["--mesh", "2"])
        np.testing.assert_allclose(got, np.tanh(x @ W), rtol=1e-5, atol=1e-6)
    with pytest.raises(PaddleRunError,
                       match=r"dim 0 of size 5 is split over mesh axes \[0\] \(2 devices"):
        run_module(tmp_path, text, [randn(5, 12), W], extra_args=["--mesh", "2"])
