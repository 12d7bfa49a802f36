// RUN: paddle-opt %s --paddle-use-onednn --split-input-file | FileCheck %s

// Contractions of two bf16 inputs into an f32 output (what
// paddle-convert-precision makes, docs/bf16.md) call the `_bf16` kernels,
// which take the inputs as bf16 memrefs. Under the default spec a 64^3
// bf16 matmul goes to oneDNN (our code extends bf16 in software) while the
// same f32 one stays ours.
// CHECK-DAG: func.func private @paddle_onednn_matmul_bf16(memref<*xbf16>, memref<*xbf16>, memref<*xf32>, memref<*xf32>, memref<*xf32>, memref<*xf32>, memref<*xf32>, memref<*xi64>, memref<*xi64>, i64, i64, i64, i64) attributes {llvm.emit_c_interface}
// CHECK-LABEL: func.func @matmul_bf16
// CHECK-NOT: linalg.fill
// CHECK: %[[A:.*]] = memref.cast %{{.*}} : memref<64x64xbf16> to memref<*xbf16>
// CHECK: %[[B:.*]] = memref.cast %{{.*}} : memref<64x64xbf16> to memref<*xbf16>
// CHECK: %[[C:.*]] = memref.cast %{{.*}} : memref<64x64xf32> to memref<*xf32>
// CHECK: call @paddle_onednn_matmul_bf16(%[[A]], %[[B]], %[[C]],
// CHECK-NOT: linalg.matmul
func.func @matmul_bf16(%a: memref<64x64xbf16>, %b: memref<64x64xbf16>, %c: memref<64x64xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%c : memref<64x64xf32>)
  linalg.matmul ins(%a, %b : memref<64x64xbf16>, memref<64x64xbf16>) outs(%c : memref<64x64xf32>)
  return
}

// -----

// CHECK-LABEL: func.func @matmul_f32
// CHECK: linalg.matmul
// CHECK-NOT: call @
func.func @matmul_f32(%a: memref<64x64xf32>, %b: memref<64x64xf32>, %c: memref<64x64xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%c : memref<64x64xf32>)
  linalg.matmul ins(%a, %b : memref<64x64xf32>, memref<64x64xf32>) outs(%c : memref<64x64xf32>)
  return
}

// -----

// A transposed B read through a generic whose body extends both inputs.
// CHECK-LABEL: func.func @generic_bf16
// CHECK: call @paddle_onednn_matmul_bf16
// CHECK-NOT: linalg.generic
#a = affine_map<(m, n, k) -> (m, k)>
#bt = affine_map<(m, n, k) -> (n, k)>
#c = affine_map<(m, n, k) -> (m, n)>
func.func @generic_bf16(%a: memref<128x96xbf16>, %b: memref<80x96xbf16>, %c: memref<128x80xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%c : memref<128x80xf32>)
  linalg.generic {indexing_maps = [#a, #bt, #c], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<128x96xbf16>, memref<80x96xbf16>) outs(%c : memref<128x80xf32>) {
  ^bb0(%x: bf16, %y: bf16, %acc: f32):
    %xe = arith.extf %x : bf16 to f32
    %ye = arith.extf %y : bf16 to f32
    %p = arith.mulf %xe, %ye : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// CHECK-DAG: func.func private @paddle_onednn_conv2d_bf16(memref<?x?x?x?xbf16, strided<[?, ?, ?, ?], offset: ?>>, memref<?x?x?x?xbf16, strided<[?, ?, ?, ?], offset: ?>>, memref<?x?x?x?xf32, strided<[?, ?, ?, ?], offset: ?>>,
// CHECK-LABEL: func.func @conv_bf16
// CHECK: call @paddle_onednn_conv2d_bf16(
// CHECK-NOT: linalg.conv_2d
func.func @conv_bf16(%x: memref<1x8x10x10xbf16>, %w: memref<16x8x3x3xbf16>, %y: memref<1x16x8x8xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%y : memref<1x16x8x8xf32>)
  linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%x, %w : memref<1x8x10x10xbf16>, memref<16x8x3x3xbf16>) outs(%y : memref<1x16x8x8xf32>)
  return
}

// -----

// No kernel takes mixed inputs, a bf16 output, or an input extended and
// also read otherwise: those stay ours.
// CHECK-LABEL: func.func @mixed_inputs
// CHECK: linalg.matmul
// CHECK-NOT: call @
func.func @mixed_inputs(%a: memref<64x64xbf16>, %b: memref<64x64xf32>, %c: memref<64x64xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%c : memref<64x64xf32>)
  linalg.matmul ins(%a, %b : memref<64x64xbf16>, memref<64x64xf32>) outs(%c : memref<64x64xf32>)
  return
}

// -----

// CHECK-LABEL: func.func @bf16_output
// CHECK: linalg.matmul
// CHECK-NOT: call @
func.func @bf16_output(%a: memref<64x64xbf16>, %b: memref<64x64xbf16>, %c: memref<64x64xbf16>) {
  %zero = arith.constant 0.0 : bf16
  linalg.fill ins(%zero : bf16) outs(%c : memref<64x64xbf16>)
  linalg.matmul ins(%a, %b : memref<64x64xbf16>, memref<64x64xbf16>) outs(%c : memref<64x64xbf16>)
  return
}

// -----

// CHECK-LABEL: func.func @other_body
// CHECK: linalg.generic
// CHECK-NOT: call @
func.func @other_body(%a: memref<128x96xbf16>, %b: memref<80x96xbf16>, %c: memref<128x80xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%c : memref<128x80xf32>)
  linalg.generic {indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<128x96xbf16>, memref<80x96xbf16>) outs(%c : memref<128x80xf32>) {
  ^bb0(%x: bf16, %y: bf16, %acc: f32):
    %xe = arith.extf %x : bf16 to f32
    %ye = arith.extf %y : bf16 to f32
    %p = arith.mulf %xe, %ye : f32
    %q = arith.mulf %p, %xe : f32
    %s = arith.addf %acc, %q : f32
    linalg.yield %s : f32
  }
  return
}
