// RUN: paddle-opt --paddle-autodiff --split-input-file %s | FileCheck %s

// Broadcasting add: the gradient of the broadcast operand is summed over
// the broadcast dim; the other operand gets the cotangent itself.
// CHECK-LABEL: func.func @bcast(
// CHECK-LABEL: func.func private @bcast_vjp(
// CHECK-SAME: %[[X:.*]]: tensor<2x3xf32>, %[[B:.*]]: tensor<3xf32>, %[[CT:.*]]: tensor<2x3xf32>)
// CHECK-NOT: paddle.vjp_of
// CHECK: %[[Y:.*]] = paddle.add %[[X]], %[[B]]
// CHECK: %[[GB:.*]] = paddle.reduce_sum %[[CT]] axes = [0] : tensor<2x3xf32> -> tensor<3xf32>
// CHECK: return %[[Y]], %[[CT]], %[[GB]]
func.func @bcast(%x: tensor<2x3xf32>, %b: tensor<3xf32>) -> tensor<2x3xf32> {
  %y = paddle.add %x, %b : tensor<2x3xf32>, tensor<3xf32> -> tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}
func.func private @bcast_vjp(tensor<2x3xf32>, tensor<3xf32>, tensor<2x3xf32>)
    -> (tensor<2x3xf32>, tensor<2x3xf32>, tensor<3xf32>)
    attributes {paddle.vjp_of = @bcast, paddle.wrt = array<i64: 0, 1>}

// -----

// A size-1 dim is summed with the dims the operand lacks, then reshaped.
// CHECK-LABEL: func.func private @bcast1_vjp(
// CHECK-SAME: %[[X:[^:]*]]: tensor<4x2x3xf32>, %{{[^:]*}}: tensor<2x1xf32>, %[[CT:[^:]*]]: tensor<4x2x3xf32>)
// CHECK: %[[P:.*]] = paddle.mul %[[CT]], %[[X]]
// CHECK: %[[S:.*]] = paddle.reduce_sum %[[P]] axes = [0, 2] : tensor<4x2x3xf32> -> tensor<2xf32>
// CHECK: %[[R:.*]] = paddle.reshape %[[S]] shape = [2, 1] : tensor<2xf32> -> tensor<2x1xf32>
// CHECK: return {{.*}}, %[[R]]
func.func @bcast1(%x: tensor<4x2x3xf32>, %b: tensor<2x1xf32>) -> tensor<4x2x3xf32> {
  %y = paddle.mul %x, %b : tensor<4x2x3xf32>, tensor<2x1xf32> -> tensor<4x2x3xf32>
  return %y : tensor<4x2x3xf32>
}
func.func private @bcast1_vjp(tensor<4x2x3xf32>, tensor<2x1xf32>, tensor<4x2x3xf32>)
    -> (tensor<4x2x3xf32>, tensor<2x1xf32>)
    attributes {paddle.vjp_of = @bcast1, paddle.wrt = array<i64: 1>}

// -----

// matmul: ct @ b^T and a^T @ ct.
// CHECK-LABEL: func.func private @mm_vjp(
// CHECK-SAME: %[[A:.*]]: tensor<4x3xf32>, %[[B:.*]]: tensor<3x5xf32>, %[[CT:.*]]: tensor<4x5xf32>)
// CHECK: %[[Y:.*]] = paddle.matmul %[[A]], %[[B]]
// CHECK: %[[BT:.*]] = paddle.transpose %[[B]] perm = [1, 0]
// CHECK: %[[GA:.*]] = paddle.matmul %[[CT]], %[[BT]] : tensor<4x5xf32>, tensor<5x3xf32> -> tensor<4x3xf32>
// CHECK: %[[AT:.*]] = paddle.transpose %[[A]] perm = [1, 0]
// CHECK: %[[GB:.*]] = paddle.matmul %[[AT]], %[[CT]] : tensor<3x4xf32>, tensor<4x5xf32> -> tensor<3x5xf32>
// CHECK: return %[[Y]], %[[GA]], %[[GB]]
func.func @mm(%a: tensor<4x3xf32>, %b: tensor<3x5xf32>) -> tensor<4x5xf32> {
  %y = paddle.matmul %a, %b : tensor<4x3xf32>, tensor<3x5xf32> -> tensor<4x5xf32>
  return %y : tensor<4x5xf32>
}
func.func private @mm_vjp(tensor<4x3xf32>, tensor<3x5xf32>, tensor<4x5xf32>)
    -> (tensor<4x5xf32>, tensor<4x3xf32>, tensor<3x5xf32>)
    attributes {paddle.vjp_of = @mm, paddle.wrt = array<i64: 0, 1>}

