// RUN: paddle-opt %s --paddle-set-target=device=%S/Inputs/onednn-cheap.json --paddle-use-onednn --split-input-file --verify-diagnostics | FileCheck %s
// RUN: paddle-opt %s --paddle-set-target=library=onednn --paddle-use-onednn --split-input-file --verify-diagnostics | FileCheck %s --check-prefix=FORCE
// RUN: paddle-opt %s --paddle-set-target=device=%S/Inputs/onednn-costly.json --paddle-use-onednn --split-input-file | FileCheck %s --check-prefix=COSTLY

// The choice itself is tested in paddle-use-onednn-choice.mlir; here the
// default RUN line uses a spec under which oneDNN always wins, and COSTLY
// one under which it never does (so the last case, an error when a call is
// made, does not arise there).

// A zero-filled output: the fill goes, the kernel overwrites (accumulate 0).
// Matmuls pass unranked memrefs and, per operand, the memref dim of each
// logical dim + 1 in 4 bits: a (m, k) = 0x21, b (k, n) = 0x21, c (m, n) = 0x21.
// CHECK-DAG: func.func private @paddle_onednn_matmul(memref<*xf32>, memref<*xf32>, memref<*xf32>, memref<*xf32>, memref<*xf32>, memref<*xf32>, memref<*xf32>, memref<*xi64>, memref<*xi64>, i64, i64, i64, i64) attributes {llvm.emit_c_interface}
// CHECK-LABEL: func.func @matmul_filled
// CHECK-SAME: (%[[A:.*]]: memref<64x128xf32>, %[[B:.*]]: memref<128x32xf32>, %[[C:.*]]: memref<64x32xf32>)
// CHECK-NOT: linalg.fill
// CHECK: %[[CA:.*]] = memref.cast %[[A]] : memref<64x128xf32> to memref<*xf32>
// CHECK: %[[CB:.*]] = memref.cast %[[B]]
// CHECK: %[[CC:.*]] = memref.cast %[[C]]
// CHECK: %[[MA:.*]] = arith.constant 33 : i64
// CHECK: %[[MB:.*]] = arith.constant 33 : i64
// CHECK: %[[MC:.*]] = arith.constant 33 : i64
// CHECK: %[[ACC:.*]] = arith.constant 0 : i64
// CHECK: call @paddle_onednn_matmul(%[[CA]], %[[CB]], %[[CC]], %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[MA]], %[[MB]], %[[MC]], %[[ACC]])
// CHECK-NOT: linalg.matmul
// COSTLY-LABEL: func.func @matmul_filled
// COSTLY: linalg.fill
// COSTLY: linalg.matmul
func.func @matmul_filled(%a: memref<64x128xf32>, %b: memref<128x32xf32>, %c: memref<64x32xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%c : memref<64x32xf32>)
  linalg.matmul ins(%a, %b : memref<64x128xf32>, memref<128x32xf32>) outs(%c : memref<64x32xf32>)
  return
}

// -----

// No fill (or a fill of another value): oneDNN adds to the output.
// CHECK-LABEL: func.func @matmul_accumulate
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : memref<64x32xf32>)
// CHECK: %[[ACC:.*]] = arith.constant 1 : i64
// CHECK: call @paddle_onednn_matmul(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[ACC]])
func.func @matmul_accumulate(%a: memref<64x128xf32>, %b: memref<128x32xf32>, %c: memref<64x32xf32>) {
  %one = arith.constant 1.0 : f32
  linalg.fill ins(%one : f32) outs(%c : memref<64x32xf32>)
  linalg.matmul ins(%a, %b : memref<64x128xf32>, memref<128x32xf32>) outs(%c : memref<64x32xf32>)
  return
}

// -----

// A zero fill of another buffer, or a write to the output in between, keeps
// accumulation.
// CHECK-LABEL: func.func @matmul_fill_elsewhere
// CHECK: linalg.fill
// CHECK: memref.store
// CHECK: %[[ACC:.*]] = arith.constant 1 : i64
// CHECK: call @paddle_onednn_matmul(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[ACC]])
func.func @matmul_fill_elsewhere(%a: memref<64x128xf32>, %b: memref<128x32xf32>, %c: memref<64x32xf32>) {
  %zero = arith.constant 0.0 : f32
  %i = arith.constant 0 : index
  linalg.fill ins(%zero : f32) outs(%c : memref<64x32xf32>)
  memref.store %zero, %c[%i, %i] : memref<64x32xf32>
  linalg.matmul ins(%a, %b : memref<64x128xf32>, memref<128x32xf32>) outs(%c : memref<64x32xf32>)
  return
}

// -----

