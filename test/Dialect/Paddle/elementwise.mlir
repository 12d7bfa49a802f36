// RUN: paddle-opt %s --split-input-file | paddle-opt --split-input-file | FileCheck %s
// Round trip of the creation and elementwise ops, custom and generic form.

// CHECK-LABEL: func @creation
func.func @creation(%n: index) -> (tensor<2xf32>, tensor<2x3xi64>, tensor<?xf32>) {
  // CHECK: paddle.constant dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>
  %c = paddle.constant dense<[1.0, 2.0]> : tensor<2xf32>
  // CHECK: paddle.iota dim = 1 : tensor<2x3xi64>
  %i = paddle.iota dim = 1 : tensor<2x3xi64>
  // CHECK: paddle.iota[%{{.*}}] dim = 0 : tensor<?xf32>
  %j = paddle.iota [%n] dim = 0 : tensor<?xf32>
  return %c, %i, %j : tensor<2xf32>, tensor<2x3xi64>, tensor<?xf32>
}

// -----

// CHECK-LABEL: func @unary
// CHECK-SAME: (%[[X:.*]]: tensor<4x?xf32>, %[[I:.*]]: tensor<3xi32>, %[[B:.*]]: tensor<3xi1>)
func.func @unary(%x: tensor<4x?xf32>, %i: tensor<3xi32>, %b: tensor<3xi1>) {
  // CHECK: paddle.neg %[[X]] : tensor<4x?xf32> -> tensor<4x?xf32>
  %0 = paddle.neg %x : tensor<4x?xf32> -> tensor<4x?xf32>
  // CHECK: paddle.abs %[[I]] : tensor<3xi32> -> tensor<3xi32>
  %1 = paddle.abs %i : tensor<3xi32> -> tensor<3xi32>
  // CHECK: paddle.exp
  %2 = paddle.exp %x : tensor<4x?xf32> -> tensor<4x?xf32>
  // CHECK: paddle.log
  %3 = paddle.log %x : tensor<4x?xf32> -> tensor<4x?xf32>
  // CHECK: paddle.sqrt
  %4 = paddle.sqrt %x : tensor<4x?xf32> -> tensor<4x?xf32>
  // CHECK: paddle.rsqrt
  %5 = paddle.rsqrt %x : tensor<4x?xf32> -> tensor<4x?xf32>
  // CHECK: paddle.tanh
  %6 = paddle.tanh %x : tensor<4x?xf32> -> tensor<4x?xf32>
  // CHECK: paddle.sigmoid
  %7 = paddle.sigmoid %x : tensor<4x?xf32> -> tensor<4x?xf32>
  // CHECK: paddle.relu %[[I]]
  %8 = paddle.relu %i : tensor<3xi32> -> tensor<3xi32>
  // CHECK: paddle.gelu %[[X]] : tensor
  %9 = paddle.gelu %x : tensor<4x?xf32> -> tensor<4x?xf32>
  // CHECK: paddle.gelu %[[X]] {approximate} : tensor
  %10 = paddle.gelu %x {approximate} : tensor<4x?xf32> -> tensor<4x?xf32>
  // CHECK: paddle.erf
  %11 = paddle.erf %x : tensor<4x?xf32> -> tensor<4x?xf32>
  // CHECK: paddle.sin
  %12 = paddle.sin %x : tensor<4x?xf32> -> tensor<4x?xf32>
  // CHECK: paddle.cos
  %13 = paddle.cos %x : tensor<4x?xf32> -> tensor<4x?xf32>
  // CHECK: paddle.floor
  %14 = paddle.floor %x : tensor<4x?xf32> -> tensor<4x?xf32>
  // CHECK: paddle.ceil
  %15 = paddle.ceil %x : tensor<4x?xf32> -> tensor<4x?xf32>
  // CHECK: paddle.round
  %16 = paddle.round %x : tensor<4x?xf32> -> tensor<4x?xf32>
  // CHECK: paddle.sign
  %17 = paddle.sign %x : tensor<4x?xf32> -> tensor<4x?xf32>
  // CHECK: paddle.not %[[B]] : tensor<3xi1> -> tensor<3xi1>
  %18 = paddle.not %b : tensor<3xi1> -> tensor<3xi1>
  return
}