// -----

// A batched lhs times a matrix: the matrix's gradient is one product over
// the batch folded into the rows, [3, 8] x [8, 5] (not 2 products and a sum).
// CHECK-LABEL: func.func private @mm_batched_vjp(
// CHECK-SAME: %[[A:.*]]: tensor<2x4x3xf32>, %[[B:.*]]: tensor<3x5xf32>, %[[CT:.*]]: tensor<2x4x5xf32>)
// CHECK-DAG: %[[BT:.*]] = paddle.transpose %[[B]] perm = [1, 0]
// CHECK-DAG: %[[GA:.*]] = paddle.matmul %[[CT]], %[[BT]] : tensor<2x4x5xf32>, tensor<5x3xf32> -> tensor<2x4x3xf32>
// CHECK-DAG: %[[AR:.*]] = paddle.reshape %[[A]] {{.*}} -> tensor<8x3xf32>
// CHECK-DAG: %[[CR:.*]] = paddle.reshape %[[CT]] {{.*}} -> tensor<8x5xf32>
// CHECK-DAG: %[[AT:.*]] = paddle.transpose %[[AR]] perm = [1, 0]
// CHECK-DAG: %[[GB:.*]] = paddle.matmul %[[AT]], %[[CR]] : tensor<3x8xf32>, tensor<8x5xf32> -> tensor<3x5xf32>
// CHECK-NOT: paddle.reduce_sum
// CHECK: return %{{.*}}, %[[GA]], %[[GB]]
func.func @mm_batched(%a: tensor<2x4x3xf32>, %b: tensor<3x5xf32>) -> tensor<2x4x5xf32> {
  %y = paddle.matmul %a, %b : tensor<2x4x3xf32>, tensor<3x5xf32> -> tensor<2x4x5xf32>
  return %y : tensor<2x4x5xf32>
}
func.func private @mm_batched_vjp(tensor<2x4x3xf32>, tensor<3x5xf32>, tensor<2x4x5xf32>)
    -> (tensor<2x4x5xf32>, tensor<2x4x3xf32>, tensor<3x5xf32>)
    attributes {paddle.vjp_of = @mm_batched, paddle.wrt = array<i64: 0, 1>}

// -----

// tanh on a dynamic shape: ct * (1 - y^2) reuses the primal result.
// CHECK-LABEL: func.func private @th_vjp(
// CHECK-SAME: %[[X:.*]]: tensor<?x4xf32>, %[[CT:.*]]: tensor<?x4xf32>)
// CHECK: %[[Y:.*]] = paddle.tanh %[[X]]
// CHECK: %[[YY:.*]] = paddle.mul %[[Y]], %[[Y]]
// CHECK: %[[ONE:.*]] = paddle.constant dense<1.000000e+00> : tensor<f32>
// CHECK: %[[D:.*]] = paddle.sub %[[ONE]], %[[YY]]
// CHECK: %[[G:.*]] = paddle.mul %[[CT]], %[[D]]
// CHECK: return %[[Y]], %[[G]] : tensor<?x4xf32>, tensor<?x4xf32>
func.func @th(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %y = paddle.tanh %x : tensor<?x4xf32> -> tensor<?x4xf32>
  return %y : tensor<?x4xf32>
}
func.func private @th_vjp(tensor<?x4xf32>, tensor<?x4xf32>) -> (tensor<?x4xf32>, tensor<?x4xf32>)
    attributes {paddle.vjp_of = @th, paddle.wrt = array<i64: 0>}

