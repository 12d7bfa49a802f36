// RUN: paddle-opt %s --canonicalize --split-input-file | FileCheck %s

// Ops that keep their input unchanged fold away.
// CHECK-LABEL: func @identities
// CHECK-SAME: (%[[X:.*]]: tensor<?x4xf32>)
// CHECK-NEXT: return %[[X]], %[[X]], %[[X]], %[[X]], %[[X]], %[[X]]
func.func @identities(%x: tensor<?x4xf32>) -> (tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32>) {
  %0 = paddle.reshape %x shape = [-1, 4] : tensor<?x4xf32> -> tensor<?x4xf32>
  %1 = paddle.broadcast_to %x shape = [-1, 4] : tensor<?x4xf32> -> tensor<?x4xf32>
  %2 = paddle.transpose %x perm = [0, 1] : tensor<?x4xf32> -> tensor<?x4xf32>
  %3 = paddle.concat %x axis = 1 : tensor<?x4xf32> -> tensor<?x4xf32>
  %4 = paddle.pad %x low = [0, 0] high = [0, 0] value = 0.0 : f32 : tensor<?x4xf32> -> tensor<?x4xf32>
  %5 = paddle.transpose %x perm = [0, 1] : tensor<?x4xf32> -> tensor<?x4xf32>
  return %0, %1, %2, %3, %4, %5 : tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32>
}

// -----

// A full static slice is the input; a partial one, or one over a dynamic dim
// whose limit may cut it, stays.
// CHECK-LABEL: func @slice_identity
// CHECK-SAME: (%[[X:.*]]: tensor<3x4xf32>, %[[Y:.*]]: tensor<?xf32>)
// CHECK: %[[S:.*]] = paddle.slice %[[Y]]
// CHECK-NEXT: return %[[X]], %[[S]]
func.func @slice_identity(%x: tensor<3x4xf32>, %y: tensor<?xf32>) -> (tensor<3x4xf32>, tensor<?xf32>) {
  %0 = paddle.slice %x start = [0, 0] limit = [3, 99] stride = [1, 1] : tensor<3x4xf32> -> tensor<3x4xf32>
  %1 = paddle.slice %y start = [0] limit = [5] stride = [1] : tensor<?xf32> -> tensor<?xf32>
  return %0, %1 : tensor<3x4xf32>, tensor<?xf32>
}

// -----

// Equal written types are not enough: these results are 2x3 and 5 (which
// the lowering checks at run time), so the ops stay.
// CHECK-LABEL: func @not_identities
// CHECK: paddle.reshape
// CHECK: paddle.reshape
// CHECK: paddle.broadcast_to
func.func @not_identities(%x: tensor<?x?xf32>, %y: tensor<?x3xf32>, %z: tensor<?xf32>) -> (tensor<?x?xf32>, tensor<?x3xf32>, tensor<?xf32>) {
  %0 = "paddle.reshape"(%x) <{shape = array<i64: 2, 3>}> : (tensor<?x?xf32>) -> tensor<?x?xf32>
  %1 = "paddle.reshape"(%y) <{shape = array<i64: 2, 3>}> : (tensor<?x3xf32>) -> tensor<?x3xf32>
  %2 = "paddle.broadcast_to"(%z) <{shape = array<i64: 5>}> : (tensor<?xf32>) -> tensor<?xf32>
  return %0, %1, %2 : tensor<?x?xf32>, tensor<?x3xf32>, tensor<?xf32>
}

// -----

// CHECK-LABEL: func @reshape_of_reshape
// CHECK-SAME: (%[[X:.*]]: tensor<2x3x4xf32>)
// CHECK-NEXT: %[[R:.*]] = paddle.reshape %[[X]] shape = [4, -1] : tensor<2x3x4xf32> -> tensor<4x6xf32>
// CHECK-NEXT: return %[[R]]
func.func @reshape_of_reshape(%x: tensor<2x3x4xf32>) -> tensor<4x6xf32> {
  %0 = paddle.reshape %x shape = [6, 4] : tensor<2x3x4xf32> -> tensor<6x4xf32>
  %1 = paddle.reshape %0 shape = [4, -1] : tensor<6x4xf32> -> tensor<4x6xf32>
  return %1 : tensor<4x6xf32>
}

// -----

// transpose(transpose(x, [1, 2, 0]), [2, 0, 1]) is the identity; with
// [0, 2, 1] outside it is one transpose by [1, 0, 2].
// CHECK-LABEL: func @transpose_of_transpose
// CHECK-SAME: (%[[X:.*]]: tensor<2x3x4xf32>)
// CHECK-NEXT: %[[T:.*]] = paddle.transpose %[[X]] perm = [1, 0, 2] : tensor<2x3x4xf32> -> tensor<3x2x4xf32>
// CHECK-NEXT: return %[[X]], %[[T]]
func.func @transpose_of_transpose(%x: tensor<2x3x4xf32>) -> (tensor<2x3x4xf32>, tensor<3x2x4xf32>) {
  %0 = paddle.transpose %x perm = [1, 2, 0] : tensor<2x3x4xf32> -> tensor<3x4x2xf32>
  %1 = paddle.transpose %0 perm = [2, 0, 1] : tensor<3x4x2xf32> -> tensor<2x3x4xf32>
  %2 = paddle.transpose %0 perm = [0, 2, 1] : tensor<3x4x2xf32> -> tensor<3x2x4xf32>
  return %1, %2 : tensor<2x3x4xf32>, tensor<3x2x4xf32>
}

// -----

// CHECK-LABEL: func @fold_constants
// CHECK-DAG: %[[T:.*]] = paddle.constant dense<{{\[}}[1, 4], [2, 5], [3, 6]]> : tensor<3x2xi32>
// CHECK-DAG: %[[R:.*]] = paddle.constant dense<[1, 2, 3, 4, 5, 6]> : tensor<6xi32>
// CHECK-DAG: %[[B:.*]] = paddle.constant dense<2.500000e+00> : tensor<2x3xf32>
// CHECK-DAG: %[[S:.*]] = paddle.constant dense<2.500000e+00> : tensor<4x3xf32>
// CHECK: return %[[T]], %[[R]], %[[B]], %[[S]]
func.func @fold_constants() -> (tensor<3x2xi32>, tensor<6xi32>, tensor<2x3xf32>, tensor<4x3xf32>) {
  %c = paddle.constant dense<[[1, 2, 3], [4, 5, 6]]> : tensor<2x3xi32>
  %0 = paddle.transpose %c perm = [1, 0] : tensor<2x3xi32> -> tensor<3x2xi32>
  %1 = paddle.reshape %c shape = [-1] : tensor<2x3xi32> -> tensor<6xi32>
  %s = paddle.constant dense<2.5> : tensor<3xf32>
  %2 = paddle.broadcast_to %s shape = [2, 3] : tensor<3xf32> -> tensor<2x3xf32>
  %3 = paddle.transpose %2 perm = [1, 0] : tensor<2x3xf32> -> tensor<3x2xf32>
  %4 = paddle.reshape %3 shape = [2, 3] : tensor<3x2xf32> -> tensor<2x3xf32>
  %5 = paddle.broadcast_to %s shape = [4, 3] : tensor<3xf32> -> tensor<4x3xf32>
  return %0, %1, %4, %5 : tensor<3x2xi32>, tensor<6xi32>, tensor<2x3xf32>, tensor<4x3xf32>
}