// -----

// CHECK-LABEL: func @binary
// CHECK-SAME: (%[[A:.*]]: tensor<4x?xf32>, %[[B:.*]]: tensor<?xf32>
func.func @binary(%a: tensor<4x?xf32>, %b: tensor<?xf32>, %i: tensor<2x1xi32>, %j: tensor<3xi32>) {
  // CHECK: paddle.add %[[A]], %[[B]] : tensor<4x?xf32>, tensor<?xf32> -> tensor<4x?xf32>
  %0 = paddle.add %a, %b : tensor<4x?xf32>, tensor<?xf32> -> tensor<4x?xf32>
  // CHECK: paddle.sub
  %1 = paddle.sub %a, %b : tensor<4x?xf32>, tensor<?xf32> -> tensor<4x?xf32>
  // CHECK: paddle.mul
  %2 = paddle.mul %a, %b : tensor<4x?xf32>, tensor<?xf32> -> tensor<4x?xf32>
  // CHECK: paddle.div
  %3 = paddle.div %a, %b : tensor<4x?xf32>, tensor<?xf32> -> tensor<4x?xf32>
  // CHECK: paddle.pow
  %4 = paddle.pow %a, %b : tensor<4x?xf32>, tensor<?xf32> -> tensor<4x?xf32>
  // CHECK: paddle.maximum
  %5 = paddle.maximum %a, %b : tensor<4x?xf32>, tensor<?xf32> -> tensor<4x?xf32>
  // CHECK: paddle.minimum
  %6 = paddle.minimum %a, %b : tensor<4x?xf32>, tensor<?xf32> -> tensor<4x?xf32>
  // CHECK: paddle.rem %{{.*}} : tensor<2x1xi32>, tensor<3xi32> -> tensor<2x3xi32>
  %7 = paddle.rem %i, %j : tensor<2x1xi32>, tensor<3xi32> -> tensor<2x3xi32>
  // CHECK: paddle.and
  %8 = paddle.and %i, %j : tensor<2x1xi32>, tensor<3xi32> -> tensor<2x3xi32>
  // CHECK: paddle.or
  %9 = paddle.or %i, %j : tensor<2x1xi32>, tensor<3xi32> -> tensor<2x3xi32>
  // CHECK: paddle.xor
  %10 = paddle.xor %i, %j : tensor<2x1xi32>, tensor<3xi32> -> tensor<2x3xi32>
  // CHECK: paddle.compare lt, %[[A]], %[[B]] : tensor<4x?xf32>, tensor<?xf32> -> tensor<4x?xi1>
  %11 = paddle.compare lt, %a, %b : tensor<4x?xf32>, tensor<?xf32> -> tensor<4x?xi1>
  // CHECK: paddle.select %{{.*}}, %[[A]], %[[B]] : tensor<4x?xi1>, tensor<4x?xf32>, tensor<?xf32> -> tensor<4x?xf32>
  %12 = paddle.select %11, %a, %b : tensor<4x?xi1>, tensor<4x?xf32>, tensor<?xf32> -> tensor<4x?xf32>
  // CHECK: paddle.cast %[[A]] : tensor<4x?xf32> -> tensor<4x?xi32>
  %13 = paddle.cast %a : tensor<4x?xf32> -> tensor<4x?xi32>
  return
}

// -----

// The generic form, using only the mnemonics, parses and prints back in the
// custom form; a written result type may be more static than the inferred one.
// CHECK-LABEL: func @generic_form
func.func @generic_form(%a: tensor<4x?xf32>, %b: tensor<?xf32>) -> tensor<4x?xf32> {
  // CHECK: paddle.add %{{.*}}, %{{.*}} : tensor<4x?xf32>, tensor<?xf32> -> tensor<4x?xf32>
  %0 = "paddle.add"(%a, %b) : (tensor<4x?xf32>, tensor<?xf32>) -> tensor<4x?xf32>
  // CHECK: paddle.compare ge, {{.*}} -> tensor<4x3xi1>
  %1 = "paddle.compare"(%0, %b) {direction = #paddle<direction ge>} : (tensor<4x?xf32>, tensor<?xf32>) -> tensor<4x3xi1>
  return %0 : tensor<4x?xf32>
}
