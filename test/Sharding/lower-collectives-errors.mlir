// RUN: paddle-opt %s --paddle-lower-collectives --verify-diagnostics

shard.grid @mesh(shape = 2)

func.func @broadcast(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'shard.broadcast' op has no lowering to the runtime yet}}
  %0 = shard.broadcast %x on @mesh grid_axes = [0] root = [0] : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
