// RUN: paddle-opt %s --paddle-set-target=device=%S/Inputs/round-numbers.json --paddle-cost-report -o /dev/null | FileCheck %s
// RUN: paddle-opt %s --paddle-set-target=device=%S/Inputs/round-numbers.json --paddle-cost-report=dynamic-dim-size=4 -o /dev/null | FileCheck %s --check-prefix=HINT
// RUN: paddle-opt %s --paddle-set-target=device=h200 --paddle-cost-report -o /dev/null | FileCheck %s --check-prefix=H200

// The spec charges 1 ns per FLOP and per byte and 1 us per kernel, so an
// op's time in us is max(FLOPs, bytes) / 1000 + 1.

// CHECK: cost report: device round-numbers (cpu, 1 cores, f32 peak 1e+09 FLOP/s, memory 1e+09 B/s, call overhead 1 us)
// H200: cost report: device h200 (gpu, 132 cores, f32 peak 6.7e+13 FLOP/s, memory 4.8e+12 B/s, call overhead 5 us)

// 2 * 64 * 16 * 32 = 65536 FLOPs; (64*32 + 32*16 + 64*16) * 4 = 14336 bytes.
// CHECK-LABEL: func @matmul
// CHECK-NEXT: location
// CHECK-NEXT: paddle-cost-report.mlir:[[# @LINE + 3]]:8 paddle.matmul 65536 14336 66.536 compute
// CHECK-NEXT: total @matmul: 65536 FLOPs, 14336 bytes, 66.536 us (1 ops)
func.func @matmul(%a: tensor<64x32xf32>, %b: tensor<32x16xf32>) -> tensor<64x16xf32> {
  %0 = paddle.matmul %a, %b : tensor<64x32xf32>, tensor<32x16xf32> -> tensor<64x16xf32>
  return %0 : tensor<64x16xf32>
}

// add: 1024 FLOPs, 3 * 4096 bytes -> 13.288 us, memory-bound;
// exp: 10 FLOPs per element = 10240 FLOPs, 8192 bytes -> 11.240 us, compute;
// mul: as add. Total 12288 FLOPs, 32768 bytes, 37.816 us.
// CHECK-LABEL: func @chain
// CHECK: paddle.add 1024 12288 13.288 memory
// CHECK-NEXT: paddle.exp 10240 8192 11.240 compute
// CHECK-NEXT: paddle.mul 1024 12288 13.288 memory
// CHECK-NEXT: total @chain: 12288 FLOPs, 32768 bytes, 37.816 us (3 ops)
func.func @chain(%x: tensor<1024xf32>, %y: tensor<1024xf32>) -> tensor<1024xf32> {
  %0 = paddle.add %x, %y : tensor<1024xf32>, tensor<1024xf32> -> tensor<1024xf32>
  %1 = paddle.exp %0 : tensor<1024xf32> -> tensor<1024xf32>
  %2 = paddle.mul %1, %y : tensor<1024xf32>, tensor<1024xf32> -> tensor<1024xf32>
  return %2 : tensor<1024xf32>
}

// Output 1x4x6x6 = 144 elements, each 3 * 3 * 3 = 27 MACs: 7776 FLOPs;
// (192 + 108 + 144) * 4 = 1776 bytes -> 8.776 us.
// CHECK-LABEL: func @conv
// CHECK: paddle.conv2d 7776 1776 8.776 compute
func.func @conv(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32> {
  %0 = paddle.conv2d %x, %w : tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32> -> tensor<1x4x6x6xf32>
  return %0 : tensor<1x4x6x6xf32>
}

// 8192 adds; (8192 + 64) * 4 = 33024 bytes -> 34.024 us. The reshape is a
// view: no bytes, no kernel, no time.
// CHECK-LABEL: func @reduce
// CHECK: paddle.reduce_sum 8192 33024 34.024 memory
// CHECK-NEXT: paddle.reshape 0 0 0.000 overhead
// CHECK-NEXT: total @reduce: 8192 FLOPs, 33024 bytes, 34.024 us (2 ops)
func.func @reduce(%x: tensor<64x128xf32>) -> tensor<8x8xf32> {
  %0 = paddle.reduce_sum %x axes = [1] : tensor<64x128xf32> -> tensor<64xf32>
  %1 = paddle.reshape %0 shape = [8, 8] : tensor<64xf32> -> tensor<8x8xf32>
  return %1 : tensor<8x8xf32>
}

// Without a size hint a dynamic dim makes the cost unknown; with ? = 4:
// 4 * 8 elements, 32 FLOPs, 3 * 128 bytes -> 1.384 us.
// CHECK-LABEL: func @dynamic
// CHECK: paddle.add unknown: tensor<?x8xf32> has a dynamic dim and no size hint was given (dynamic-dim-size=N)
// CHECK-NEXT: total @dynamic: 0 FLOPs, 0 bytes, 0.000 us (1 ops, 1 unknown, not in the total)
// HINT-LABEL: func @dynamic
// HINT: paddle.add 32 384 1.384 memory
// HINT-NEXT: total @dynamic: 32 FLOPs, 384 bytes, 1.384 us (1 ops)
func.func @dynamic(%x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %0 = paddle.add %x, %x : tensor<?x8xf32>, tensor<?x8xf32> -> tensor<?x8xf32>
  return %0 : tensor<?x8xf32>
}
