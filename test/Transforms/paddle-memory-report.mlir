// RUN: paddle-opt %s --paddle-memory-report="json=%t.json" -o /dev/null | FileCheck %s
// RUN: FileCheck %s --check-prefix=JSON < %t.json

// A static MLP layer stack: the hidden activations are planned, the result
// is returned and stays a malloc.

// CHECK: function {{ *}}naive B {{ *}}planned B {{ *}}lower bd B {{ *}}pl/lb {{ *}}nv/pl {{ *}}planned {{ *}}in-place {{ *}}unplanned
// CHECK-NEXT: @mlp {{ *}}[[NAIVE:[0-9]+]] {{ *}}[[PLANNED:[0-9]+]] {{ *}}[[PLANNED]] {{ *}}1.000 {{ *}}{{[0-9.]+}} {{ *}}[[N:[1-9][0-9]*]] {{ *}}{{[0-9]+}} {{ *}}1
// CHECK-NEXT: @no_temporaries {{ *}}0 {{ *}}0 {{ *}}0 {{ *}}- {{ *}}- {{ *}}0 {{ *}}0 {{ *}}1
// CHECK-NEXT: unplanned buffers (kept as malloc):
// CHECK-NEXT: @mlp: memref<8x10xf32> at loc({{.*}}paddle-memory-report.mlir":{{[0-9]+}}:8): returned
// CHECK-NEXT: @no_temporaries: memref<8x16xf32> at {{.*}}: returned

// JSON: "alignment": 64,
// JSON: "functions": [
// JSON: "buffers": [
// JSON: "first":
// JSON: "id": 0,
// JSON: "last":
// JSON: "offset": 0,
// JSON: "size": 4096,
// JSON: "type": "memref<8x128xf32>",
// JSON: "writer": "linalg.fill at
// JSON: "name": "mlp",
// JSON: "positions":
// JSON: "unplanned": [
// JSON: "reason": "returned",
// JSON: "name": "no_temporaries",
func.func @mlp(%x: tensor<8x64xf32>, %w1: tensor<64x128xf32>, %b1: tensor<128xf32>,
               %w2: tensor<128x10xf32>, %b2: tensor<10xf32>) -> tensor<8x10xf32> {
  %h = paddle.matmul %x, %w1 : tensor<8x64xf32>, tensor<64x128xf32> -> tensor<8x128xf32>
  %hb = paddle.add %h, %b1 : tensor<8x128xf32>, tensor<128xf32> -> tensor<8x128xf32>
  %a = paddle.relu %hb : tensor<8x128xf32> -> tensor<8x128xf32>
  %l = paddle.matmul %a, %w2 : tensor<8x128xf32>, tensor<128x10xf32> -> tensor<8x10xf32>
  %lb = paddle.add %l, %b2 : tensor<8x10xf32>, tensor<10xf32> -> tensor<8x10xf32>
  return %lb : tensor<8x10xf32>
}

func.func @no_temporaries(%x: tensor<8x16xf32>) -> tensor<8x16xf32> {
  %y = paddle.exp %x : tensor<8x16xf32> -> tensor<8x16xf32>
  return %y : tensor<8x16xf32>
}
