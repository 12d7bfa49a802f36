// RUN: paddle-opt %s --paddle-convert-paddle-to-linalg --split-input-file | FileCheck %s

// Every tensor the lowering makes with dynamic sizes checks them at run time
// (buildEmpty): no negative size, at most 2^63 - 1 bytes. Sizes the user
// gives (iota's operands) get both checks; the byte count multiplies the
// static bytes (4 x 8 bytes) by each dynamic size in 128 bits.
// CHECK-LABEL: func @iota
// CHECK-SAME: (%[[N:.*]]: index)
// CHECK: %[[ZERO:.*]] = arith.constant 0 : index
// CHECK: %[[NONNEG:.*]] = arith.cmpi sge, %[[N]], %[[ZERO]] : index
// CHECK: cf.assert %[[NONNEG]], "{{.*}}sizes.mlir:[[# @LINE + 12]]:8: paddle.iota: dim 0 of tensor<?x4xi64> has a negative size"
// CHECK: %[[STATIC:.*]] = arith.constant 32 : i64
// CHECK: %[[N64:.*]] = arith.index_cast %[[N]] : index to i64
// CHECK: %[[LOW:.*]], %[[HIGH:.*]] = arith.mului_extended %[[STATIC]], %[[N64]] : i64
// CHECK: %[[OVER:.*]] = arith.cmpi ne, %[[HIGH]], %{{.*}} : i64
// CHECK: %[[EMPTY:.*]] = arith.cmpi eq, %[[N64]], %{{.*}} : i64
// CHECK: %[[BELOW:.*]] = arith.cmpi sge, %[[LOW]], %{{.*}} : i64
// CHECK: %[[FITS:.*]] = arith.andi %{{.*}}, %[[BELOW]] : i1
// CHECK: %[[OK:.*]] = arith.ori %{{.*}}, %[[FITS]] : i1
// CHECK: cf.assert %[[OK]], "{{.*}}sizes.mlir:[[# @LINE + 3]]:8: paddle.iota: the sizes of tensor<?x4xi64> make more than 2^63 - 1 bytes"
// CHECK: tensor.empty(%[[N]]) : tensor<?x4xi64>
func.func @iota(%n: index) -> tensor<?x4xi64> {
  %0 = paddle.iota [%n] dim = 0 : tensor<?x4xi64>
  return %0 : tensor<?x4xi64>
}

// -----

// rng_uniform's sizes come from the user too.
// CHECK-LABEL: func @rng_uniform
// CHECK: cf.assert %{{.*}}, "{{.*}}: paddle.rng_uniform: dim 1 of tensor<2x?xf32> has a negative size"
// CHECK: cf.assert %{{.*}}, "{{.*}}: paddle.rng_uniform: the sizes of tensor<2x?xf32> make more than 2^63 - 1 bytes"
func.func @rng_uniform(%s: tensor<i64>, %n: index) -> tensor<2x?xf32> {
  %0 = paddle.rng_uniform %s [%n] : tensor<i64> -> tensor<2x?xf32>
  return %0 : tensor<2x?xf32>
}

// -----

// A size taken from an existing tensor is not negative, and a result no
// larger than that tensor fits: no check.
// CHECK-LABEL: func @same_shape
// CHECK-NOT: has a negative size
// CHECK-NOT: make more than
// CHECK: return
func.func @same_shape(%a: tensor<?x4xf32>, %b: tensor<?x4xf32>) -> (tensor<?x4xf32>, tensor<?x4xf32>, tensor<4xf32>) {
  %0 = paddle.add %a, %b : tensor<?x4xf32>, tensor<?x4xf32> -> tensor<?x4xf32>
  %1 = paddle.cast %0 : tensor<?x4xf32> -> tensor<?x4xf32>
  %2 = paddle.reduce_sum %a axes = [0] : tensor<?x4xf32> -> tensor<4xf32>
  return %0, %1, %2 : tensor<?x4xf32>, tensor<?x4xf32>, tensor<4xf32>
}

// -----

// Broadcasting to a larger static part (a 4 x 1 i8 input to [?, 2^62]) can
// overflow the byte count: checked, though the size is not negative.
// CHECK-LABEL: func @broadcast_grows
// CHECK-NOT: has a negative size
// CHECK: cf.assert %{{.*}}, "{{.*}}: paddle.broadcast_to: the sizes of tensor<?x4611686018427387904xi8> make more than 2^63 - 1 bytes"
func.func @broadcast_grows(%x: tensor<?x1xi8>) -> tensor<?x4611686018427387904xi8> {
  %0 = paddle.broadcast_to %x shape = [-1, 4611686018427387904] : tensor<?x1xi8> -> tensor<?x4611686018427387904xi8>
  return %0 : tensor<?x4611686018427387904xi8>
}

// -----

// A wider element type than the tensor the size comes from is checked too.
// CHECK-LABEL: func @cast_wider
// CHECK: cf.assert %{{.*}}, "{{.*}}: paddle.cast: the sizes of tensor<?xf64> make more than 2^63 - 1 bytes"
func.func @cast_wider(%x: tensor<?xi8>) -> tensor<?xf64> {
  %0 = paddle.cast %x : tensor<?xi8> -> tensor<?xf64>
  return %0 : tensor<?xf64>
}

