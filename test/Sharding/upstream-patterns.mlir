// RUN: paddle-opt %s --pass-pipeline='builtin.module(func.func(sharding-propagation{traversal=forward}),paddle-complete-sharding,func.func(shard-partition),canonicalize)' --split-input-file | FileCheck %s
// RUN: paddle-opt %s --paddle-spmd-pipeline --split-input-file | FileCheck %s --check-prefix=LOWERED

// The cases upstream's sharding passes get wrong (checked with MLIR
// 22.1.8), kept working here: each once crashed or gave wrong IR.

// 1. traversal=forward on a Megatron MLP (upstream: a segfault with
// linalg ops). Here: one all_reduce of the row-split layer's partial sums.
shard.grid @mesh(shape = 2)
// CHECK-LABEL: func.func @megatron_mlp_forward
// CHECK-SAME: tensor<8x8xf32> {paddle.sharding = [array<i64>, array<i64: 0>]}
// CHECK: paddle.relu
// CHECK-NEXT: %[[P:.*]] = paddle.matmul {{.*}} -> tensor<4x8xf32>
// CHECK-NEXT: %[[R:.*]] = shard.all_reduce %[[P]] on @mesh grid_axes = [0]
// CHECK-NEXT: return %[[R]]
// LOWERED-LABEL: func.func @megatron_mlp_forward
// LOWERED: call @paddle_spmd_all_reduce_f32
func.func @megatron_mlp_forward(%x: tensor<4x8xf32>, %w1: tensor<8x16xf32>, %w2: tensor<16x8xf32>) -> tensor<4x8xf32> {
  %col = shard.sharding @mesh split_axes = [[], [0]] : !shard.sharding
  %row = shard.sharding @mesh split_axes = [[0]] : !shard.sharding
  %w1s = shard.shard %w1 to %col : tensor<8x16xf32>
  %w2s = shard.shard %w2 to %row : tensor<16x8xf32>
  %h = paddle.matmul %x, %w1s : tensor<4x8xf32>, tensor<8x16xf32> -> tensor<4x16xf32>
  %a = paddle.relu %h : tensor<4x16xf32> -> tensor<4x16xf32>
  %y = paddle.matmul %a, %w2s : tensor<4x16xf32>, tensor<16x8xf32> -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// 2. A K-split matmul whose result is wanted row-split over the same axis
// (the reduce-scatter case; upstream: a segfault or IR that fails to
// verify). Here the row split of the result wins and the operands are
// resharded to it: an all_to_all moves lhs's axis from K to M, an
// all_gather makes rhs whole.
shard.grid @mesh(shape = 2)
// CHECK-LABEL: func.func @k_split_rows_wanted
// CHECK-SAME: %[[A:.*]]: tensor<8x8xf32>
// CHECK-SAME: %[[B:.*]]: tensor<8x4xf32>
// CHECK-SAME: -> (tensor<4x4xf32> {paddle.sharding = [array<i64: 0>, array<i64>]})
// CHECK-DAG: shard.all_gather %[[B]] on @mesh grid_axes = [0] gather_axis = 0 : tensor<8x4xf32> -> tensor<16x4xf32>
// CHECK-DAG: shard.all_to_all %[[A]] on @mesh grid_axes = [0] split_axis = 0 concat_axis = 1 : tensor<8x8xf32> -> tensor<4x16xf32>
// CHECK: paddle.matmul {{.*}} : tensor<4x16xf32>, tensor<16x4xf32> -> tensor<4x4xf32>
func.func @k_split_rows_wanted(%a: tensor<8x16xf32>, %b: tensor<16x4xf32>) -> tensor<8x4xf32> {
  %k = shard.sharding @mesh split_axes = [[], [0]] : !shard.sharding
  %k2 = shard.sharding @mesh split_axes = [[0]] : !shard.sharding
  %a1 = shard.shard %a to %k : tensor<8x16xf32>
  %b1 = shard.shard %b to %k2 : tensor<16x4xf32>
  %c = paddle.matmul %a1, %b1 : tensor<8x16xf32>, tensor<16x4xf32> -> tensor<8x4xf32>
  %rows = shard.sharding @mesh split_axes = [[0]] : !shard.sharding
  %c1 = shard.shard %c to %rows annotate_for_users : tensor<8x4xf32>
  return %c1 : tensor<8x4xf32>
}

// -----

// 3. A reshard over two mesh axes at once (upstream takes one step and
// stops: [[0], [1]] -> whole gathered axis 0 only, leaving dim 1 split and
// an op with mismatched types). paddle-complete-sharding spells it as one
// gather per axis.
shard.grid @mesh(shape = 2x2)
// CHECK-LABEL: func.func @two_axis_reshard
// CHECK-SAME: %[[X:.*]]: tensor<4x3xf32>
// CHECK: %[[G0:.*]] = shard.all_gather %[[X]] on @mesh grid_axes = [0] gather_axis = 0 : tensor<4x3xf32> -> tensor<8x3xf32>
// CHECK: %[[G1:.*]] = shard.all_gather %[[G0]] on @mesh grid_axes = [1] gather_axis = 1 : tensor<8x3xf32> -> tensor<8x6xf32>
// CHECK: paddle.softmax %[[G1]] axis = 0 : tensor<8x6xf32>
func.func @two_axis_reshard(%x: tensor<8x6xf32>) -> tensor<8x6xf32> {
  %s = shard.sharding @mesh split_axes = [[0], [1]] : !shard.sharding
  %x1 = shard.shard %x to %s : tensor<8x6xf32>
  %w = shard.sharding @mesh split_axes = [[]] : !shard.sharding
  %x2 = shard.shard %x1 to %w annotate_for_users : tensor<8x6xf32>
  %y = paddle.softmax %x2 axis = 0 : tensor<8x6xf32> -> tensor<8x6xf32>
  return %y : tensor<8x6xf32>
}

// -----

// 4. A value with two users, one of them a result (upstream's partition
// reads a value's sharding from its single use and dereferences a missing
// one): every user reads the one annotation; the sum takes partial sums.
shard.grid @mesh(shape = 2)
// CHECK-LABEL: func.func @two_users
// CHECK-SAME: -> (tensor<4x4xf32> {paddle.sharding = [array<i64: 0>, array<i64>]}, tensor<f32>
// CHECK: %[[E:.*]] = paddle.exp
// CHECK: %[[S:.*]] = paddle.reduce_sum %[[E]] : tensor<4x4xf32> -> tensor<f32>
// CHECK: %[[T:.*]] = shard.all_reduce %[[S]] on @mesh grid_axes = [0] : tensor<f32>
// CHECK: return %[[E]], %[[T]]
func.func @two_users(%x: tensor<8x4xf32>) -> (tensor<8x4xf32>, tensor<f32>) {
  %s = shard.sharding @mesh split_axes = [[0]] : !shard.sharding
  %x1 = shard.shard %x to %s : tensor<8x4xf32>
  %e = paddle.exp %x1 : tensor<8x4xf32> -> tensor<8x4xf32>
  %t = paddle.reduce_sum %e : tensor<8x4xf32> -> tensor<f32>
  return %e, %t : tensor<8x4xf32>, tensor<f32>
}
