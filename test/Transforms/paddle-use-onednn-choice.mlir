// The library choice of paddle-use-onednn: the same ops under device specs
// that favour one path or the other (Inputs/*.json give the arithmetic),
// the tiled and scalar codegen efficiencies, and the forced modes.
//
// RUN: paddle-opt %s --paddle-set-target=device=%S/Inputs/onednn-balanced.json --paddle-use-onednn --split-input-file | FileCheck %s --check-prefix=BAL
// RUN: paddle-opt %s --paddle-set-target=device=%S/Inputs/onednn-balanced.json --paddle-use-onednn=tile-and-vectorize=0 --split-input-file | FileCheck %s --check-prefix=SCALAR
// RUN: paddle-opt %s --paddle-set-target=device=%S/Inputs/onednn-cheap.json --paddle-use-onednn --split-input-file | FileCheck %s --check-prefix=ALL
// RUN: paddle-opt %s --paddle-set-target=device=%S/Inputs/onednn-costly.json --paddle-use-onednn --split-input-file | FileCheck %s --check-prefix=NONE
// RUN: paddle-opt %s --paddle-set-target="device=%S/Inputs/onednn-costly.json library=onednn" --paddle-use-onednn --split-input-file | FileCheck %s --check-prefix=ALL
// A spec without "onednn" (GPUs) keeps every op ours unless forced.
// RUN: paddle-opt %s --paddle-set-target=device=h200 --paddle-use-onednn --split-input-file | FileCheck %s --check-prefix=NONE
// RUN: paddle-opt %s --paddle-set-target="device=h200 library=onednn" --paddle-use-onednn --split-input-file | FileCheck %s --check-prefix=ALL

// 64x64x64 (524288 FLOPs at 1 ns each): oneDNN 100 us + 1048.6 us; the
// tiled kernel 1048.6 us (ours); scalar loops 52428.8 us (oneDNN). n = 64
// is tiled with 256- and 512-bit registers alike.
// BAL-LABEL: func.func @matmul_tiled
// BAL: linalg.matmul
// BAL-NOT: call @
// SCALAR-LABEL: func.func @matmul_tiled
// SCALAR: call @paddle_onednn_matmul
// SCALAR-NOT: linalg.matmul
// ALL-LABEL: func.func @matmul_tiled
// ALL: call @paddle_onednn_matmul
// NONE-LABEL: func.func @matmul_tiled
// NONE: linalg.matmul
// NONE-NOT: call @
func.func @matmul_tiled(%a: memref<64x64xf32>, %b: memref<64x64xf32>, %c: memref<64x64xf32>) {
  linalg.matmul ins(%a, %b : memref<64x64xf32>, memref<64x64xf32>) outs(%c : memref<64x64xf32>)
  return
}

// -----

// n = 3: no register tile divides it, so our code is scalar loops even with
// tiling on: 2*64*3*64 = 24576 FLOPs, scalar 2457.6 us > oneDNN 149.2 us.
// BAL-LABEL: func.func @matmul_untileable
// BAL: call @paddle_onednn_matmul
// NONE-LABEL: func.func @matmul_untileable
// NONE: linalg.matmul
func.func @matmul_untileable(%a: memref<64x64xf32>, %b: memref<64x3xf32>, %c: memref<64x3xf32>) {
  linalg.matmul ins(%a, %b : memref<64x64xf32>, memref<64x3xf32>) outs(%c : memref<64x3xf32>)
  return
}

// -----

// A transposed-B contraction (x @ w.T) is a linalg.generic, which
// paddle-tile-and-vectorize leaves scalar: oneDNN, though the same matmul
// as a linalg.matmul stays ours.
#a = affine_map<(m, n, k) -> (m, k)>
#bt = affine_map<(m, n, k) -> (n, k)>
#c = affine_map<(m, n, k) -> (m, n)>
// BAL-LABEL: func.func @matmul_transposed
// BAL: call @paddle_onednn_matmul
// BAL-NOT: linalg.generic
// NONE-LABEL: func.func @matmul_transposed
// NONE: linalg.generic
func.func @matmul_transposed(%a: memref<64x64xf32>, %b: memref<64x64xf32>, %c: memref<64x64xf32>) {
  linalg.generic {indexing_maps = [#a, #bt, #c], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<64x64xf32>, memref<64x64xf32>) outs(%c : memref<64x64xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Convolutions are scalar loops in our code. 1x8x10x10 * 8x8x3x3: 73728
// FLOPs, scalar 7372.8 us > oneDNN 247.5 us. 1x1x3x3 * 1x1x3x3: 18 FLOPs,
// scalar 1.8 us < oneDNN 100 us.
// BAL-LABEL: func.func @convs
// BAL: call @paddle_onednn_conv2d
// BAL: linalg.conv_2d_nchw_fchw
// BAL-SAME: memref<1x1x3x3xf32>
// BAL-NOT: call @
// ALL-LABEL: func.func @convs
// ALL: call @paddle_onednn_conv2d
// ALL: call @paddle_onednn_conv2d
// NONE-LABEL: func.func @convs
// NONE-NOT: call @
func.func @convs(%x: memref<1x8x10x10xf32>, %w: memref<8x8x3x3xf32>, %y: memref<1x8x8x8xf32>,
                 %x1: memref<1x1x3x3xf32>, %w1: memref<1x1x3x3xf32>, %y1: memref<1x1x1x1xf32>) {
  linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%x, %w : memref<1x8x10x10xf32>, memref<8x8x3x3xf32>) outs(%y : memref<1x8x8x8xf32>)
  linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%x1, %w1 : memref<1x1x3x3xf32>, memref<1x1x3x3xf32>) outs(%y1 : memref<1x1x1x1xf32>)
  return
}