// A tiny matmul (2*4*4*4 FLOPs) goes wherever the spec predicts it faster,
// and to oneDNN when forced.
// CHECK-LABEL: func.func @matmul_small
// CHECK: call @paddle_onednn_matmul
// COSTLY-LABEL: func.func @matmul_small
// COSTLY: linalg.matmul
// COSTLY-NOT: call @
// FORCE-LABEL: func.func @matmul_small
// FORCE-NOT: linalg.matmul
// FORCE: call @paddle_onednn_matmul
func.func @matmul_small(%a: memref<4x4xf32>, %b: memref<4x4xf32>, %c: memref<4x4xf32>) {
  linalg.matmul ins(%a, %b : memref<4x4xf32>, memref<4x4xf32>) outs(%c : memref<4x4xf32>)
  return
}

// -----

// Dynamic dims count as 1 in the prediction (here oneDNN wins anyway).
// CHECK-LABEL: func.func @matmul_dynamic
// CHECK: memref.cast %{{.*}} : memref<?x512xf32> to memref<*xf32>
// CHECK: call @paddle_onednn_matmul
func.func @matmul_dynamic(%a: memref<?x512xf32>, %b: memref<512x512xf32>, %c: memref<?x512xf32>) {
  linalg.matmul ins(%a, %b : memref<?x512xf32>, memref<512x512xf32>) outs(%c : memref<?x512xf32>)
  return
}

// -----

// oneDNN kernels are f32 only: f64, and f16 inputs accumulating in f32, stay.
// FORCE-LABEL: func.func @unsupported_types
// FORCE: linalg.matmul
// FORCE: linalg.batch_matmul
// FORCE-NOT: call @paddle_onednn_matmul
func.func @unsupported_types(%a: memref<64x128xf64>, %b: memref<128x32xf64>, %c: memref<64x32xf64>,
                             %x: memref<2x64x64xf16>, %y: memref<2x64x64xf16>, %z: memref<2x64x64xf32>) {
  linalg.matmul ins(%a, %b : memref<64x128xf64>, memref<128x32xf64>) outs(%c : memref<64x32xf64>)
  linalg.batch_matmul ins(%x, %y : memref<2x64x64xf16>, memref<2x64x64xf16>) outs(%z : memref<2x64x64xf32>)
  return
}

// -----

// A view with a non-unit innermost stride stays; a row-strided one (a
// slice of rows and columns) goes with its layout.
// FORCE-LABEL: func.func @strides
// FORCE: linalg.matmul ins(%{{.*}}, %{{.*}} : memref<64x64xf32, strided<[128, 2]>>
// FORCE: %[[V:.*]] = memref.subview %{{.*}}[0, 0] [64, 64] [1, 1]
// FORCE: memref.cast %[[V]] : memref<64x64xf32, strided<[128, 1]>> to memref<*xf32>
// FORCE: call @paddle_onednn_matmul
func.func @strides(%big: memref<64x128xf32>, %b: memref<64x64xf32>, %c: memref<64x64xf32>) {
  %s = memref.subview %big[0, 0] [64, 64] [1, 2] : memref<64x128xf32> to memref<64x64xf32, strided<[128, 2]>>
  linalg.matmul ins(%s, %b : memref<64x64xf32, strided<[128, 2]>>, memref<64x64xf32>) outs(%c : memref<64x64xf32>)
  %v = memref.subview %big[0, 0] [64, 64] [1, 1] : memref<64x128xf32> to memref<64x64xf32, strided<[128, 1]>>
  linalg.matmul ins(%v, %b : memref<64x64xf32, strided<[128, 1]>>, memref<64x64xf32>) outs(%c : memref<64x64xf32>)
  return
}

// -----

// batch_matmul: logical (batch, m, k) etc. are memref dims 0, 1, 2: 0x321.
// CHECK-LABEL: func.func @batch_matmul
// CHECK: %[[MA:.*]] = arith.constant 801 : i64
// CHECK: %[[MB:.*]] = arith.constant 801 : i64
// CHECK: %[[MC:.*]] = arith.constant 801 : i64
// CHECK: %[[ACC:.*]] = arith.constant 0 : i64
// CHECK: call @paddle_onednn_matmul(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[MA]], %[[MB]], %[[MC]], %[[ACC]])
// CHECK-NOT: linalg.batch_matmul
func.func @batch_matmul(%a: memref<8x64x32xf32>, %b: memref<8x32x64xf32>, %c: memref<8x64x64xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%c : memref<8x64x64xf32>)
  linalg.batch_matmul ins(%a, %b : memref<8x64x32xf32>, memref<8x32x64xf32>) outs(%c : memref<8x64x64xf32>)
  return
}

// -----

