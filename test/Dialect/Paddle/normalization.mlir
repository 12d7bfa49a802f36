// RUN: paddle-opt %s --split-input-file | paddle-opt --split-input-file | FileCheck %s
// Round trip of softmax and the normalization ops, custom and generic form.

// CHECK-LABEL: func @softmax
// CHECK-SAME: (%[[X:.*]]: tensor<?x10xf32>)
func.func @softmax(%x: tensor<?x10xf32>) -> (tensor<?x10xf32>, tensor<?x10xf32>, tensor<3x10xf32>) {
  // CHECK: paddle.softmax %[[X]] axis = -1 : tensor<?x10xf32> -> tensor<?x10xf32>
  %0 = paddle.softmax %x axis = -1 : tensor<?x10xf32> -> tensor<?x10xf32>
  // CHECK: paddle.log_softmax %[[X]] axis = 0 : tensor<?x10xf32> -> tensor<?x10xf32>
  %1 = paddle.log_softmax %x axis = 0 : tensor<?x10xf32> -> tensor<?x10xf32>
  // CHECK: paddle.softmax %[[X]] axis = 1 : tensor<?x10xf32> -> tensor<3x10xf32>
  %2 = "paddle.softmax"(%x) {axis = 1 : i64} : (tensor<?x10xf32>) -> tensor<3x10xf32>
  return %0, %1, %2 : tensor<?x10xf32>, tensor<?x10xf32>, tensor<3x10xf32>
}

// -----

// CHECK-LABEL: func @layer_norm
// CHECK-SAME: (%[[X:.*]]: tensor<?x4x16xf16>, %[[G:.*]]: tensor<16xf16>, %[[B:.*]]: tensor<4x1xf16>)
func.func @layer_norm(%x: tensor<?x4x16xf16>, %g: tensor<16xf16>, %b: tensor<4x1xf16>) {
  // CHECK: paddle.layer_norm %[[X]] scale %[[G]] bias %[[B]] axes = [-1] : tensor<?x4x16xf16>, tensor<16xf16>, tensor<4x1xf16> -> tensor<?x4x16xf16>
  %0 = paddle.layer_norm %x scale %g bias %b axes = [-1] : tensor<?x4x16xf16>, tensor<16xf16>, tensor<4x1xf16> -> tensor<?x4x16xf16>
  // CHECK: paddle.layer_norm %[[X]] axes = [1, 2] {epsilon = 1.000000e-03 : f64} : tensor<?x4x16xf16> -> tensor<?x4x16xf16>
  %1 = paddle.layer_norm %x axes = [1, 2] {epsilon = 1.0e-3 : f64} : tensor<?x4x16xf16> -> tensor<?x4x16xf16>
  // CHECK: paddle.layer_norm %[[X]] bias %[[B]] axes = [2] : tensor<?x4x16xf16>, tensor<4x1xf16> -> tensor<?x4x16xf16>
  %2 = paddle.layer_norm %x bias %b axes = [2] : tensor<?x4x16xf16>, tensor<4x1xf16> -> tensor<?x4x16xf16>
  // CHECK: paddle.layer_norm %[[X]] scale %[[G]] axes = [2] : tensor<?x4x16xf16>, tensor<16xf16> -> tensor<?x4x16xf16>
  %3 = "paddle.layer_norm"(%x, %g) {axes = array<i64: 2>, operandSegmentSizes = array<i32: 1, 1, 0>} : (tensor<?x4x16xf16>, tensor<16xf16>) -> tensor<?x4x16xf16>
  return
}

// -----

// CHECK-LABEL: func @batch_norm
// CHECK-SAME: (%[[X:.*]]: tensor<?x3x8x8xf32>, %[[P:.*]]: tensor<3xf32>, %[[Q:.*]]: tensor<?xf32>)
func.func @batch_norm(%x: tensor<?x3x8x8xf32>, %p: tensor<3xf32>, %q: tensor<?xf32>) {
  // CHECK: paddle.batch_norm_inference %[[X]], %[[P]], %[[Q]], %[[P]], %[[Q]] {epsilon = 1.000000e-03 : f64} : tensor<?x3x8x8xf32>, tensor<3xf32>, tensor<?xf32>, tensor<3xf32>, tensor<?xf32> -> tensor<?x3x8x8xf32>
  %0 = paddle.batch_norm_inference %x, %p, %q, %p, %q {epsilon = 1.0e-3 : f64} : tensor<?x3x8x8xf32>, tensor<3xf32>, tensor<?xf32>, tensor<3xf32>, tensor<?xf32> -> tensor<?x3x8x8xf32>
  // CHECK: paddle.batch_norm_inference %[[X]], %[[P]], %[[P]], %[[P]], %[[P]] : tensor<?x3x8x8xf32>
  %1 = "paddle.batch_norm_inference"(%x, %p, %p, %p, %p) : (tensor<?x3x8x8xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<?x3x8x8xf32>
  return
}