// -----

// reduce_sum: the cotangent gets the reduced dim back and is broadcast.
// CHECK-LABEL: func.func private @sum_vjp(
// CHECK-SAME: %[[X:.*]]: tensor<2x3xf32>, %[[CT:.*]]: tensor<2xf32>)
// CHECK: %[[R:.*]] = paddle.reshape %[[CT]] shape = [2, 1] : tensor<2xf32> -> tensor<2x1xf32>
// CHECK: %[[G:.*]] = paddle.broadcast_to %[[R]] shape = [2, 3] : tensor<2x1xf32> -> tensor<2x3xf32>
// CHECK: return %{{.*}}, %[[G]]
func.func @sum(%x: tensor<2x3xf32>) -> tensor<2xf32> {
  %y = paddle.reduce_sum %x axes = [1] : tensor<2x3xf32> -> tensor<2xf32>
  return %y : tensor<2xf32>
}
func.func private @sum_vjp(tensor<2x3xf32>, tensor<2xf32>) -> (tensor<2xf32>, tensor<2x3xf32>)
    attributes {paddle.vjp_of = @sum, paddle.wrt = array<i64: 0>}

// -----

// A value used three times gets the sum of its three gradients; an argument
// no result depends on gets zeros; the integer result's cotangent is ignored.
// CHECK-LABEL: func.func private @multi_vjp(
// CHECK-SAME: %[[X:[^:]*]]: tensor<3xf32>, %{{.*}}: tensor<3xf32>, %[[N:[^:]*]]: tensor<3xi32>, %[[CT:[^:]*]]: tensor<3xf32>, %{{.*}}: tensor<3xi32>)
// CHECK: %[[SQ:.*]] = paddle.mul %[[X]], %[[X]]
// CHECK: %[[SUM:.*]] = paddle.add %[[SQ]], %[[X]]
// CHECK-DAG: %[[G1:.*]] = paddle.mul %[[CT]], %[[X]]
// CHECK-DAG: %[[G2:.*]] = paddle.mul %[[CT]], %[[X]]
// CHECK: %[[A1:.*]] = paddle.add %[[CT]], %[[G2]]
// CHECK: %[[A2:.*]] = paddle.add %[[A1]], %[[G1]]
// CHECK: %[[Z:.*]] = paddle.constant dense<0.000000e+00> : tensor<3xf32>
// CHECK: return %[[SUM]], %[[N]], %[[A2]], %[[Z]]
func.func @multi(%x: tensor<3xf32>, %y: tensor<3xf32>, %n: tensor<3xi32>) -> (tensor<3xf32>, tensor<3xi32>) {
  %a = paddle.mul %x, %x : tensor<3xf32>, tensor<3xf32> -> tensor<3xf32>
  %b = paddle.add %a, %x : tensor<3xf32>, tensor<3xf32> -> tensor<3xf32>
  return %b, %n : tensor<3xf32>, tensor<3xi32>
}
func.func private @multi_vjp(tensor<3xf32>, tensor<3xf32>, tensor<3xi32>, tensor<3xf32>, tensor<3xi32>)
    -> (tensor<3xf32>, tensor<3xi32>, tensor<3xf32>, tensor<3xf32>)
    attributes {paddle.vjp_of = @multi, paddle.wrt = array<i64: 0, 1>}

// -----

