// RUN: paddle-opt %s --split-input-file | paddle-opt --split-input-file | FileCheck %s
// Round trip of the nn ops, custom and generic form.

// CHECK-LABEL: func @matmul
// CHECK-SAME: (%[[A:.*]]: tensor<?x2x3x4xf32>, %[[B:.*]]: tensor<4x5xf32>, %[[V:.*]]: tensor<4xf32>, %[[I:.*]]: tensor<3x4xi32>)
func.func @matmul(%a: tensor<?x2x3x4xf32>, %b: tensor<4x5xf32>, %v: tensor<4xf32>,
                  %i: tensor<3x4xi32>) {
  // CHECK: paddle.matmul %[[A]], %[[B]] : tensor<?x2x3x4xf32>, tensor<4x5xf32> -> tensor<?x2x3x5xf32>
  %0 = paddle.matmul %a, %b : tensor<?x2x3x4xf32>, tensor<4x5xf32> -> tensor<?x2x3x5xf32>
  // CHECK: paddle.matmul %[[V]], %[[B]] : tensor<4xf32>, tensor<4x5xf32> -> tensor<5xf32>
  %1 = paddle.matmul %v, %b : tensor<4xf32>, tensor<4x5xf32> -> tensor<5xf32>
  // CHECK: paddle.matmul %[[V]], %[[V]] : tensor<4xf32>, tensor<4xf32> -> tensor<f32>
  %2 = paddle.matmul %v, %v : tensor<4xf32>, tensor<4xf32> -> tensor<f32>
  // A written result type may be more static than the inferred one.
  // CHECK: paddle.matmul %[[A]], %[[V]] : tensor<?x2x3x4xf32>, tensor<4xf32> -> tensor<7x2x3xf32>
  %3 = paddle.matmul %a, %v : tensor<?x2x3x4xf32>, tensor<4xf32> -> tensor<7x2x3xf32>
  // CHECK: paddle.matmul %[[I]], %{{.*}} : tensor<3x4xi32>, tensor<4x3xi32> -> tensor<3x3xi32>
  %t = "paddle.constant"() {value = dense<1> : tensor<4x3xi32>} : () -> tensor<4x3xi32>
  %4 = "paddle.matmul"(%i, %t) : (tensor<3x4xi32>, tensor<4x3xi32>) -> tensor<3x3xi32>
  return
}

// -----

// Mixed precision: f16 / bf16 operands with an f32 result (the unrounded
// accumulator).
// CHECK-LABEL: func @mixed_precision
func.func @mixed_precision(%a: tensor<2x3xbf16>, %b: tensor<3x4xbf16>,
                           %h: tensor<3xf16>, %x: tensor<1x2x5x5xbf16>,
                           %w: tensor<3x2x3x3xbf16>) {
  // CHECK: paddle.matmul %{{.*}}, %{{.*}} : tensor<2x3xbf16>, tensor<3x4xbf16> -> tensor<2x4xf32>
  %0 = paddle.matmul %a, %b : tensor<2x3xbf16>, tensor<3x4xbf16> -> tensor<2x4xf32>
  // CHECK: paddle.matmul %{{.*}}, %{{.*}} : tensor<3xf16>, tensor<3xf16> -> tensor<f32>
  %1 = paddle.matmul %h, %h : tensor<3xf16>, tensor<3xf16> -> tensor<f32>
  // CHECK: paddle.conv2d %{{.*}}, %{{.*}} : tensor<1x2x5x5xbf16>, tensor<3x2x3x3xbf16> -> tensor<1x3x3x3xf32>
  %2 = paddle.conv2d %x, %w : tensor<1x2x5x5xbf16>, tensor<3x2x3x3xbf16> -> tensor<1x3x3x3xf32>
  return
}

// -----

