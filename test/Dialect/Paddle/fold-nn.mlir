// RUN: paddle-opt %s --canonicalize --split-input-file | FileCheck %s

// A 1x1 window, stride 1, no padding: both poolings are the identity.
// CHECK-LABEL: func @identity_pools
// CHECK-SAME: (%[[X:.*]]: tensor<?x3x5x5xf32>)
// CHECK-NEXT: return %[[X]], %[[X]]
func.func @identity_pools(%x: tensor<?x3x5x5xf32>) -> (tensor<?x3x5x5xf32>, tensor<?x3x5x5xf32>) {
  %0 = paddle.max_pool2d %x {kernel = array<i64: 1, 1>} : tensor<?x3x5x5xf32> -> tensor<?x3x5x5xf32>
  %1 = paddle.avg_pool2d %x {kernel = array<i64: 1, 1>, count_include_pad}
      : tensor<?x3x5x5xf32> -> tensor<?x3x5x5xf32>
  return %0, %1 : tensor<?x3x5x5xf32>, tensor<?x3x5x5xf32>
}

// -----

// A stride keeps the op, and so does a result type other than the input's
// (the fold would have to change the type).
// CHECK-LABEL: func @pool_stays
// CHECK: paddle.max_pool2d
// CHECK: paddle.avg_pool2d
func.func @pool_stays(%x: tensor<1x3x5x5xf32>, %y: tensor<?x3x5x5xf32>) -> (tensor<1x3x3x3xf32>, tensor<1x3x5x5xf32>) {
  %0 = paddle.max_pool2d %x {kernel = array<i64: 1, 1>, strides = array<i64: 2, 2>}
      : tensor<1x3x5x5xf32> -> tensor<1x3x3x3xf32>
  %1 = paddle.avg_pool2d %y {kernel = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>}
      : tensor<?x3x5x5xf32> -> tensor<1x3x5x5xf32>
  return %0, %1 : tensor<1x3x3x3xf32>, tensor<1x3x5x5xf32>
}
