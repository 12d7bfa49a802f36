"""Modules may mix paddle ops with upstream tensor ops; code that bufferizes
to strided copies (tensor.pad, tensor.insert_slice) calls the runtime's
memrefCopy. Exact comparison with numpy (these ops move data).
"""

import numpy as np
from paddle_testing import run_module


def test_tensor_pad_dynamic(tmp_path, rng):
    x = rng.standard_normal((3, 5)).astype(np.float32)
    text = """
func.func @main(%x: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %zero = arith.constant 7.0 : f32
  %p = tensor.pad %x low[1, 2] high[2, 0] {
  ^bb0(%i: index, %j: index):
    tensor.yield %zero : f32
  } : tensor<?x?xf32> to tensor<?x?xf32>
  %r = paddle.neg %p : tensor<?x?xf32> -> tensor<?x?xf32>
  return %r : tensor<?x?xf32>
}
"""
    (r,) = run_module(tmp_path, text, [x])
    np.testing.assert_array_equal(r, -np.pad(x, ((1, 2), (2, 0)), constant_values=7))


def test_insert_slice_strided(tmp_path, rng):
    x = rng.integers(-9, 9, size=(2, 3)).astype(np.int32)
    text = """
func.func @main(%x: tensor<2x3xi32>) -> tensor<4x7xi32> {
  %c = arith.constant 0 : i32
  %e = tensor.empty() : tensor<4x7xi32>
  %z = linalg.fill ins(%c : i32) outs(%e : tensor<4x7xi32>) -> tensor<4x7xi32>
  %r = tensor.insert_slice %x into %z[1, 0] [2, 3] [2, 3] : tensor<2x3xi32> into tensor<4x7xi32>
  return %r : tensor<4x7xi32>
}
"""
    (r,) = run_module(tmp_path, text, [x])
    expected = np.zeros((4, 7), np.int32)
    expected[1:4:2, 0:7:3] = x
    np.testing.assert_array_equal(r, expected)
