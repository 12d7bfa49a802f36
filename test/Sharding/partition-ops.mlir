// RUN: paddle-opt %s --pass-pipeline='builtin.module(func.func(sharding-propagation),paddle-complete-sharding,func.func(shard-partition),canonicalize)' --split-input-file | FileCheck %s

// Propagation and partition of paddle ops (lib/Sharding/ShardingRules.cpp):
// each function shows the per-device types and the collectives the split
// needs, on a 2x2 mesh.

shard.grid @mesh(shape = 2x2)

// Elementwise with broadcasting: the bias follows the split of the dim it
// broadcasts along.
// CHECK-LABEL: func.func @bias_add
// CHECK-SAME: %[[X:.*]]: tensor<4x3xf32> {paddle.sharding = [array<i64: 0>, array<i64: 1>]}
// CHECK-SAME: %[[B:.*]]: tensor<3xf32> {paddle.sharding = [array<i64: 1>]}
// CHECK-NEXT: %[[Y:.*]] = paddle.add %[[X]], %[[B]] : tensor<4x3xf32>, tensor<3xf32> -> tensor<4x3xf32>
// CHECK-NEXT: return %[[Y]]
func.func @bias_add(%x: tensor<8x6xf32>, %b: tensor<6xf32>) -> tensor<8x6xf32> {
  %s = shard.sharding @mesh split_axes = [[0], [1]] : !shard.sharding
  %x1 = shard.shard %x to %s : tensor<8x6xf32>
  %y = paddle.add %x1, %b : tensor<8x6xf32>, tensor<6xf32> -> tensor<8x6xf32>
  %z = paddle.exp %y : tensor<8x6xf32> -> tensor<8x6xf32>
  return %y : tensor<8x6xf32>
}

// -----

shard.grid @mesh(shape = 2x2)

