// RUN: paddle-opt %s --split-input-file --paddle-auto-shard="cluster=h200-8x1 memory-limit=80MB gather-results=false" | FileCheck %s
// RUN: paddle-opt %s --split-input-file --paddle-auto-shard="cluster=h200-8x1 memory-limit=80MB gather-results=false" --paddle-spmd-pipeline | FileCheck %s --check-prefix=SPMD
// The planned module prints as text that parses again:
// RUN: paddle-opt %s --split-input-file --paddle-auto-shard="cluster=h200-8x1 memory-limit=80MB gather-results=false" -o %t.mlir
// RUN: paddle-opt %t.mlir --split-input-file --paddle-spmd-pipeline | FileCheck %s --check-prefix=SPMD

// RUN: paddle-opt %s --split-input-file --paddle-auto-shard="cluster=h200-8x1 memory-limit=80MB" | FileCheck %s --check-prefix=GATHER

// Plans chosen by the cost model on a node of 8 H200 (NVLink), with 80 MB
// per device, for results that stay on their devices (gather-results=false),
// and, checked with the prefix GATHER, returned whole by the runtime.

// A Megatron MLP: the two 64 MiB weights do not fit replicated, so the
// plan splits the first by columns and the second by rows; the one
// all-reduce is of the 4 MiB output, cheaper than an all-gather of the
// 64 MiB hidden activation or of either weight.
// CHECK-LABEL: func.func @mlp
// CHECK-SAME: paddle.plan = {{{.*}}decisions = [{alternative = "operand 0 {{\[\[0\], \[\]\]}}, operand 1 {{\[\[\], \[\]\]}}, result 0 {{\[\[0\], \[\]\]}}", {{.*}}op = "paddle.matmul", rejected_for = "time: {{.*}} us more"}]{{.*}}status = "optimal"
// CHECK-NEXT: %[[R:.*]] = shard.sharding @mesh split_axes = {{\[\[\]\]}}
// CHECK-NEXT: shard.shard %arg0 to %[[R]]
// CHECK-NEXT: %[[COL:.*]] = shard.sharding @mesh split_axes = {{\[\[\], \[0\]\]}}
// CHECK-NEXT: shard.shard %arg1 to %[[COL]]
// CHECK-NEXT: %[[ROW:.*]] = shard.sharding @mesh split_axes = {{\[\[0\]\]}}
// CHECK-NEXT: shard.shard %arg2 to %[[ROW]]
// SPMD-LABEL: func.func @mlp
// SPMD-SAME: tensor<1024x2048xf32>
// SPMD-SAME: tensor<2048x1024xf32>
// SPMD-COUNT-1: call @paddle_spmd_all_reduce_f32
// SPMD-NOT: call @paddle_spmd_all
// SPMD: return
func.func @mlp(%x: tensor<1024x1024xf32>, %w1: tensor<1024x16384xf32>, %w2: tensor<16384x1024xf32>) -> tensor<1024x1024xf32> {
  %h = paddle.matmul %x, %w1 : tensor<1024x1024xf32>, tensor<1024x16384xf32> -> tensor<1024x16384xf32>
  %g = paddle.gelu %h : tensor<1024x16384xf32> -> tensor<1024x16384xf32>
  %y = paddle.matmul %g, %w2 : tensor<1024x16384xf32>, tensor<16384x1024xf32> -> tensor<1024x1024xf32>
  return %y : tensor<1024x1024xf32>
}

// -----

// Data parallel: a large batch and a small weight. Splitting the batch
// over all 8 devices needs no communication at all. Returned whole, the
// result's 8 MiB gather (7 steps of 2 us plus 16 us) costs more than the
// 21 us of compute the split saves, so that plan keeps everything whole.
// GATHER-LABEL: func.func @wide_batch
// GATHER-NEXT: %[[W:.*]] = shard.sharding @mesh split_axes = {{\[\[\]\]}}
// GATHER-NEXT: shard.shard %arg0 to %[[W]]
// CHECK-LABEL: func.func @wide_batch
// CHECK-NEXT: %[[B:.*]] = shard.sharding @mesh split_axes = {{\[\[0\]\]}}
// CHECK-NEXT: shard.shard %arg0 to %[[B]]
// CHECK-NEXT: %[[R:.*]] = shard.sharding @mesh split_axes = {{\[\[\]\]}}
// CHECK-NEXT: shard.shard %arg1 to %[[R]]
// SPMD-LABEL: func.func @wide_batch
// SPMD-SAME: tensor<1024x256xf32>
// SPMD-NOT: call @paddle_spmd
// SPMD: return
func.func @wide_batch(%x: tensor<8192x256xf32>, %w: tensor<256x256xf32>) -> tensor<8192x256xf32> {
  %h = paddle.matmul %x, %w : tensor<8192x256xf32>, tensor<256x256xf32> -> tensor<8192x256xf32>
  %r = paddle.relu %h : tensor<8192x256xf32> -> tensor<8192x256xf32>
  return %r : tensor<8192x256xf32>
}
