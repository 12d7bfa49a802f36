// RUN: paddle-opt %s --paddle-cpu-pipeline --mlir-print-ir-after=paddle-fuse -o /dev/null 2>&1 | FileCheck %s
// RUN: paddle-opt %s --paddle-cpu-pipeline=library=onednn --mlir-print-ir-after=paddle-use-onednn -o /dev/null 2>&1 | grep -c "call @paddle_onednn_matmul" | FileCheck %s --check-prefix=CALLS

// A traced training step computes its forward twice: once for the loss and
// once inside the gradient's trace, with constants of its own. The
// pipeline merges equal paddle ops (CSE) before paddle-fuse groups them into
// regions, so the forward runs once: one matmul, one tanh and one constant
// reach fusion, and one oneDNN call is left.

// CHECK-LABEL: func.func @step(
// CHECK-COUNT-1: paddle.matmul
// CHECK-NOT: paddle.matmul
// CALLS: 1
func.func @step(%x: tensor<64x128xf32>, %w: tensor<128x256xf32>) -> (tensor<64x256xf32>, tensor<64x256xf32>) {
  %c0 = paddle.constant dense<2.0> : tensor<f32>
  %0 = paddle.matmul %x, %w : tensor<64x128xf32>, tensor<128x256xf32> -> tensor<64x256xf32>
  %1 = paddle.mul %0, %c0 : tensor<64x256xf32>, tensor<f32> -> tensor<64x256xf32>
  %2 = paddle.tanh %1 : tensor<64x256xf32> -> tensor<64x256xf32>
  %c1 = paddle.constant dense<2.0> : tensor<f32>
  %3 = paddle.matmul %x, %w : tensor<64x128xf32>, tensor<128x256xf32> -> tensor<64x256xf32>
  %4 = paddle.mul %3, %c1 : tensor<64x256xf32>, tensor<f32> -> tensor<64x256xf32>
  %5 = paddle.tanh %4 : tensor<64x256xf32> -> tensor<64x256xf32>
  %6 = paddle.mul %5, %5 : tensor<64x256xf32>, tensor<64x256xf32> -> tensor<64x256xf32>
  return %2, %6 : tensor<64x256xf32>, tensor<64x256xf32>
}
