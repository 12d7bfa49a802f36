// RUN: paddle-opt %s --paddle-set-target=device=%S/Inputs/round-numbers-onednn.json --paddle-cost-report -o /dev/null | FileCheck %s
// RUN: paddle-opt %s --paddle-set-target=device=h200 --paddle-cost-report -o /dev/null | FileCheck %s --check-prefix=GPU

// With a oneDNN path in the spec, each f32 matmul and conv2d gets both
// predicted times (docs/onednn.md, "Choosing"). 1 FLOP = 1 byte = 1 ns.
// GPU-NOT: library choice

// 65536 FLOPs, 14336 bytes, n = 16 (tiled): oneDNN 1 + 10 + 131.072 us,
// ours 1 + 131.072 us.
// CHECK-LABEL: func @matmul
// CHECK: paddle.matmul 65536 14336 66.536 compute
// CHECK-NEXT: library choice: onednn 142.072 us, codegen (tiled) 132.072 us -> codegen
func.func @matmul(%a: tensor<64x32xf32>, %b: tensor<32x16xf32>) -> tensor<64x16xf32> {
  %0 = paddle.matmul %a, %b : tensor<64x32xf32>, tensor<32x16xf32> -> tensor<64x16xf32>
  return %0 : tensor<64x16xf32>
}

// A broadcast batch lowers to a generic contraction: scalar loops, 1 +
// 655.36 us; oneDNN 1 + 10 + 131.072 us.
// CHECK-LABEL: func @matmul_broadcast
// CHECK-NEXT: location
// CHECK-NEXT: paddle.matmul
// CHECK-NEXT: library choice: onednn 142.072 us, codegen (scalar) 656.360 us -> onednn
func.func @matmul_broadcast(%a: tensor<1x64x32xf32>, %b: tensor<32x16xf32>) -> tensor<1x64x16xf32> {
  %0 = paddle.matmul %a, %b : tensor<1x64x32xf32>, tensor<32x16xf32> -> tensor<1x64x16xf32>
  return %0 : tensor<1x64x16xf32>
}

// 7776 FLOPs, 1776 bytes. oneDNN reorders input (768 B) and output (576 B)
// each call, and the weights (432 B) unless constant, each read and
// written: 1 + 10 + 15.552 + 3.552 us (2.688 us with constant weights);
// scalar loops 1 + 77.76 us.
// CHECK-LABEL: func @conv
// CHECK: paddle.conv2d 7776 1776 8.776 compute
// CHECK-NEXT: library choice: onednn 30.104 us, codegen (scalar) 78.760 us -> onednn
// CHECK-LABEL: func @conv_constant_weights
// CHECK: paddle.conv2d
// CHECK-NEXT: library choice: onednn 29.240 us, codegen (scalar) 78.760 us -> onednn
func.func @conv(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32> {
  %0 = paddle.conv2d %x, %w : tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32> -> tensor<1x4x6x6xf32>
  return %0 : tensor<1x4x6x6xf32>
}
func.func @conv_constant_weights(%x: tensor<1x3x8x8xf32>) -> tensor<1x4x6x6xf32> {
  %w = paddle.constant dense<0.5> : tensor<4x3x3x3xf32>
  %0 = paddle.conv2d %x, %w : tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32> -> tensor<1x4x6x6xf32>
  return %0 : tensor<1x4x6x6xf32>
}

// bf16 inputs (what --precision bf16 makes): oneDNN at the bf16 peak, 1 +
// 10 + 65536 / (4e9 x 0.5) = 43.768 us; our code extends bf16 in software,
// at the tiled efficiency over 2.5: 1 + 65536 / (1e9 x 0.2) = 328.68 us.
// 9216 bytes: the inputs at 2 bytes an element.
// CHECK-LABEL: func @matmul_bf16
// CHECK: paddle.matmul 65536 9216
// CHECK-NEXT: library choice: onednn 43.768 us, codegen (tiled) 328.680 us -> onednn
func.func @matmul_bf16(%a: tensor<64x32xbf16>, %b: tensor<32x16xbf16>) -> tensor<64x16xf32> {
  %0 = paddle.matmul %a, %b : tensor<64x32xbf16>, tensor<32x16xbf16> -> tensor<64x16xf32>
  return %0 : tensor<64x16xf32>
}