// A generic contraction (what elementwise fusion makes of a matmul whose
// operand was transposed or broadcast): a (batch, m, k) is memref dims
// (0, 1, 2): 0x321 = 801; b = w^T has no batch dim and reads (k, n) from
// memref dims (1, 0): 0x120 = 288; c (batch, m, n): 801.
#a = affine_map<(b, m, n, k) -> (b, m, k)>
#bt = affine_map<(b, m, n, k) -> (n, k)>
#c = affine_map<(b, m, n, k) -> (b, m, n)>
// CHECK-LABEL: func.func @generic_contraction
// CHECK: %[[MA:.*]] = arith.constant 801 : i64
// CHECK: %[[MB:.*]] = arith.constant 288 : i64
// CHECK: %[[MC:.*]] = arith.constant 801 : i64
// CHECK: call @paddle_onednn_matmul(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[MA]], %[[MB]], %[[MC]], %{{.*}})
// CHECK-NOT: linalg.generic
func.func @generic_contraction(%a: memref<4x64x32xf32>, %w: memref<48x32xf32>, %c: memref<4x64x48xf32>) {
  linalg.generic {indexing_maps = [#a, #bt, #c], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%a, %w : memref<4x64x32xf32>, memref<48x32xf32>) outs(%c : memref<4x64x48xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Not a matmul body (a max-plus "contraction"): stays.
#a = affine_map<(m, n, k) -> (m, k)>
#b = affine_map<(m, n, k) -> (k, n)>
#c = affine_map<(m, n, k) -> (m, n)>
// CHECK-LABEL: func.func @max_plus
// CHECK: linalg.generic
// FORCE-LABEL: func.func @max_plus
// FORCE: linalg.generic
// FORCE-NOT: call @paddle_onednn_matmul
func.func @max_plus(%a: memref<64x32xf32>, %b: memref<32x48xf32>, %c: memref<64x48xf32>) {
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<64x32xf32>, memref<32x48xf32>) outs(%c : memref<64x48xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.addf %x, %y : f32
    %s = arith.maximumf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Convolutions pass strides and dilations (h, w), the padding (top, left,
// bottom, right: none here), then accumulate.
// CHECK-DAG: func.func private @paddle_onednn_conv2d(memref<?x?x?x?xf32, strided<[?, ?, ?, ?], offset: ?>>, memref<?x?x?x?xf32, strided<[?, ?, ?, ?], offset: ?>>, memref<?x?x?x?xf32, strided<[?, ?, ?, ?], offset: ?>>, memref<*xf32>, memref<*xf32>, memref<*xf32>, memref<*xf32>, memref<*xi64>, memref<*xi64>, i64, i64, i64, i64, i64, i64, i64, i64, i64) attributes {llvm.emit_c_interface}
// CHECK-LABEL: func.func @conv
// CHECK-DAG: %[[SH:.*]] = arith.constant 2 : i64
// CHECK-DAG: %[[SW:.*]] = arith.constant 1 : i64
// CHECK-DAG: %[[DH:.*]] = arith.constant 3 : i64
// CHECK-DAG: %[[DW:.*]] = arith.constant 2 : i64
// CHECK: call @paddle_onednn_conv2d(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[SH]], %[[SW]], %[[DH]], %[[DW]], %c0_i64{{[_0-9]*}}, %c0_i64{{[_0-9]*}}, %c0_i64{{[_0-9]*}}, %c0_i64{{[_0-9]*}}, %c0_i64{{[_0-9]*}})
// CHECK-NOT: linalg.conv_2d
func.func @conv(%in: memref<1x16x32x32xf32>, %f: memref<32x16x3x3xf32>, %out: memref<1x32x13x28xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%out : memref<1x32x13x28xf32>)
  linalg.conv_2d_nchw_fchw {dilations = dense<[3, 2]> : tensor<2xi64>, strides = dense<[2, 1]> : tensor<2xi64>}
    ins(%in, %f : memref<1x16x32x32xf32>, memref<32x16x3x3xf32>) outs(%out : memref<1x32x13x28xf32>)
  return
}

// -----

// The grouped form: [N, G, C, H, W] with contiguous (G, C).
// CHECK-LABEL: func.func @conv_grouped
// CHECK: call @paddle_onednn_conv2d_grouped(
// CHECK-NOT: linalg.conv_2d
func.func @conv_grouped(%in: memref<1x4x8x16x16xf32>, %f: memref<4x8x8x3x3xf32>, %out: memref<1x4x8x14x14xf32>) {
  linalg.conv_2d_ngchw_gfchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
    ins(%in, %f : memref<1x4x8x16x16xf32>, memref<4x8x8x3x3xf32>) outs(%out : memref<1x4x8x14x14xf32>)
  return
}

// -----

// A user function with a kernel's name and another type is an error.
// expected-error @+1 {{'paddle_onednn_matmul' is reserved for the runtime: expected an external declaration of type}}
func.func private @paddle_onednn_matmul(memref<*xf32>)
func.func @clash(%a: memref<512x512xf32>, %b: memref<512x512xf32>, %c: memref<512x512xf32>) {
  linalg.matmul ins(%a, %b : memref<512x512xf32>, memref<512x512xf32>) outs(%c : memref<512x512xf32>)
  return
}
