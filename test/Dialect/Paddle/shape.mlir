// RUN: paddle-opt %s --split-input-file | paddle-opt --split-input-file | FileCheck %s
// Round trip of the shape ops, custom and generic form.

// CHECK-LABEL: func @reshape
// CHECK-SAME: (%[[X:.*]]: tensor<2x3x4xf32>, %[[Y:.*]]: tensor<?x8xi32>)
func.func @reshape(%x: tensor<2x3x4xf32>, %y: tensor<?x8xi32>) -> (tensor<2x12xf32>, tensor<?x4xi32>, tensor<24xf32>) {
  // CHECK: paddle.reshape %[[X]] shape = [2, -1] : tensor<2x3x4xf32> -> tensor<2x12xf32>
  %0 = paddle.reshape %x shape = [2, -1] : tensor<2x3x4xf32> -> tensor<2x12xf32>
  // CHECK: paddle.reshape %[[Y]] shape = [-1, 4] : tensor<?x8xi32> -> tensor<?x4xi32>
  %1 = paddle.reshape %y shape = [-1, 4] : tensor<?x8xi32> -> tensor<?x4xi32>
  // CHECK: paddle.reshape %[[X]] shape = [24] : tensor<2x3x4xf32> -> tensor<24xf32>
  %2 = "paddle.reshape"(%x) <{shape = array<i64: 24>}> : (tensor<2x3x4xf32>) -> tensor<24xf32>
  return %0, %1, %2 : tensor<2x12xf32>, tensor<?x4xi32>, tensor<24xf32>
}

// -----

// CHECK-LABEL: func @broadcast_to
// CHECK-SAME: (%[[X:.*]]: tensor<3x1xf32>, %[[Y:.*]]: tensor<?xi1>)
func.func @broadcast_to(%x: tensor<3x1xf32>, %y: tensor<?xi1>) -> (tensor<2x3x4xf32>, tensor<5x?xi1>, tensor<3x7xf32>) {
  // CHECK: paddle.broadcast_to %[[X]] shape = [2, 3, 4] : tensor<3x1xf32> -> tensor<2x3x4xf32>
  %0 = paddle.broadcast_to %x shape = [2, 3, 4] : tensor<3x1xf32> -> tensor<2x3x4xf32>
  // CHECK: paddle.broadcast_to %[[Y]] shape = [5, -1] : tensor<?xi1> -> tensor<5x?xi1>
  %1 = paddle.broadcast_to %y shape = [5, -1] : tensor<?xi1> -> tensor<5x?xi1>
  // CHECK: paddle.broadcast_to %[[X]] shape = [-1, 7] : tensor<3x1xf32> -> tensor<3x7xf32>
  %2 = "paddle.broadcast_to"(%x) <{shape = array<i64: -1, 7>}> : (tensor<3x1xf32>) -> tensor<3x7xf32>
  return %0, %1, %2 : tensor<2x3x4xf32>, tensor<5x?xi1>, tensor<3x7xf32>
}

// -----

// CHECK-LABEL: func @transpose
// CHECK-SAME: (%[[X:.*]]: tensor<2x3x?xbf16>)
func.func @transpose(%x: tensor<2x3x?xbf16>) -> (tensor<?x2x3xbf16>, tensor<3x2x?xbf16>) {
  // CHECK: paddle.transpose %[[X]] perm = [2, 0, 1] : tensor<2x3x?xbf16> -> tensor<?x2x3xbf16>
  %0 = paddle.transpose %x perm = [2, 0, 1] : tensor<2x3x?xbf16> -> tensor<?x2x3xbf16>
  // CHECK: paddle.transpose %[[X]] perm = [1, 0, 2] : tensor<2x3x?xbf16> -> tensor<3x2x?xbf16>
  %1 = "paddle.transpose"(%x) <{perm = array<i64: 1, 0, 2>}> : (tensor<2x3x?xbf16>) -> tensor<3x2x?xbf16>
  return %0, %1 : tensor<?x2x3xbf16>, tensor<3x2x?xbf16>
}

// -----

// CHECK-LABEL: func @slice
// CHECK-SAME: (%[[X:.*]]: tensor<5x?xf64>)
func.func @slice(%x: tensor<5x?xf64>) -> (tensor<2x?xf64>, tensor<0x?xf64>) {
  // CHECK: paddle.slice %[[X]] start = [0, 1] limit = [4, 100] stride = [2, 1] : tensor<5x?xf64> -> tensor<2x?xf64>
  %0 = paddle.slice %x start = [0, 1] limit = [4, 100] stride = [2, 1] : tensor<5x?xf64> -> tensor<2x?xf64>
  // CHECK: paddle.slice %[[X]] start = [7, 0] limit = [9, 3] stride = [1, 3] : tensor<5x?xf64> -> tensor<0x?xf64>
  %1 = "paddle.slice"(%x) <{start = array<i64: 7, 0>, limit = array<i64: 9, 3>, stride = array<i64: 1, 3>}> : (tensor<5x?xf64>) -> tensor<0x?xf64>
  // A stride past the end takes the first element only.
  // CHECK: paddle.slice %[[X]] start = [1, 0] limit = [5, 9] stride = [9223372036854775807, 1] : tensor<5x?xf64> -> tensor<1x?xf64>
  %2 = paddle.slice %x start = [1, 0] limit = [5, 9] stride = [9223372036854775807, 1] : tensor<5x?xf64> -> tensor<1x?xf64>
  return %0, %1 : tensor<2x?xf64>, tensor<0x?xf64>
}

