// RUN: paddle-opt %s --split-input-file | paddle-opt --split-input-file | FileCheck %s
// Round trip of the reduction ops, custom and generic form.

// CHECK-LABEL: func @reductions
// CHECK-SAME: (%[[X:.*]]: tensor<4x?x8xf32>, %[[I:.*]]: tensor<3x5xi32>)
func.func @reductions(%x: tensor<4x?x8xf32>, %i: tensor<3x5xi32>) {
  // CHECK: paddle.reduce_sum %[[X]] axes = [1, -1] keepdims : tensor<4x?x8xf32> -> tensor<4x1x1xf32>
  %0 = paddle.reduce_sum %x axes = [1, -1] keepdims : tensor<4x?x8xf32> -> tensor<4x1x1xf32>
  // CHECK: paddle.reduce_max %[[X]] : tensor<4x?x8xf32> -> tensor<f32>
  %1 = paddle.reduce_max %x : tensor<4x?x8xf32> -> tensor<f32>
  // CHECK: paddle.reduce_min %[[I]] axes = [0] : tensor<3x5xi32> -> tensor<5xi32>
  %2 = paddle.reduce_min %i axes = [0] : tensor<3x5xi32> -> tensor<5xi32>
  // CHECK: paddle.reduce_prod %[[I]] keepdims : tensor<3x5xi32> -> tensor<1x1xi32>
  %3 = paddle.reduce_prod %i keepdims : tensor<3x5xi32> -> tensor<1x1xi32>
  // CHECK: paddle.reduce_mean %[[X]] axes = [] : tensor<4x?x8xf32> -> tensor<4x?x8xf32>
  %4 = paddle.reduce_mean %x axes = [] : tensor<4x?x8xf32> -> tensor<4x?x8xf32>
  // A static result dim may stand where `?` is inferred.
  // CHECK: paddle.reduce_sum %[[X]] axes = [0] : tensor<4x?x8xf32> -> tensor<6x8xf32>
  %5 = paddle.reduce_sum %x axes = [0] : tensor<4x?x8xf32> -> tensor<6x8xf32>
  return
}

// -----

// CHECK-LABEL: func @generic_form
func.func @generic_form(%x: tensor<4x?x8xbf16>) -> (tensor<4x8xbf16>, tensor<4x1x8xi64>) {
  // CHECK: paddle.reduce_mean %{{.*}} axes = [1] : tensor<4x?x8xbf16> -> tensor<4x8xbf16>
  %0 = "paddle.reduce_mean"(%x) {axes = array<i64: 1>} : (tensor<4x?x8xbf16>) -> tensor<4x8xbf16>
  // CHECK: paddle.argmax %{{.*}} axis = -2 keepdims : tensor<4x?x8xbf16> -> tensor<4x1x8xi64>
  %1 = "paddle.argmax"(%x) {axis = -2 : i64, keepdims} : (tensor<4x?x8xbf16>) -> tensor<4x1x8xi64>
  return %0, %1 : tensor<4x8xbf16>, tensor<4x1x8xi64>
}

// -----

// CHECK-LABEL: func @argmax
func.func @argmax(%x: tensor<?x10xi8>) -> tensor<?xi64> {
  // CHECK: paddle.argmax %{{.*}} axis = 1 : tensor<?x10xi8> -> tensor<?xi64>
  %0 = paddle.argmax %x axis = 1 : tensor<?x10xi8> -> tensor<?xi64>
  return %0 : tensor<?xi64>
}
