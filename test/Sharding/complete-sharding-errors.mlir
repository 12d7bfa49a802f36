// RUN: paddle-opt %s --paddle-spmd-pipeline --split-input-file --verify-diagnostics

// What paddle-complete-sharding rejects, each with the op and the reason.

shard.grid @mesh(shape = 4)
func.func @uneven(%x: tensor<6x4xf32>) -> tensor<6x4xf32> {
  %s = shard.sharding @mesh split_axes = [[0]] : !shard.sharding
  // expected-error @+1 {{splits dim 0 of size 6 over mesh axes [0] (4 devices): the size is not a multiple of the device count}}
  %a = shard.shard %x to %s : tensor<6x4xf32>
  %r = paddle.exp %a : tensor<6x4xf32> -> tensor<6x4xf32>
  return %r : tensor<6x4xf32>
}

// -----

shard.grid @mesh(shape = 4)
func.func @unknown_axis(%x: tensor<8x4xf32>) -> tensor<8x4xf32> {
  %s = shard.sharding @mesh split_axes = [[1]] : !shard.sharding
  // expected-error @+1 {{splits dim 0 over mesh axis 1, but @mesh has 1 axis}}
  %a = shard.shard %x to %s : tensor<8x4xf32>
  %r = paddle.exp %a : tensor<8x4xf32> -> tensor<8x4xf32>
  return %r : tensor<8x4xf32>
}

// -----

shard.grid @mesh(shape = 4)
shard.grid @other(shape = 2)
func.func @two_meshes(%x: tensor<8x4xf32>) -> tensor<8x4xf32> {
  %s = shard.sharding @mesh split_axes = [[0]] : !shard.sharding
  %a = shard.shard %x to %s : tensor<8x4xf32>
  // expected-error @+1 {{uses mesh @other where the function already uses @mesh: a function runs on one mesh}}
  %t = shard.sharding @other split_axes = [[0]] : !shard.sharding
  %b = shard.shard %a to %t annotate_for_users : tensor<8x4xf32>
  %r = paddle.exp %b : tensor<8x4xf32> -> tensor<8x4xf32>
  return %r : tensor<8x4xf32>
}

// -----

shard.grid @mesh(shape = 4)
func.func @halo(%x: tensor<8x4xf32>) -> tensor<8x4xf32> {
  %s = shard.sharding @mesh split_axes = [[0]] halo_sizes = [1, 1] : !shard.sharding
  // expected-error @+1 {{has halos or explicit shard offsets; only even splits are supported}}
  %a = shard.shard %x to %s : tensor<8x4xf32>
  %r = paddle.exp %a : tensor<8x4xf32> -> tensor<8x4xf32>
  return %r : tensor<8x4xf32>
}

// -----

// expected-error @+1 {{has a dynamic shape: the mesh size must be known when compiling}}
shard.grid @mesh(shape = ?)
func.func @dynamic_mesh(%x: tensor<8x4xf32>) -> tensor<8x4xf32> {
  %s = shard.sharding @mesh split_axes = [[0]] : !shard.sharding
  %a = shard.shard %x to %s : tensor<8x4xf32>
  %r = paddle.exp %a : tensor<8x4xf32> -> tensor<8x4xf32>
  return %r : tensor<8x4xf32>
}