// CHECK-LABEL: func @conv2d
// CHECK-SAME: (%[[X:.*]]: tensor<?x4x9x9xf32>, %[[W:.*]]: tensor<6x2x3x3xf32>, %[[W1:.*]]: tensor<6x4x3x3xf32>)
func.func @conv2d(%x: tensor<?x4x9x9xf32>, %w: tensor<6x2x3x3xf32>, %w1: tensor<6x4x3x3xf32>) {
  // CHECK: paddle.conv2d %[[X]], %[[W]] {groups = 2 : i64, padding = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : tensor<?x4x9x9xf32>, tensor<6x2x3x3xf32> -> tensor<?x6x5x5xf32>
  %0 = paddle.conv2d %x, %w {strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>, groups = 2}
      : tensor<?x4x9x9xf32>, tensor<6x2x3x3xf32> -> tensor<?x6x5x5xf32>
  // Default attributes are not printed.
  // CHECK: paddle.conv2d %[[X]], %[[W1]] : tensor<?x4x9x9xf32>, tensor<6x4x3x3xf32> -> tensor<?x6x7x7xf32>
  %1 = paddle.conv2d %x, %w1 : tensor<?x4x9x9xf32>, tensor<6x4x3x3xf32> -> tensor<?x6x7x7xf32>
  // CHECK: paddle.conv2d %[[X]], %[[W1]] {dilations = array<i64: 2, 3>, padding = array<i64: 0, 1, 2, 3>} : tensor<?x4x9x9xf32>, tensor<6x4x3x3xf32> -> tensor<?x6x7x7xf32>
  %2 = "paddle.conv2d"(%x, %w1) {dilations = array<i64: 2, 3>, padding = array<i64: 0, 1, 2, 3>}
      : (tensor<?x4x9x9xf32>, tensor<6x4x3x3xf32>) -> tensor<?x6x7x7xf32>
  return
}

// -----

// CHECK-LABEL: func @pools
// CHECK-SAME: (%[[X:.*]]: tensor<1x3x8x8xf32>, %[[Y:.*]]: tensor<?x3x7x?xf32>, %[[I:.*]]: tensor<2x2x5x5xi8>)
func.func @pools(%x: tensor<1x3x8x8xf32>, %y: tensor<?x3x7x?xf32>, %i: tensor<2x2x5x5xi8>) {
  // CHECK: paddle.max_pool2d %[[X]] {ceil_mode, kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>} : tensor<1x3x8x8xf32> -> tensor<1x3x4x4xf32>
  %0 = paddle.max_pool2d %x {kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>, ceil_mode}
      : tensor<1x3x8x8xf32> -> tensor<1x3x4x4xf32>
  // CHECK: paddle.max_pool2d %[[I]] {kernel = array<i64: 2, 2>} : tensor<2x2x5x5xi8> -> tensor<2x2x4x4xi8>
  %1 = paddle.max_pool2d %i {kernel = array<i64: 2, 2>} : tensor<2x2x5x5xi8> -> tensor<2x2x4x4xi8>
  // CHECK: paddle.avg_pool2d %[[Y]] {count_include_pad, kernel = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : tensor<?x3x7x?xf32> -> tensor<?x3x4x?xf32>
  %2 = paddle.avg_pool2d %y {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>,
                             padding = array<i64: 1, 1, 1, 1>, count_include_pad}
      : tensor<?x3x7x?xf32> -> tensor<?x3x4x?xf32>
  // CHECK: paddle.avg_pool2d %[[X]] {kernel = array<i64: 4, 4>} : tensor<1x3x8x8xf32> -> tensor<1x3x5x5xf32>
  %3 = "paddle.avg_pool2d"(%x) {kernel = array<i64: 4, 4>} : (tensor<1x3x8x8xf32>) -> tensor<1x3x5x5xf32>
  return
}

// -----

// CHECK-LABEL: func @rng_uniform
// CHECK-SAME: (%[[S:.*]]: tensor<i64>, %[[N:.*]]: index)
func.func @rng_uniform(%s: tensor<i64>, %n: index) {
  // CHECK: paddle.rng_uniform %[[S]] : tensor<i64> -> tensor<2x3xf32>
  %0 = paddle.rng_uniform %s : tensor<i64> -> tensor<2x3xf32>
  // CHECK: paddle.rng_uniform %[[S]][%[[N]]] {low = -1.000000e+00 : f64} : tensor<i64> -> tensor<?x8xf64>
  %1 = paddle.rng_uniform %s [%n] {low = -1.0, high = 1.0} : tensor<i64> -> tensor<?x8xf64>
  // CHECK: paddle.rng_uniform %[[S]] {high = 5.000000e-01 : f64} : tensor<i64> -> tensor<4xbf16>
  %2 = "paddle.rng_uniform"(%s) {high = 0.5 : f64} : (tensor<i64>) -> tensor<4xbf16>
  // CHECK: paddle.rng_uniform_block %[[S]][%[[N]], %[[N]]] of [8, 6] {low = -1.000000e+00 : f64} : tensor<i64> -> tensor<4x3xf32>
  %3 = paddle.rng_uniform_block %s [%n, %n] of [8, 6] {low = -1.0} : tensor<i64> -> tensor<4x3xf32>
  return
}
