// RUN: paddle-opt %s --paddle-set-target="device=h200" --paddle-sharding-report="json=%t.json" -o %t.mlir | FileCheck %s
// RUN: FileCheck %s --check-prefix=JSON < %t.json
// RUN: not paddle-opt %s --paddle-sharding-report="json=%t.missing/r.json" -o %t.mlir 2>&1 | FileCheck %s --check-prefix=ERR

// How a Megatron MLP on a 2x2 mesh is split, and the one all_reduce it
// needs, priced over h200's link (4 x 8 f32 = 128 B over 2 devices:
// 2 alpha + 128 / 450e9 s = 4.000 us).

shard.grid @mesh(shape = 2x2)

// CHECK: func @mlp on mesh [2, 2]
// CHECK-NEXT: argument 0 tensor<4x8xf32> split {{\[\[\], \[\]\]}} per device tensor<4x8xf32>
// CHECK-NEXT: argument 1 tensor<8x16xf32> split {{\[\[\], \[1\]\]}} per device tensor<8x8xf32>
// CHECK-NEXT: argument 2 tensor<16x8xf32> split {{\[\[1\], \[\]\]}} per device tensor<8x8xf32>
// CHECK-NEXT: result 0 tensor<4x8xf32> split {{\[\[\], \[\]\]}} per device tensor<4x8xf32>
// CHECK-NEXT: 1 collective:
// CHECK-NEXT: all_reduce axes [1] 128 B {{.*}}sharding-report.mlir:[[@LINE+13]]:{{[0-9]+}} 4.000 us
// CHECK-NEXT: predicted collective time on h200: 4.000 us
// JSON: "collectives": [
// JSON: "axes": "[1]",
// JSON-NEXT: "bytes": 128,
// JSON-NEXT: "kind": "all_reduce",
// ERR: cannot write the sharding report to
func.func @mlp(%x: tensor<4x8xf32>, %w1: tensor<8x16xf32>, %w2: tensor<16x8xf32>) -> tensor<4x8xf32> {
  %col = shard.sharding @mesh split_axes = [[], [1]] : !shard.sharding
  %row = shard.sharding @mesh split_axes = [[1]] : !shard.sharding
  %w1s = shard.shard %w1 to %col : tensor<8x16xf32>
  %w2s = shard.shard %w2 to %row : tensor<16x8xf32>
  %h = paddle.matmul %x, %w1s : tensor<4x8xf32>, tensor<8x16xf32> -> tensor<4x16xf32>
  %y = paddle.matmul %h, %w2s : tensor<4x16xf32>, tensor<16x8xf32> -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}
