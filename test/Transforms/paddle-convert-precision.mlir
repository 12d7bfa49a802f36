// RUN: paddle-opt %s --paddle-set-target=precision=bf16 --paddle-convert-precision --split-input-file | FileCheck %s
// RUN: paddle-opt %s --paddle-set-target=precision=f32 --paddle-convert-precision --split-input-file | FileCheck %s --check-prefix=F32
// RUN: paddle-opt %s --paddle-set-target=precision=bf16 --paddle-convert-precision --paddle-convert-paddle-to-linalg --split-input-file | FileCheck %s --check-prefix=LINALG

// An activation is cast once, after its definition, however many matmuls
// read it; a constant weight becomes a bf16 constant (round to nearest
// even: 1 + 2^-8 ties down to 1, 1 + 3 * 2^-8 ties up to 1 + 2^-6) and the
// f32 original goes. The results stay f32.
// CHECK-LABEL: func @mlp
// CHECK-SAME: (%[[X:.*]]: tensor<2x2xf32>)
// CHECK: %[[X16:.*]] = paddle.cast %[[X]] : tensor<2x2xf32> -> tensor<2x2xbf16>
// CHECK-NOT: paddle.cast
// CHECK-DAG: %[[W16:.*]] = paddle.constant dense<{{\[\[}}1.000000e+00, 1.015630e+00], [-2.000000e+00, 5.000000e-01]]> : tensor<2x2xbf16>
// CHECK-DAG: %[[V16:.*]] = paddle.constant dense<3.000000e+00> : tensor<2x2xbf16>
// CHECK-NOT: xf32>
// CHECK: %[[A:.*]] = paddle.matmul %[[X16]], %[[W16]] : tensor<2x2xbf16>, tensor<2x2xbf16> -> tensor<2x2xf32>
// CHECK: %[[B:.*]] = paddle.matmul %[[X16]], %[[V16]] : tensor<2x2xbf16>, tensor<2x2xbf16> -> tensor<2x2xf32>
// CHECK: %[[S:.*]] = paddle.add %[[A]], %[[B]] : tensor<2x2xf32>, tensor<2x2xf32> -> tensor<2x2xf32>
// CHECK: return %[[S]]

// With precision=f32 nothing changes.
// F32-LABEL: func @mlp
// F32-NOT: xbf16
// F32-LABEL: func @gemm
// F32-NOT: xbf16
// F32-LABEL: func @conv
// F32-NOT: xbf16
// F32-LABEL: func @others

// The linalg ops read bf16 and accumulate into an f32 init; nothing rounds
// their result.
// LINALG-LABEL: func @mlp
// LINALG: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// LINALG: %[[INIT:.*]] = linalg.fill ins(%[[ZERO]] : f32) outs(%{{.*}} : tensor<2x2xf32>)
// LINALG: linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<2x2xbf16>, tensor<2x2xbf16>) outs(%[[INIT]] : tensor<2x2xf32>)
// LINALG-NOT: arith.truncf {{.*}} to bf16
// LINALG: return
func.func @mlp(%x: tensor<2x2xf32>) -> tensor<2x2xf32> {
  %w = paddle.constant dense<[[1.00390625, 1.01171875], [-2.0, 0.5]]> : tensor<2x2xf32>
  %v = paddle.constant dense<3.0> : tensor<2x2xf32>
  %a = paddle.matmul %x, %w : tensor<2x2xf32>, tensor<2x2xf32> -> tensor<2x2xf32>
  %b = paddle.matmul %x, %v : tensor<2x2xf32>, tensor<2x2xf32> -> tensor<2x2xf32>
  %s = paddle.add %a, %b : tensor<2x2xf32>, tensor<2x2xf32> -> tensor<2x2xf32>
  return %s : tensor<2x2xf32>
}

// -----

// A weight behind a transpose (ONNX Gemm with transB) converts at the
// constant; the transpose moves bf16. An activation from another op is cast
// right after that op.
// CHECK-LABEL: func @gemm
// CHECK: %[[R:.*]] = paddle.relu
// CHECK-NEXT: %[[R16:.*]] = paddle.cast %[[R]] : tensor<4x3xf32> -> tensor<4x3xbf16>
// CHECK: %[[W16:.*]] = paddle.constant dense<{{.*}}> : tensor<5x3xbf16>
// CHECK-NEXT: %[[T16:.*]] = paddle.transpose %[[W16]] perm = [1, 0] : tensor<5x3xbf16> -> tensor<3x5xbf16>
// CHECK-NOT: f32> -> tensor<3x5xf32>
// CHECK: paddle.matmul %[[R16]], %[[T16]] : tensor<4x3xbf16>, tensor<3x5xbf16> -> tensor<4x5xf32>
func.func @gemm(%x: tensor<4x3xf32>) -> tensor<4x5xf32> {
  %r = paddle.relu %x : tensor<4x3xf32> -> tensor<4x3xf32>
  %w = paddle.constant dense<0.25> : tensor<5x3xf32>
  %t = paddle.transpose %w perm = [1, 0] : tensor<5x3xf32> -> tensor<3x5xf32>
  %y = paddle.matmul %r, %t : tensor<4x3xf32>, tensor<3x5xf32> -> tensor<4x5xf32>
  return %y : tensor<4x5xf32>
}

