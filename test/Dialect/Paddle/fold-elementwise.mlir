// RUN: paddle-opt %s --canonicalize --split-input-file | FileCheck %s

// CHECK-LABEL: func @fold_constants
// CHECK: %[[C:.*]] = paddle.constant dense<[4.500000e+00, 5.500000e+00]> : tensor<2xf32>
// CHECK-NEXT: return %[[C]]
func.func @fold_constants() -> tensor<2xf32> {
  %a = paddle.constant dense<[1.0, 3.0]> : tensor<2xf32>
  %b = paddle.constant dense<2.0> : tensor<2xf32>
  %0 = paddle.add %a, %b : tensor<2xf32>, tensor<2xf32> -> tensor<2xf32>
  %1 = paddle.mul %0, %b : tensor<2xf32>, tensor<2xf32> -> tensor<2xf32>
  %2 = paddle.sub %1, %a : tensor<2xf32>, tensor<2xf32> -> tensor<2xf32>
  %3 = paddle.div %2, %b : tensor<2xf32>, tensor<2xf32> -> tensor<2xf32>
  %4 = paddle.pow %3, %b : tensor<2xf32>, tensor<2xf32> -> tensor<2xf32>
  %5 = paddle.sqrt %4 : tensor<2xf32> -> tensor<2xf32>
  %6 = paddle.neg %5 : tensor<2xf32> -> tensor<2xf32>
  %7 = paddle.abs %6 : tensor<2xf32> -> tensor<2xf32>
  %8 = paddle.add %7, %b : tensor<2xf32>, tensor<2xf32> -> tensor<2xf32>
  return %8 : tensor<2xf32>
}

// -----

// Integer folding follows numpy: floor division and remainder, 0 for / 0.
// CHECK-LABEL: func @fold_int_div
// CHECK-DAG: paddle.constant dense<[-4, -3, 0]> : tensor<3xi32>
// CHECK-DAG: paddle.constant dense<[1, -2, 0]> : tensor<3xi32>
func.func @fold_int_div() -> (tensor<3xi32>, tensor<3xi32>) {
  %a = paddle.constant dense<[-7, 7, 5]> : tensor<3xi32>
  %b = paddle.constant dense<[2, -3, 0]> : tensor<3xi32>
  %0 = paddle.div %a, %b : tensor<3xi32>, tensor<3xi32> -> tensor<3xi32>
  %1 = paddle.rem %a, %b : tensor<3xi32>, tensor<3xi32> -> tensor<3xi32>
  return %0, %1 : tensor<3xi32>, tensor<3xi32>
}

// -----

// CHECK-LABEL: func @identities
// CHECK-SAME: (%[[X:.*]]: tensor<4xf32>, %[[I:.*]]: tensor<4xi32>)
// CHECK-NEXT: return %[[X]], %[[X]], %[[X]], %[[I]], %[[X]]
func.func @identities(%x: tensor<4xf32>, %i: tensor<4xi32>)
    -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xi32>, tensor<4xf32>) {
  %one = paddle.constant dense<1.0> : tensor<4xf32>
  %zero = paddle.constant dense<0.0> : tensor<4xf32>
  %izero = paddle.constant dense<0> : tensor<4xi32>
  %0 = paddle.mul %x, %one : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  %1 = paddle.div %x, %one : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  %2 = paddle.sub %x, %zero : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  %3 = paddle.add %izero, %i : tensor<4xi32>, tensor<4xi32> -> tensor<4xi32>
  %n = paddle.neg %x : tensor<4xf32> -> tensor<4xf32>
  %4 = paddle.neg %n : tensor<4xf32> -> tensor<4xf32>
  return %0, %1, %2, %3, %4 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xi32>, tensor<4xf32>
}

// -----

// x + 0.0 is not x when x is -0.0, and a broadcasting identity changes the
// shape: neither folds.
// CHECK-LABEL: func @no_fold
// CHECK: paddle.add
// CHECK: paddle.mul
func.func @no_fold(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<3x4xf32>) {
  %zero = paddle.constant dense<0.0> : tensor<4xf32>
  %one = paddle.constant dense<1.0> : tensor<3x4xf32>
  %0 = paddle.add %x, %zero : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  %1 = paddle.mul %x, %one : tensor<4xf32>, tensor<3x4xf32> -> tensor<3x4xf32>
  return %0, %1 : tensor<4xf32>, tensor<3x4xf32>
}

// -----

// CHECK-LABEL: func @fold_compare_select_cast
// CHECK-DAG: %[[B:.*]] = paddle.constant dense<[true, false]> : tensor<2xi1>
// CHECK-DAG: %[[I:.*]] = paddle.constant dense<[1, -2]> : tensor<2xi32>
// CHECK: return %[[B]], %{{.*}}, %[[I]]
func.func @fold_compare_select_cast(%x: tensor<2xf32>, %y: tensor<2xf32>)
    -> (tensor<2xi1>, tensor<2xf32>, tensor<2xi32>) {
  %a = paddle.constant dense<[1.5, -2.5]> : tensor<2xf32>
  %b = paddle.constant dense<[1.0, 1.0]> : tensor<2xf32>
  %t = paddle.constant dense<true> : tensor<2xi1>
  %0 = paddle.compare gt, %a, %b : tensor<2xf32>, tensor<2xf32> -> tensor<2xi1>
  %1 = paddle.select %t, %x, %y : tensor<2xi1>, tensor<2xf32>, tensor<2xf32> -> tensor<2xf32>
  %2 = paddle.cast %a : tensor<2xf32> -> tensor<2xi32>
  return %0, %1, %2 : tensor<2xi1>, tensor<2xf32>, tensor<2xi32>
}

// -----

// CHECK-LABEL: func @select_true
// CHECK-SAME: (%[[X:.*]]: tensor<2xf32>, %{{.*}}: tensor<2xf32>)
// CHECK-NEXT: return %[[X]]
func.func @select_true(%x: tensor<2xf32>, %y: tensor<2xf32>) -> tensor<2xf32> {
  %t = paddle.constant dense<true> : tensor<2xi1>
  %1 = paddle.select %t, %x, %y : tensor<2xi1>, tensor<2xf32>, tensor<2xf32> -> tensor<2xf32>
  return %1 : tensor<2xf32>
}
