// RUN: paddle-opt %s --paddle-set-target=library=onednn --paddle-use-onednn --split-input-file | FileCheck %s
// RUN: paddle-opt %s --paddle-set-target=library=onednn --paddle-use-onednn=winograd=0 --split-input-file | FileCheck %s --check-prefix=DIRECT

// Convs oneDNN may run as Winograd carry flag bit 1 (2) in their program:
// 3x3, stride and dilation 1, not grouped, at least 64 input and output
// channels. Bit 0 (1) is constant weights. winograd=0 sets no such flag.

// DIRECT-NOT: dense<[2, 0]>
// DIRECT-NOT: dense<[3, 0]>

// CHECK: memref.global "private" constant @{{__paddle_onednn_program[_0-9]*}} : memref<2xi64> = dense<[2, 0]>
// CHECK-LABEL: func.func @eligible(
// CHECK: call @paddle_onednn_conv2d(
func.func @eligible(%x: memref<1x64x8x8xf32>, %f: memref<64x64x3x3xf32>, %y: memref<1x64x6x6xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%y : memref<1x64x6x6xf32>)
  linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
    ins(%x, %f : memref<1x64x8x8xf32>, memref<64x64x3x3xf32>) outs(%y : memref<1x64x6x6xf32>)
  return
}

// -----

// Constant weights: both flags.
// CHECK: memref.global "private" constant @{{__paddle_onednn_program[_0-9]*}} : memref<2xi64> = dense<[3, 0]>
// CHECK-LABEL: func.func @constant_weights(
memref.global "private" constant @w : memref<64x64x3x3xf32> = dense<0.5>
func.func @constant_weights(%x: memref<1x64x8x8xf32>, %y: memref<1x64x6x6xf32>) {
  %zero = arith.constant 0.0 : f32
  %f = memref.get_global @w : memref<64x64x3x3xf32>
  linalg.fill ins(%zero : f32) outs(%y : memref<1x64x6x6xf32>)
  linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
    ins(%x, %f : memref<1x64x8x8xf32>, memref<64x64x3x3xf32>) outs(%y : memref<1x64x6x6xf32>)
  return
}

// -----

// Not eligible: stride 2, 32 input channels, a 1x1 kernel.
// CHECK-NOT: dense<[2, 0]>
// CHECK-LABEL: func.func @ineligible(
// CHECK-COUNT-3: call @paddle_onednn_conv2d(
func.func @ineligible(%x: memref<1x64x8x8xf32>, %f: memref<64x64x3x3xf32>, %y: memref<1x64x3x3xf32>,
                      %x32: memref<1x32x8x8xf32>, %f32: memref<64x32x3x3xf32>, %y32: memref<1x64x6x6xf32>,
                      %f1: memref<64x64x1x1xf32>, %y1: memref<1x64x8x8xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%y : memref<1x64x3x3xf32>)
  linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
    ins(%x, %f : memref<1x64x8x8xf32>, memref<64x64x3x3xf32>) outs(%y : memref<1x64x3x3xf32>)
  linalg.fill ins(%zero : f32) outs(%y32 : memref<1x64x6x6xf32>)
  linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
    ins(%x32, %f32 : memref<1x32x8x8xf32>, memref<64x32x3x3xf32>) outs(%y32 : memref<1x64x6x6xf32>)
  linalg.fill ins(%zero : f32) outs(%y1 : memref<1x64x8x8xf32>)
  linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
    ins(%x, %f1 : memref<1x64x8x8xf32>, memref<64x64x1x1xf32>) outs(%y1 : memref<1x64x8x8xf32>)
  return
}