// -----

// CHECK-LABEL: func @concat
// CHECK-SAME: (%[[A:.*]]: tensor<2x3xf32>, %[[B:.*]]: tensor<2x?xf32>, %[[C:.*]]: tensor<?x3xf32>)
func.func @concat(%a: tensor<2x3xf32>, %b: tensor<2x?xf32>, %c: tensor<?x3xf32>) -> (tensor<2x?xf32>, tensor<?x3xf32>) {
  // CHECK: paddle.concat %[[A]], %[[B]] axis = -1 : tensor<2x3xf32>, tensor<2x?xf32> -> tensor<2x?xf32>
  %0 = paddle.concat %a, %b axis = -1 : tensor<2x3xf32>, tensor<2x?xf32> -> tensor<2x?xf32>
  // CHECK: paddle.concat %[[A]], %[[C]], %[[A]] axis = 0 : tensor<2x3xf32>, tensor<?x3xf32>, tensor<2x3xf32> -> tensor<?x3xf32>
  %1 = "paddle.concat"(%a, %c, %a) <{axis = 0 : i64}> : (tensor<2x3xf32>, tensor<?x3xf32>, tensor<2x3xf32>) -> tensor<?x3xf32>
  return %0, %1 : tensor<2x?xf32>, tensor<?x3xf32>
}

// -----

// CHECK-LABEL: func @pad
// CHECK-SAME: (%[[X:.*]]: tensor<2x?xf32>, %[[I:.*]]: tensor<3xi8>)
func.func @pad(%x: tensor<2x?xf32>, %i: tensor<3xi8>) -> (tensor<5x?xf32>, tensor<4xi8>) {
  // CHECK: paddle.pad %[[X]] low = [1, 0] high = [2, 3] value = 1.500000e+00 : f32 : tensor<2x?xf32> -> tensor<5x?xf32>
  %0 = paddle.pad %x low = [1, 0] high = [2, 3] value = 1.5 : f32 : tensor<2x?xf32> -> tensor<5x?xf32>
  // CHECK: paddle.pad %[[I]] low = [1] high = [0] value = -7 : i8 : tensor<3xi8> -> tensor<4xi8>
  %1 = "paddle.pad"(%i) <{low = array<i64: 1>, high = array<i64: 0>, value = -7 : i8}> : (tensor<3xi8>) -> tensor<4xi8>
  return %0, %1 : tensor<5x?xf32>, tensor<4xi8>
}

// -----

// CHECK-LABEL: func @gather
// CHECK-SAME: (%[[X:.*]]: tensor<4x5xf32>, %[[I:.*]]: tensor<2x3xi64>, %[[J:.*]]: tensor<?xi32>)
func.func @gather(%x: tensor<4x5xf32>, %i: tensor<2x3xi64>, %j: tensor<?xi32>) -> (tensor<4x2x3xf32>, tensor<?x5xf32>) {
  // CHECK: paddle.gather %[[X]], %[[I]] axis = 1 : tensor<4x5xf32>, tensor<2x3xi64> -> tensor<4x2x3xf32>
  %0 = paddle.gather %x, %i axis = 1 : tensor<4x5xf32>, tensor<2x3xi64> -> tensor<4x2x3xf32>
  // CHECK: paddle.gather %[[X]], %[[J]] axis = -2 : tensor<4x5xf32>, tensor<?xi32> -> tensor<?x5xf32>
  %1 = "paddle.gather"(%x, %j) <{axis = -2 : i64}> : (tensor<4x5xf32>, tensor<?xi32>) -> tensor<?x5xf32>
  return %0, %1 : tensor<4x2x3xf32>, tensor<?x5xf32>
}

// -----

// CHECK-LABEL: func @scatter_add
// CHECK-SAME: (%[[X:.*]]: tensor<5x3xf32>, %[[I:.*]]: tensor<4xi32>, %[[U:.*]]: tensor<4x3xf32>, %[[V:.*]]: tensor<5x?xf32>)
func.func @scatter_add(%x: tensor<5x3xf32>, %i: tensor<4xi32>, %u: tensor<4x3xf32>, %v: tensor<5x?xf32>) -> (tensor<5x3xf32>, tensor<5x3xf32>) {
  // CHECK: paddle.scatter_add %[[X]], %[[I]], %[[U]] axis = 0 : tensor<5x3xf32>, tensor<4xi32>, tensor<4x3xf32> -> tensor<5x3xf32>
  %0 = paddle.scatter_add %x, %i, %u axis = 0 : tensor<5x3xf32>, tensor<4xi32>, tensor<4x3xf32> -> tensor<5x3xf32>
  // CHECK: paddle.scatter_add %[[X]], %[[I]], %[[V]] axis = -1 : tensor<5x3xf32>, tensor<4xi32>, tensor<5x?xf32> -> tensor<5x3xf32>
  %1 = "paddle.scatter_add"(%x, %i, %v) <{axis = -1 : i64}> : (tensor<5x3xf32>, tensor<4xi32>, tensor<5x?xf32>) -> tensor<5x3xf32>
  return %0, %1 : tensor<5x3xf32>, tensor<5x3xf32>
}
