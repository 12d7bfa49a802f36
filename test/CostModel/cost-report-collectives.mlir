// RUN: paddle-opt %s --paddle-set-target="device=h200" --paddle-cost-report -o %t | FileCheck %s

// The collectives of a partitioned function, priced by the alpha-beta model
// over the spec's link (h200: 450 GB/s per direction, 2 us per message):
// a ring all_reduce of 4 MiB on 4 devices takes 2 (n-1) alpha + 2 (n-1)/n
// bytes / beta = 12 us + 13.98 us; an all_gather of the 16 MiB result
// 3 alpha + 3/4 bytes / beta = 6 us + 27.96 us.

shard.grid @mesh(shape = 4)

// CHECK-LABEL: func @step
// CHECK: shard.all_reduce 0 4194304 25.981 link
// CHECK: shard.all_gather 0 16777216 33.962 link
// CHECK: total @step: 0 FLOPs, 20971520 bytes, 59.943 us (2 ops)
func.func @step(%x: tensor<1048576xf32>) -> tensor<4194304xf32> {
  %0 = shard.all_reduce %x on @mesh grid_axes = [0] : tensor<1048576xf32> -> tensor<1048576xf32>
  %1 = shard.all_gather %0 on @mesh grid_axes = [0] gather_axis = 0 : tensor<1048576xf32> -> tensor<4194304xf32>
  return %1 : tensor<4194304xf32>
}
