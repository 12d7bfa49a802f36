// RUN: paddle-opt %s --split-input-file --paddle-set-target="device=h200" --paddle-auto-shard="mesh=1x4 gather-results=false" | FileCheck %s
// RUN: paddle-opt %s --split-input-file --paddle-set-target="device=h200" --paddle-auto-shard="mesh=1x4 gather-results=false" --paddle-spmd-pipeline | FileCheck %s --check-prefix=SPMD

// Edge cases of the search: a mesh axis of size 1 (never split over), a
// function of one op, a function with no tensors.

// One op, a 1x4 mesh: axis 0 has one device and splits nothing; the batch
// goes over axis 1 (63 columns do not split in 4).
// CHECK: shard.grid @mesh(shape = 1x4)
// CHECK-LABEL: func.func @one_op
// CHECK-SAME: paddle.plan
// CHECK: shard.sharding @mesh split_axes = {{\[\[1\]\]}}
// CHECK-NOT: {{\[\[0}}
// SPMD-LABEL: func.func @one_op
// SPMD-SAME: tensor<256x63xf32>
func.func @one_op(%x: tensor<1024x63xf32>) -> tensor<1024x63xf32> {
  %r = paddle.exp %x : tensor<1024x63xf32> -> tensor<1024x63xf32>
  return %r : tensor<1024x63xf32>
}

// -----

// Nothing to split: scalars only.
// CHECK-LABEL: func.func @scalars
// CHECK-NOT: shard.shard
func.func @scalars(%x: tensor<f32>) -> tensor<f32> {
  %r = paddle.exp %x : tensor<f32> -> tensor<f32>
  return %r : tensor<f32>
}