// -----

// conv2d: the input, the filter; padding fills with bf16 zeros and the
// convolution accumulates into f32.
// CHECK-LABEL: func @conv
// CHECK-SAME: (%[[X:.*]]: tensor<1x2x5x5xf32>, %[[W:.*]]: tensor<3x2x3x3xf32>)
// CHECK-DAG: %[[X16:.*]] = paddle.cast %[[X]] : tensor<1x2x5x5xf32> -> tensor<1x2x5x5xbf16>
// CHECK-DAG: %[[W16:.*]] = paddle.cast %[[W]] : tensor<3x2x3x3xf32> -> tensor<3x2x3x3xbf16>
// CHECK: paddle.conv2d %[[X16]], %[[W16]] {padding = array<i64: 1, 1, 1, 1>} : tensor<1x2x5x5xbf16>, tensor<3x2x3x3xbf16> -> tensor<1x3x5x5xf32>

// LINALG-LABEL: func @conv
// LINALG: arith.constant 0.000000e+00 : bf16
// LINALG: linalg.conv_2d_nchw_fchw {{.*}} ins(%{{.*}}, %{{.*}} : tensor<1x2x7x7xbf16>, tensor<3x2x3x3xbf16>) outs(%{{.*}} : tensor<1x3x5x5xf32>)
// LINALG-NOT: arith.truncf {{.*}} to bf16
// LINALG: return
func.func @conv(%x: tensor<1x2x5x5xf32>, %w: tensor<3x2x3x3xf32>) -> tensor<1x3x5x5xf32> {
  %y = paddle.conv2d %x, %w {padding = array<i64: 1, 1, 1, 1>} : tensor<1x2x5x5xf32>, tensor<3x2x3x3xf32> -> tensor<1x3x5x5xf32>
  return %y : tensor<1x3x5x5xf32>
}

// -----

// A depthwise conv2d (one input channel per group) stays f32: nothing for
// bf16 dot products to speed up, and casts would add passes. A grouped one
// with two channels per group is converted.
// CHECK-LABEL: func @depthwise
// CHECK: paddle.conv2d %{{.*}}, %{{.*}} {groups = 4 : i64{{.*}}} : tensor<1x4x5x5xf32>, tensor<4x1x3x3xf32> -> tensor<1x4x5x5xf32>
// CHECK: paddle.conv2d %{{.*}}, %{{.*}} {groups = 2 : i64{{.*}}} : tensor<1x4x5x5xbf16>, tensor<4x2x3x3xbf16> -> tensor<1x4x5x5xf32>
func.func @depthwise(%x: tensor<1x4x5x5xf32>, %w: tensor<4x1x3x3xf32>, %g: tensor<4x2x3x3xf32>) -> (tensor<1x4x5x5xf32>, tensor<1x4x5x5xf32>) {
  %y = paddle.conv2d %x, %w {groups = 4 : i64, padding = array<i64: 1, 1, 1, 1>} : tensor<1x4x5x5xf32>, tensor<4x1x3x3xf32> -> tensor<1x4x5x5xf32>
  %z = paddle.conv2d %x, %g {groups = 2 : i64, padding = array<i64: 1, 1, 1, 1>} : tensor<1x4x5x5xf32>, tensor<4x2x3x3xf32> -> tensor<1x4x5x5xf32>
  return %y, %z : tensor<1x4x5x5xf32>, tensor<1x4x5x5xf32>
}

// -----

// Only f32 contractions change: f64 and bf16 ones, and other ops, stay.
// CHECK-LABEL: func @others
// CHECK-NOT: paddle.cast
// CHECK: paddle.matmul %{{.*}}, %{{.*}} : tensor<2x2xf64>, tensor<2x2xf64> -> tensor<2x2xf64>
// CHECK: paddle.matmul %{{.*}}, %{{.*}} : tensor<2x2xbf16>, tensor<2x2xbf16> -> tensor<2x2xbf16>
// CHECK: paddle.exp %{{.*}} : tensor<2x2xf32> -> tensor<2x2xf32>
func.func @others(%a: tensor<2x2xf64>, %b: tensor<2x2xbf16>, %c: tensor<2x2xf32>)
    -> (tensor<2x2xf64>, tensor<2x2xbf16>, tensor<2x2xf32>) {
  %0 = paddle.matmul %a, %a : tensor<2x2xf64>, tensor<2x2xf64> -> tensor<2x2xf64>
  %1 = paddle.matmul %b, %b : tensor<2x2xbf16>, tensor<2x2xbf16> -> tensor<2x2xbf16>
  %2 = paddle.exp %c : tensor<2x2xf32> -> tensor<2x2xf32>
  return %0, %1, %2 : tensor<2x2xf64>, tensor<2x2xbf16>, tensor<2x2xf32>
}
