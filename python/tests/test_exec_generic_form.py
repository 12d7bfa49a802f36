"""Modules written in MLIR's generic op form, using only the paddle
mnemonics, parse, verify, lower and run through paddle-run with results
bit-identical to numpy for the elementwise ops (the issue's acceptance
check). Shapes mix broadcasting and dynamic dims.
"""

import numpy as np
import pytest
from paddle_testing import run_module

# mnemonic -> numpy function; all exact in f32 for these inputs.
BINARY = {
    "add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide,
    "maximum": np.maximum, "minimum": np.minimum,
}
UNARY = {
    "neg": np.negative, "abs": np.abs, "sqrt": np.sqrt, "floor": np.floor,
    "ceil": np.ceil, "round": np.round, "sign": np.sign,
    "relu": lambda x: np.maximum(x, np.float32(0)),
}


@pytest.mark.parametrize("op", sorted(BINARY))
def test_binary_generic_form(tmp_path, rng, op):
    a = rng.uniform(0.5, 4, size=(4, 3)).astype(np.float32)
    b = rng.uniform(0.5, 4, size=(3,)).astype(np.float32)
    text = f"""
func.func @main(%a: tensor<4x?xf32>, %b: tensor<?xf32>) -> tensor<4x?xf32> {{
  %0 = "paddle.{op}"(%a, %b) : (tensor<4x?xf32>, tensor<?xf32>) -> tensor<4x?xf32>
  return %0 : tensor<4x?xf32>
}}
"""
    (r,) = run_module(tmp_path, text, [a, b])
    np.testing.assert_array_equal(r, BINARY[op](a, b))


@pytest.mark.parametrize("op", sorted(UNARY))
def test_unary_generic_form(tmp_path, rng, op):
    x = rng.uniform(-4, 4, size=(2, 5)).astype(np.float32)
    if op == "sqrt":
        x = np.abs(x)
    text = f"""
func.func @main(%x: tensor<?x5xf32>) -> tensor<?x5xf32> {{
  %0 = "paddle.{op}"(%x) : (tensor<?x5xf32>) -> tensor<?x5xf32>
  return %0 : tensor<?x5xf32>
}}
"""
    (r,) = run_module(tmp_path, text, [x])
    np.testing.assert_array_equal(r, UNARY[op](x))


def test_chain_generic_form(tmp_path, rng):
    """compare/select/cast/integer ops in generic form, chained."""
    a = rng.integers(-20, 20, size=(3, 4)).astype(np.int32)
    b = rng.integers(-5, 6, size=(1, 4)).astype(np.int32)
    text = """
func.func @main(%a: tensor<?x4xi32>, %b: tensor<1x4xi32>) -> (tensor<?x4xi32>, tensor<?x4xf32>) {
  %q = "paddle.div"(%a, %b) : (tensor<?x4xi32>, tensor<1x4xi32>) -> tensor<?x4xi32>
  %r = "paddle.rem"(%a, %b) : (tensor<?x4xi32>, tensor<1x4xi32>) -> tensor<?x4xi32>
  %m = "paddle.compare"(%q, %r) {direction = #paddle<direction gt>} : (tensor<?x4xi32>, tensor<?x4xi32>) -> tensor<?x4xi1>
  %s = "paddle.select"(%m, %q, %r) : (tensor<?x4xi1>, tensor<?x4xi32>, tensor<?x4xi32>) -> tensor<?x4xi32>
  %x = "paddle.xor"(%s, %a) : (tensor<?x4xi32>, tensor<?x4xi32>) -> tensor<?x4xi32>
  %f = "paddle.cast"(%x) : (tensor<?x4xi32>) -> tensor<?x4xf32>
  return %x, %f : tensor<?x4xi32>, tensor<?x4xf32>
}
"""
    x, f = run_module(tmp_path, text, [a, b])
    with np.errstate(divide="ignore"):
        q, r = a // b, a % b
    expected = np.where(q > r, q, r) ^ a
    np.testing.assert_array_equal(x, expected)
    np.testing.assert_array_equal(f, expected.astype(np.float32))
