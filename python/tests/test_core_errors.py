"""paddle_mlir._core: every bad input is a clear Python exception that names
what is wrong and where, never a crash."""

import numpy as np
import pytest

from paddle_mlir import _core as C


def test_parse_error_names_source_and_position(ctx):
    with pytest.raises(C.MLIRError) as e:
        C.Module.parse(ctx, "func.func @f() {\n  %0 = paddle.bogus\n}",
                       name="user.mlir")
    text = str(e.value)
    assert "cannot parse 'user.mlir'" in text
    assert "user.mlir:2:" in text and "error:" in text
    assert e.value.diagnostics[0][0] == "error"
    assert e.value.diagnostics[0][1].startswith("user.mlir:2:")


def test_op_verification_failure_points_at_user_location(ctx):
    m = C.Module(ctx)
    fb = m.add_function("f", ["tensor<2x3xf32>", "tensor<4xf32>"])
    with pytest.raises(C.MLIRError) as e:
        fb.op("paddle.add", fb.args, loc=("model.py", 12, 8))
    assert str(e.value).splitlines()[1].startswith("model.py:12:8: error: ")
    assert "broadcast" in str(e.value)
    # The failed op was removed: the function still builds.
    (n,) = fb.op("paddle.neg", [fb.args[0]])
    fb.ret([n])
    m.verify()


def test_bad_op_name_types_and_attributes(ctx):
    m = C.Module(ctx)
    with pytest.raises(C.MLIRError, match="argument 0: invalid type"):
        m.add_function("f", ["tensor<2xfloat>"])
    fb = m.add_function("f", ["tensor<2xf32>"])
    with pytest.raises(C.MLIRError, match="unknown operation 'paddle.nope'"):
        fb.op("paddle.nope", fb.args, loc=("a.py", 1, 2))
    with pytest.raises(C.MLIRError, match="attribute 'axes'"):
        fb.op("paddle.reduce_sum", fb.args, {"axes": "array<i64: 0"})
    with pytest.raises(C.MLIRError):
        fb.op("paddle.add", fb.args)  # one operand short
    with pytest.raises(C.MLIRError, match="result 0: invalid type"):
        fb.op("paddle.neg", fb.args, result_types=["tensor<2x"])


def test_run_argument_errors(ctx):
    m = C.Module(ctx)
    fb = m.add_function("f", ["tensor<2x3xf32>"])
    fb.ret(fb.op("paddle.neg", fb.args))
    exe = C.compile(m)
    good = np.zeros((2, 3), np.float32)
    with pytest.raises(ValueError, match="takes 1 inputs, 2 given"):
        exe.run("f", [good, good])
    with pytest.raises(ValueError, match="argument 0 of 'f'.*float64"):
        exe.run("f", [good.astype(np.float64)])
    with pytest.raises(ValueError, match=r"input 0 has shape \[3, 2\]"):
        exe.run("f", [np.zeros((3, 2), np.float32)])
    with pytest.raises(ValueError, match="rank 2"):
        exe.run("f", [np.zeros(6, np.float32)])
    with pytest.raises(ValueError, match="'g'"):
        exe.run("g", [good])
    np.testing.assert_array_equal(exe.run("f", [good])[0], -good)


def test_malformed_ops_for_type_inference(ctx):
    m = C.Module(ctx)
    fb = m.add_function("f", ["tensor<2x3xf32>"])
    (x,) = fb.args
    with pytest.raises(C.MLIRError, match="expected 2 operands"):
        fb.op("paddle.add", [x], loc=("m.py", 4, 1))
    with pytest.raises(C.MLIRError, match="perm"):
        fb.op("paddle.transpose", [x])  # a required attribute is missing
    with pytest.raises(C.MLIRError, match="perm"):
        fb.op("paddle.transpose", [x], {"perm": "1 : i64"})
    with pytest.raises(C.MLIRError, match="regions"):
        fb.op("scf.execute_region", [])
    (n,) = fb.op("paddle.neg", [x])
    fb.ret([n])
    m.verify()


def test_inputs_must_be_a_list(ctx):
    m = C.Module(ctx)
    fb = m.add_function("f", ["tensor<3xf32>", "tensor<3xf32>"])
    fb.ret(fb.op("paddle.add", fb.args))
    exe = C.compile(m)
    pair = np.zeros((2, 3), np.float32)  # would otherwise pass its 2 rows
    with pytest.raises(TypeError, match="list of arrays"):
        exe.run("f", pair)
    with pytest.raises(TypeError, match="list of arrays"):
        exe.run("f", 3)
    np.testing.assert_array_equal(exe.run("f", (pair[0], pair[1]))[0],
                                  np.zeros(3, np.float32))