// Megatron's MLP: column-split, then row-split weights; one all_reduce of
// the partial sums.
// CHECK-LABEL: func.func @megatron_mlp
// CHECK-SAME: tensor<4x8xf32> {paddle.sharding = [array<i64>, array<i64>]}
// CHECK-SAME: tensor<8x8xf32> {paddle.sharding = [array<i64>, array<i64: 1>]}
// CHECK-SAME: tensor<8x8xf32> {paddle.sharding = [array<i64: 1>, array<i64>]}
// CHECK: paddle.matmul {{.*}} -> tensor<4x8xf32>
// CHECK: paddle.gelu
// CHECK: %[[P:.*]] = paddle.matmul {{.*}} -> tensor<4x8xf32>
// CHECK: %[[R:.*]] = shard.all_reduce %[[P]] on @mesh grid_axes = [1] : tensor<4x8xf32> -> tensor<4x8xf32>
// CHECK: return %[[R]]
func.func @megatron_mlp(%x: tensor<4x8xf32>, %w1: tensor<8x16xf32>, %w2: tensor<16x8xf32>) -> tensor<4x8xf32> {
  %col = shard.sharding @mesh split_axes = [[], [1]] : !shard.sharding
  %row = shard.sharding @mesh split_axes = [[1]] : !shard.sharding
  %w1s = shard.shard %w1 to %col : tensor<8x16xf32>
  %w2s = shard.shard %w2 to %row : tensor<16x8xf32>
  %h = paddle.matmul %x, %w1s : tensor<4x8xf32>, tensor<8x16xf32> -> tensor<4x16xf32>
  %a = paddle.gelu %h : tensor<4x16xf32> -> tensor<4x16xf32>
  %y = paddle.matmul %a, %w2s : tensor<4x16xf32>, tensor<16x8xf32> -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

shard.grid @mesh(shape = 2x2)

// Batch matmul split on the batch dim over both axes: no collective.
// CHECK-LABEL: func.func @batch_matmul
// CHECK-SAME: tensor<1x8x16xf32> {paddle.sharding = [array<i64: 0, 1>, array<i64>, array<i64>]}
// CHECK-SAME: tensor<1x16x2xf32> {paddle.sharding = [array<i64: 0, 1>, array<i64>, array<i64>]}
// CHECK-NEXT: paddle.matmul {{.*}} -> tensor<1x8x2xf32>
// CHECK-NEXT: return
func.func @batch_matmul(%a: tensor<4x8x16xf32>, %b: tensor<4x16x2xf32>) -> tensor<4x8x2xf32> {
  %s = shard.sharding @mesh split_axes = [[0, 1]] : !shard.sharding
  %a1 = shard.shard %a to %s : tensor<4x8x16xf32>
  %c = paddle.matmul %a1, %b : tensor<4x8x16xf32>, tensor<4x16x2xf32> -> tensor<4x8x2xf32>
  return %c : tensor<4x8x2xf32>
}

// -----

shard.grid @mesh(shape = 2x2)

// Reductions over a split dim: partial results, combined by kind.
// CHECK-LABEL: func.func @reductions
// CHECK-SAME: tensor<4x6xf32> {paddle.sharding = [array<i64: 0>, array<i64>]}
// CHECK: %[[S:.*]] = paddle.reduce_sum {{.*}} : tensor<4x6xf32> -> tensor<6xf32>
// CHECK: shard.all_reduce %[[S]] on @mesh grid_axes = [0] : tensor<6xf32>
// CHECK: %[[M:.*]] = paddle.reduce_max
// CHECK: shard.all_reduce %[[M]] on @mesh grid_axes = [0] reduction = max
// CHECK: %[[A:.*]] = paddle.reduce_mean
// CHECK: shard.all_reduce %[[A]] on @mesh grid_axes = [0] reduction = average
func.func @reductions(%x: tensor<8x6xf32>) -> (tensor<6xf32>, tensor<6xf32>, tensor<6xf32>) {
  %s = shard.sharding @mesh split_axes = [[0]] : !shard.sharding
  %x1 = shard.shard %x to %s : tensor<8x6xf32>
  %a = paddle.reduce_sum %x1 axes = [0] : tensor<8x6xf32> -> tensor<6xf32>
  %b = paddle.reduce_max %x1 axes = [0] : tensor<8x6xf32> -> tensor<6xf32>
  %c = paddle.reduce_mean %x1 axes = [0] : tensor<8x6xf32> -> tensor<6xf32>
  return %a, %b, %c : tensor<6xf32>, tensor<6xf32>, tensor<6xf32>
}

// -----

shard.grid @mesh(shape = 2x2)

// softmax splits the rows; its normalized dim is gathered first.
// CHECK-LABEL: func.func @softmax
// CHECK-SAME: %[[X:.*]]: tensor<2x6xf32> {paddle.sharding = [array<i64: 0, 1>, array<i64>]}
// CHECK-NEXT: paddle.softmax %[[X]] axis = 1 : tensor<2x6xf32> -> tensor<2x6xf32>
// CHECK-LABEL: func.func @softmax_on_split_axis
// CHECK-SAME: %[[X:.*]]: tensor<8x3xf32>
// CHECK-NEXT: %[[G:.*]] = shard.all_gather %[[X]] on @mesh grid_axes = [0] gather_axis = 1 : tensor<8x3xf32> -> tensor<8x6xf32>
// CHECK-NEXT: paddle.softmax %[[G]] axis = 1 : tensor<8x6xf32>
func.func @softmax(%x: tensor<8x6xf32>) -> tensor<8x6xf32> {
  %s = shard.sharding @mesh split_axes = [[0, 1]] : !shard.sharding
  %x1 = shard.shard %x to %s : tensor<8x6xf32>
  %y = paddle.softmax %x1 axis = 1 : tensor<8x6xf32> -> tensor<8x6xf32>
  return %y : tensor<8x6xf32>
}
func.func @softmax_on_split_axis(%x: tensor<8x6xf32>) -> tensor<8x6xf32> {
  %s = shard.sharding @mesh split_axes = [[], [0]] : !shard.sharding
  %x1 = shard.shard %x to %s : tensor<8x6xf32>
  %y = paddle.softmax %x1 axis = 1 : tensor<8x6xf32> -> tensor<8x6xf32>
  return %y : tensor<8x6xf32>
}

// -----

shard.grid @mesh(shape = 2x2)

// layer_norm keeps the normalized dims (and its scale) whole.
// CHECK-LABEL: func.func @layer_norm
// CHECK-SAME: tensor<2x6xf32> {paddle.sharding = [array<i64: 0, 1>, array<i64>]}
// CHECK-SAME: tensor<6xf32> {paddle.sharding = [array<i64>]}
// CHECK-NEXT: paddle.layer_norm {{.*}} : tensor<2x6xf32>, tensor<6xf32> -> tensor<2x6xf32>
func.func @layer_norm(%x: tensor<8x6xf32>, %g: tensor<6xf32>) -> tensor<8x6xf32> {
  %s = shard.sharding @mesh split_axes = [[0, 1]] : !shard.sharding
  %x1 = shard.shard %x to %s : tensor<8x6xf32>
  %y = paddle.layer_norm %x1 scale %g axes = [-1] : tensor<8x6xf32>, tensor<6xf32> -> tensor<8x6xf32>
  return %y : tensor<8x6xf32>
}

// -----

shard.grid @mesh(shape = 2x2)

// conv2d on batch and output channels; max_pool2d on channels.
// CHECK-LABEL: func.func @conv2d
// CHECK-SAME: tensor<1x3x8x8xf32> {paddle.sharding = [array<i64: 0>, array<i64>, array<i64>, array<i64>]}
// CHECK-SAME: tensor<2x3x3x3xf32> {paddle.sharding = [array<i64: 1>, array<i64>, array<i64>, array<i64>]}
// CHECK-SAME: -> (tensor<1x2x6x6xf32> {paddle.sharding = [array<i64: 0>, array<i64: 1>, array<i64>, array<i64>]})
// CHECK-NEXT: paddle.conv2d {{.*}} -> tensor<1x2x6x6xf32>
// CHECK-LABEL: func.func @max_pool2d
// CHECK-SAME: tensor<2x1x8x8xf32>
// CHECK-NEXT: paddle.max_pool2d {{.*}} -> tensor<2x1x4x4xf32>
func.func @conv2d(%x: tensor<2x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<2x4x6x6xf32> {
  %s = shard.sharding @mesh split_axes = [[0]] : !shard.sharding
  %x1 = shard.shard %x to %s : tensor<2x3x8x8xf32>
  %s2 = shard.sharding @mesh split_axes = [[1]] : !shard.sharding
  %w1 = shard.shard %w to %s2 : tensor<4x3x3x3xf32>
  %y = paddle.conv2d %x1, %w1 : tensor<2x3x8x8xf32>, tensor<4x3x3x3xf32> -> tensor<2x4x6x6xf32>
  return %y : tensor<2x4x6x6xf32>
}
func.func @max_pool2d(%x: tensor<2x4x8x8xf32>) -> tensor<2x4x4x4xf32> {
  %s = shard.sharding @mesh split_axes = [[], [0, 1]] : !shard.sharding
  %x1 = shard.shard %x to %s : tensor<2x4x8x8xf32>
  %y = paddle.max_pool2d %x1 {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>} : tensor<2x4x8x8xf32> -> tensor<2x4x4x4xf32>
  return %y : tensor<2x4x4x4xf32>
}

// -----

shard.grid @mesh(shape = 2x2)

// Shape ops: the split follows the dim; attributes that spell a shape
// become the local one.
// CHECK-LABEL: func.func @transpose
// CHECK-SAME: -> (tensor<6x4xf32> {paddle.sharding = [array<i64>, array<i64: 0>]})
// CHECK-LABEL: func.func @broadcast_to
// CHECK-SAME: tensor<1x3xf32> {paddle.sharding = [array<i64>, array<i64: 1>]}
// CHECK-NEXT: paddle.broadcast_to {{.*}} shape = [4, 3] : tensor<1x3xf32> -> tensor<4x3xf32>
// CHECK-LABEL: func.func @slice
// CHECK-NEXT: paddle.slice {{.*}} start = [0, 1] limit = [4, 3] stride = [1, 1] : tensor<4x6xf32> -> tensor<4x2xf32>
// CHECK-LABEL: func.func @concat
// CHECK-NEXT: paddle.concat {{.*}} axis = 1 : tensor<4x6xf32>, tensor<4x2xf32> -> tensor<4x8xf32>
// CHECK-LABEL: func.func @pad
// CHECK-NEXT: paddle.pad {{.*}} : tensor<4x6xf32> -> tensor<4x8xf32>
// CHECK-LABEL: func.func @reshape_heads
// CHECK-SAME: tensor<2x4x4xf32> {paddle.sharding = [array<i64>, array<i64>, array<i64: 1>]}
// CHECK-NEXT: paddle.reshape {{.*}} shape = [2, 4, 1, 4] : tensor<2x4x4xf32> -> tensor<2x4x1x4xf32>
func.func @transpose(%x: tensor<8x6xf32>) -> tensor<6x8xf32> {
  %s = shard.sharding @mesh split_axes = [[0]] : !shard.sharding
  %x1 = shard.shard %x to %s : tensor<8x6xf32>
  %y = paddle.transpose %x1 perm = [1, 0] : tensor<8x6xf32> -> tensor<6x8xf32>
  return %y : tensor<6x8xf32>
}
func.func @broadcast_to(%x: tensor<1x6xf32>) -> tensor<8x6xf32> {
  %y = paddle.broadcast_to %x shape = [8, 6] : tensor<1x6xf32> -> tensor<8x6xf32>
  %s = shard.sharding @mesh split_axes = [[0], [1]] : !shard.sharding
  %y1 = shard.shard %y to %s annotate_for_users : tensor<8x6xf32>
  return %y1 : tensor<8x6xf32>
}
func.func @slice(%x: tensor<8x6xf32>) -> tensor<8x2xf32> {
  %s = shard.sharding @mesh split_axes = [[0]] : !shard.sharding
  %x1 = shard.shard %x to %s : tensor<8x6xf32>
  %y = paddle.slice %x1 start = [0, 1] limit = [8, 3] stride = [1, 1] : tensor<8x6xf32> -> tensor<8x2xf32>
  return %y : tensor<8x2xf32>
}
func.func @concat(%x: tensor<8x6xf32>, %z: tensor<8x2xf32>) -> tensor<8x8xf32> {
  %s = shard.sharding @mesh split_axes = [[0]] : !shard.sharding
  %x1 = shard.shard %x to %s : tensor<8x6xf32>
  %y = paddle.concat %x1, %z axis = 1 : tensor<8x6xf32>, tensor<8x2xf32> -> tensor<8x8xf32>
  return %y : tensor<8x8xf32>
}
func.func @pad(%x: tensor<8x6xf32>) -> tensor<8x8xf32> {
  %s = shard.sharding @mesh split_axes = [[0]] : !shard.sharding
  %x1 = shard.shard %x to %s : tensor<8x6xf32>
  %y = paddle.pad %x1 low = [0, 1] high = [0, 1] value = 0.0 : f32 : tensor<8x6xf32> -> tensor<8x8xf32>
  return %y : tensor<8x8xf32>
}
func.func @reshape_heads(%x: tensor<2x4x8xf32>) -> tensor<2x4x2x4xf32> {
  %s = shard.sharding @mesh split_axes = [[], [], [1]] : !shard.sharding
  %x1 = shard.shard %x to %s : tensor<2x4x8xf32>
  %y = paddle.reshape %x1 shape = [2, 4, 2, 4] : tensor<2x4x8xf32> -> tensor<2x4x2x4xf32>
  return %y : tensor<2x4x2x4xf32>
}

// -----

shard.grid @mesh(shape = 2x2)

// Vocabulary-parallel embedding: each device gathers the rows it holds,
// zeros the others, and an all_reduce adds them.
// CHECK-LABEL: func.func @embedding
// CHECK-SAME: %[[T:.*]]: tensor<5x4xf32> {paddle.sharding = [array<i64: 1>, array<i64>]}
// CHECK-SAME: %[[I:.*]]: tensor<3xi64>
// Negative indices count from the end of the whole table; one outside it
// stays out of every device's range, for the local check to report.
// CHECK: %[[IDX:.*]] = shard.process_multi_index on @mesh axes = [1] : index
// CHECK: %[[LOCAL:.*]] = paddle.sub
// CHECK: %[[MINE:.*]] = paddle.and
// CHECK: %[[KEEP:.*]] = paddle.or %[[MINE]]
// CHECK: %[[SAFE:.*]] = paddle.select %[[KEEP]], %[[LOCAL]]
// CHECK: %[[G:.*]] = paddle.gather %[[T]], %[[SAFE]] axis = 0 : tensor<5x4xf32>, tensor<3xi64> -> tensor<3x4xf32>
// CHECK: %[[MASK:.*]] = paddle.reshape %[[MINE]] shape = [3, 1]
// CHECK: %[[Z:.*]] = paddle.select %[[MASK]], %[[G]]
// CHECK: shard.all_reduce %[[Z]] on @mesh grid_axes = [1] : tensor<3x4xf32>
func.func @embedding(%t: tensor<10x4xf32>, %i: tensor<3xi64>) -> tensor<3x4xf32> {
  %s = shard.sharding @mesh split_axes = [[1]] : !shard.sharding
  %t1 = shard.shard %t to %s : tensor<10x4xf32>
  %y = paddle.gather %t1, %i axis = 0 : tensor<10x4xf32>, tensor<3xi64> -> tensor<3x4xf32>
  return %y : tensor<3x4xf32>
}

// -----

shard.grid @mesh(shape = 2x2)

// Constants are made whole on every device and sliced where a user wants
// a part.
// CHECK-LABEL: func.func @constant
// CHECK-SAME: -> (tensor<2x2xf32> {paddle.sharding = [array<i64: 0>, array<i64>]})
// CHECK: %[[C:.*]] = paddle.constant dense<1.000000e+00> : tensor<4x2xf32>
// CHECK: shard.all_slice %[[C]] on @mesh grid_axes = [0] slice_axis = 0 : tensor<4x2xf32> -> tensor<2x2xf32>
func.func @constant() -> tensor<4x2xf32> {
  %c = paddle.constant dense<1.0> : tensor<4x2xf32>
  %s = shard.sharding @mesh split_axes = [[0]] : !shard.sharding
  %c1 = shard.shard %c to %s annotate_for_users : tensor<4x2xf32>
  return %c1 : tensor<4x2xf32>
}

// -----

shard.grid @mesh(shape = 2x2)

// Vocabulary-parallel scatter_add (an embedding's gradient): each device
// adds the updates of the rows it holds (others zeroed); no collective.
// CHECK-LABEL: func.func @embedding_grad
// CHECK-SAME: tensor<5x4xf32> {paddle.sharding = [array<i64: 1>, array<i64>]}
// CHECK: %[[MINE:.*]] = paddle.and
// CHECK: %[[MASK:.*]] = paddle.reshape %[[MINE]] shape = [3, 1]
// CHECK: %[[U:.*]] = paddle.select %[[MASK]]
// CHECK: paddle.scatter_add %{{.*}}, %{{.*}}, %[[U]] axis = 0 : tensor<5x4xf32>, tensor<3xi64>, tensor<3x4xf32> -> tensor<5x4xf32>
// CHECK-NOT: shard.all_reduce
// CHECK: return
func.func @embedding_grad(%t: tensor<10x4xf32>, %i: tensor<3xi64>, %u: tensor<3x4xf32>) -> tensor<10x4xf32> {
  %s = shard.sharding @mesh split_axes = [[1]] : !shard.sharding
  %t1 = shard.shard %t to %s : tensor<10x4xf32>
  %y = paddle.scatter_add %t1, %i, %u axis = 0 : tensor<10x4xf32>, tensor<3xi64>, tensor<3x4xf32> -> tensor<10x4xf32>
  %r = shard.shard %y to %s annotate_for_users : tensor<10x4xf32>
  return %r : tensor<10x4xf32>
}

// Updates split along the indices (data parallel): each device scatters
// its share into a partial table, x counted on the first device of the
// group only, and an all_reduce adds the partials.
// CHECK-LABEL: func.func @scatter_partial
// CHECK: shard.process_multi_index on @mesh axes = [0] : index
// CHECK: %[[FIRST:.*]] = arith.cmpi eq
// CHECK: %[[X:.*]] = paddle.select
// CHECK: %[[S:.*]] = paddle.scatter_add %[[X]], %{{.*}}, %{{.*}} axis = 0 : tensor<10x4xf32>, tensor<2xi64>, tensor<2x4xf32> -> tensor<10x4xf32>
// CHECK: shard.all_reduce %[[S]] on @mesh grid_axes = [0] : tensor<10x4xf32>
func.func @scatter_partial(%t: tensor<10x4xf32>, %i: tensor<4xi64>, %u: tensor<4x4xf32>) -> tensor<10x4xf32> {
  %s = shard.sharding @mesh split_axes = [[0]] : !shard.sharding
  %i1 = shard.shard %i to %s : tensor<4xi64>
  %u1 = shard.shard %u to %s : tensor<4x4xf32>
  %y = paddle.scatter_add %t, %i1, %u1 axis = 0 : tensor<10x4xf32>, tensor<4xi64>, tensor<4x4xf32> -> tensor<10x4xf32>
  return %y : tensor<10x4xf32>
}

// -----

shard.grid @mesh(shape = 2x2)

// A split rng_uniform draws this device's block of the whole tensor's
// numbers (rows at 4 x its index along axis 0, columns at 3 x along 1).
// CHECK-LABEL: func.func @rng
// CHECK-DAG: %[[C4:.*]] = arith.constant 4 : index
// CHECK-DAG: %[[C3:.*]] = arith.constant 3 : index
// CHECK: %[[I0:.*]] = shard.process_multi_index on @mesh axes = [0] : index
// CHECK: %[[R0:.*]] = arith.muli %[[I0]], %[[C4]]
// CHECK: %[[I1:.*]] = shard.process_multi_index on @mesh axes = [1] : index
// CHECK: %[[R1:.*]] = arith.muli %[[I1]], %[[C3]]
// CHECK: paddle.rng_uniform_block %{{.*}}[%[[R0]], %[[R1]]] of [8, 6] {high = 2.000000e+00 : f64} : tensor<i64> -> tensor<4x3xf32>
// CHECK-NOT: paddle.rng_uniform %
func.func @rng(%seed: tensor<i64>) -> tensor<8x6xf32> {
  %r = paddle.rng_uniform %seed {high = 2.0} : tensor<i64> -> tensor<8x6xf32>
  %s = shard.sharding @mesh split_axes = [[0], [1]] : !shard.sharding
  %y = shard.shard %r to %s annotate_for_users : tensor<8x6xf32>
  return %y : tensor<8x6xf32>
}
