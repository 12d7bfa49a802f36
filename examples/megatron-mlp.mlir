// A Megatron MLP on a 2x2 mesh (axis 0: data, axis 1: model).
shard.grid @mesh(shape = 2x2)
func.func @mlp(%x: tensor<8x8xf32>, %w1: tensor<8x16xf32>, %w2: tensor<16x8xf32>) -> tensor<8x8xf32> {
  %d = shard.sharding @mesh split_axes = [[0]] : !shard.sharding
  %col = shard.sharding @mesh split_axes = [[], [1]] : !shard.sharding
  %row = shard.sharding @mesh split_axes = [[1]] : !shard.sharding
  %xs = shard.shard %x to %d : tensor<8x8xf32>
  %w1s = shard.shard %w1 to %col : tensor<8x16xf32>
  %w2s = shard.shard %w2 to %row : tensor<16x8xf32>
  %h = paddle.matmul %xs, %w1s : tensor<8x8xf32>, tensor<8x16xf32> -> tensor<8x16xf32>
  %g = paddle.gelu %h : tensor<8x16xf32> -> tensor<8x16xf32>
  %y = paddle.matmul %g, %w2s : tensor<8x16xf32>, tensor<16x8xf32> -> tensor<8x8xf32>
  %r = shard.shard %y to %d annotate_for_users : tensor<8x8xf32>
  return %r : tensor<8x8xf32>
}