// Grad-of-grad: @sq_vjp2 differentiates the request @sq_vjp, which is
// built first even though it comes later in the module. d/dx (2 x ct) = 2 ct.
// CHECK-LABEL: func.func private @sq_vjp2(
// CHECK-SAME: %[[X:[^:]*]]: tensor<3xf32>, %[[CT:[^:]*]]: tensor<3xf32>, %[[CTY:[^:]*]]: tensor<3xf32>, %[[CT2:[^:]*]]: tensor<3xf32>)
// CHECK: %[[P1:.*]] = paddle.mul %[[CT2]], %[[CT]]
// CHECK: %[[P2:.*]] = paddle.mul %[[CT2]], %[[CT]]
// CHECK: paddle.add %[[P1]], %[[P2]]
// CHECK: paddle.mul %[[CTY]], %[[X]]
// CHECK: return
// CHECK-LABEL: func.func @sq(
// CHECK-LABEL: func.func private @sq_vjp(
// CHECK-NOT: paddle.wrt
// CHECK: return
func.func private @sq_vjp2(tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>)
    -> (tensor<3xf32>, tensor<3xf32>, tensor<3xf32>)
    attributes {paddle.vjp_of = @sq_vjp, paddle.wrt = array<i64: 0>}
func.func @sq(%x: tensor<3xf32>) -> tensor<3xf32> {
  %a = paddle.mul %x, %x : tensor<3xf32>, tensor<3xf32> -> tensor<3xf32>
  return %a : tensor<3xf32>
}
func.func private @sq_vjp(tensor<3xf32>, tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>)
    attributes {paddle.vjp_of = @sq, paddle.wrt = array<i64: 0>}

// -----

// Integer-valued ops stop gradients silently: argmax feeds a gather index.
// CHECK-LABEL: func.func private @stop_vjp(
// CHECK: paddle.argmax
// CHECK: paddle.scatter_add
func.func @stop(%x: tensor<4x5xf32>) -> tensor<4x1xf32> {
  %i = paddle.argmax %x axis = 1 keepdims : tensor<4x5xf32> -> tensor<4x1xi64>
  %g = paddle.gather %x, %i axis = 1 : tensor<4x5xf32>, tensor<4x1xi64> -> tensor<4x4x1xf32>
  %r = paddle.reduce_sum %g axes = [1] : tensor<4x4x1xf32> -> tensor<4x1xf32>
  return %r : tensor<4x1xf32>
}
func.func private @stop_vjp(tensor<4x5xf32>, tensor<4x1xf32>) -> (tensor<4x1xf32>, tensor<4x5xf32>)
    attributes {paddle.vjp_of = @stop, paddle.wrt = array<i64: 0>}

// -----

// A sharding constraint (pm.shard) is the identity: the gradient of its
// operand is the cotangent under the same constraint.
shard.grid @mesh(shape = 2)
// CHECK-LABEL: func.func private @constrained_vjp(
// CHECK-SAME: %[[X:[^:]*]]: tensor<4x2xf32>, %[[CT:[^:]*]]: tensor<4x2xf32>)
// CHECK: %[[S:.*]] = shard.sharding @mesh split_axes = {{\[\[}}0]]
// CHECK: %[[T:.*]] = paddle.tanh
// CHECK: %[[G:.*]] = shard.shard %[[CT]] to %[[S]] : tensor<4x2xf32>
// CHECK: paddle.mul %[[G]]
func.func @constrained(%x: tensor<4x2xf32>) -> tensor<4x2xf32> {
  %s = shard.sharding @mesh split_axes = [[0]] : !shard.sharding
  %t = paddle.tanh %x : tensor<4x2xf32> -> tensor<4x2xf32>
  %a = shard.shard %t to %s : tensor<4x2xf32>
  return %a : tensor<4x2xf32>
}
func.func private @constrained_vjp(tensor<4x2xf32>, tensor<4x2xf32>)
    -> (tensor<4x2xf32>, tensor<4x2xf32>)
    attributes {paddle.vjp_of = @constrained, paddle.wrt = array<i64: 0>}
