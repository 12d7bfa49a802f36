// RUN: paddle-opt %s --canonicalize --split-input-file | FileCheck %s

// Reducing nothing, or only kept dims of size 1, is the identity.
// CHECK-LABEL: func @trivial
// CHECK-SAME: (%[[X:.*]]: tensor<4x1x?xf32>, %[[S:.*]]: tensor<f32>)
// CHECK-NEXT: return %[[X]], %[[X]], %[[X]], %[[X]], %[[X]], %[[S]]
func.func @trivial(%x: tensor<4x1x?xf32>, %s: tensor<f32>)
    -> (tensor<4x1x?xf32>, tensor<4x1x?xf32>, tensor<4x1x?xf32>,
        tensor<4x1x?xf32>, tensor<4x1x?xf32>, tensor<f32>) {
  %0 = paddle.reduce_sum %x axes = [] : tensor<4x1x?xf32> -> tensor<4x1x?xf32>
  %1 = paddle.reduce_max %x axes = [1] keepdims : tensor<4x1x?xf32> -> tensor<4x1x?xf32>
  %2 = paddle.reduce_min %x axes = [-2] keepdims : tensor<4x1x?xf32> -> tensor<4x1x?xf32>
  %3 = paddle.reduce_prod %x axes = [1] keepdims : tensor<4x1x?xf32> -> tensor<4x1x?xf32>
  %4 = paddle.reduce_mean %x axes = [1] keepdims : tensor<4x1x?xf32> -> tensor<4x1x?xf32>
  // A rank-0 tensor has no axes to reduce.
  %5 = paddle.reduce_sum %s : tensor<f32> -> tensor<f32>
  return %0, %1, %2, %3, %4, %5 : tensor<4x1x?xf32>, tensor<4x1x?xf32>, tensor<4x1x?xf32>, tensor<4x1x?xf32>, tensor<4x1x?xf32>, tensor<f32>
}

// -----

// No fold where a reduced dim may be larger than 1, or where the result
// type differs from the input's (the dim is dropped).
// CHECK-LABEL: func @not_trivial
// CHECK: paddle.reduce_sum %{{.*}} axes = [2] keepdims
// CHECK: paddle.reduce_sum %{{.*}} axes = [1] :
// CHECK: paddle.reduce_mean %{{.*}} axes = [0] keepdims
func.func @not_trivial(%x: tensor<4x1x?xf32>) -> (tensor<4x1x1xf32>, tensor<4x?xf32>, tensor<1x1x?xf32>) {
  %0 = paddle.reduce_sum %x axes = [2] keepdims : tensor<4x1x?xf32> -> tensor<4x1x1xf32>
  %1 = paddle.reduce_sum %x axes = [1] : tensor<4x1x?xf32> -> tensor<4x?xf32>
  %2 = paddle.reduce_mean %x axes = [0] keepdims : tensor<4x1x?xf32> -> tensor<1x1x?xf32>
  return %0, %1, %2 : tensor<4x1x1xf32>, tensor<4x?xf32>, tensor<1x1x?xf32>
}

// -----

// CHECK-LABEL: func @fold_constants
// CHECK-DAG: paddle.constant dense<[5.000000e+00, 7.000000e+00, 9.000000e+00]> : tensor<3xf32>
// CHECK-DAG: paddle.constant dense<{{\[\[}}6.000000e+00], [1.200000e+02]]> : tensor<2x1xf32>
// CHECK-DAG: paddle.constant dense<0x7FC00000> : tensor<f32>
// CHECK-DAG: paddle.constant dense<-2.000000e+00> : tensor<f32>
// CHECK-NOT: paddle.reduce
func.func @fold_constants() -> (tensor<3xf32>, tensor<2x1xf32>, tensor<f32>, tensor<f32>) {
  %a = paddle.constant dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>
  %0 = paddle.reduce_sum %a axes = [0] : tensor<2x3xf32> -> tensor<3xf32>
  %1 = paddle.reduce_prod %a axes = [-1] keepdims : tensor<2x3xf32> -> tensor<2x1xf32>
  // max propagates NaN, as numpy.
  %n = paddle.constant dense<[1.0, 0x7FC00000, 3.0]> : tensor<3xf32>
  %2 = paddle.reduce_max %n : tensor<3xf32> -> tensor<f32>
  %b = paddle.constant dense<[-2.0, 0.5, 3.0]> : tensor<3xf32>
  %3 = paddle.reduce_min %b : tensor<3xf32> -> tensor<f32>
  return %0, %1, %2, %3 : tensor<3xf32>, tensor<2x1xf32>, tensor<f32>, tensor<f32>
}

// -----

// Integer sums and products wrap in the element type.
// CHECK-LABEL: func @fold_int_wrap
// CHECK-DAG: paddle.constant dense<-56> : tensor<i8>
// CHECK-DAG: paddle.constant dense<[0, 127]> : tensor<2xi8>
// CHECK-DAG: paddle.constant dense<[-128, -7]> : tensor<2xi8>
func.func @fold_int_wrap() -> (tensor<i8>, tensor<2xi8>, tensor<2xi8>) {
  %a = paddle.constant dense<[[100, 100], [0, 0]]> : tensor<2x2xi8>
  %0 = paddle.reduce_sum %a : tensor<2x2xi8> -> tensor<i8>
  %b = paddle.constant dense<[[16, 16], [127, 1]]> : tensor<2x2xi8>
  %1 = paddle.reduce_prod %b axes = [1] : tensor<2x2xi8> -> tensor<2xi8>
  %c = paddle.constant dense<[[-128, 100], [5, -7]]> : tensor<2x2xi8>
  %2 = paddle.reduce_min %c axes = [0] : tensor<2x2xi8> -> tensor<2xi8>
  return %0, %1, %2 : tensor<i8>, tensor<2xi8>, tensor<2xi8>
}

// -----

// f16 sums accumulate in f32: 2048 + 1 + 1 is 2050, though 2048 + 1 rounds
// back to 2048 in f16.
// CHECK-LABEL: func @fold_f16_in_f32
// CHECK: paddle.constant dense<2.050000e+03> : tensor<f16>
func.func @fold_f16_in_f32() -> tensor<f16> {
  %a = paddle.constant dense<[2048.0, 1.0, 1.0]> : tensor<3xf16>
  %0 = paddle.reduce_sum %a : tensor<3xf16> -> tensor<f16>
  return %0 : tensor<f16>
}

// -----

// argmax along a dim of static size 1 is 0.
// CHECK-LABEL: func @argmax_size_one
// CHECK: %[[Z:.*]] = paddle.constant dense<0> : tensor<4x1xi64>
// CHECK-NEXT: return %[[Z]]
func.func @argmax_size_one(%x: tensor<4x1xf32>) -> tensor<4x1xi64> {
  %0 = paddle.argmax %x axis = 1 keepdims : tensor<4x1xf32> -> tensor<4x1xi64>
  return %0 : tensor<4x1xi64>
}

// -----

// CHECK-LABEL: func @argmax_not_folded
// CHECK: paddle.argmax
func.func @argmax_not_folded(%x: tensor<4x?xf32>) -> tensor<4xi64> {
  %0 = paddle.argmax %x axis = 1 : tensor<4x?xf32> -> tensor<4xi64>
  return %0 : tensor<4xi64>
}
