// RUN: paddle-opt %s --paddle-set-target=library=onednn --paddle-use-onednn --split-input-file | FileCheck %s
// RUN: paddle-opt %s --paddle-set-target=library=onednn --paddle-use-onednn=fuse=0 --split-input-file | FileCheck %s --check-prefix=NOFUSE

// Epilogues fused into the oneDNN call as post-ops. The program global is
// {flags, count, count x {kind, operand, alpha bits, beta bits}} with the
// kinds of paddle_runtime/onednn.h (1 linear, 2 relu, 3 clip, 4 tanh,
// 5 sigmoid, 6 gelu erf, 7 gelu tanh, 8 bias, 9 add, 10 mul, 11 sub, 12 sum).

#id = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d1)>

// A bias along N, then relu: the first per-channel add is oneDNN's bias.
// The call writes the generic's output; generic, fill and the intermediate
// go.
// CHECK-DAG: memref.global "private" constant @[[$P:__paddle_onednn_program[_0-9]*]] : memref<10xi64> = dense<[0, 2, 8, 0, 0, 0, 2, -1, 0, 0]>
// CHECK-DAG: memref.global "private" @[[$S:__paddle_onednn_state[_0-9]*]] : memref<1xi64> = dense<0>
// CHECK-LABEL: func.func @bias_relu
// CHECK-SAME: (%[[A:.*]]: memref<64x128xf32>, %[[B:.*]]: memref<128x32xf32>, %[[BIAS:.*]]: memref<32xf32>)
// CHECK: memref.alloc() : memref<64x32xf32>
// CHECK: %[[D:.*]] = memref.alloc() : memref<64x32xf32>
// CHECK-NOT: linalg.
// CHECK: %[[CD:.*]] = memref.cast %[[D]] : memref<64x32xf32> to memref<*xf32>
// CHECK: %[[E0:.*]] = memref.cast %[[BIAS]] : memref<32xf32> to memref<*xf32>
// Unused extra operands are a dummy global, never an activation.
// CHECK: %[[U:.*]] = memref.get_global @__paddle_onednn_unused : memref<1xf32>
// CHECK: %[[E1:.*]] = memref.cast %[[U]]
// CHECK: memref.get_global @[[$S]]
// CHECK: memref.get_global @[[$P]]
// CHECK: call @paddle_onednn_matmul(%{{.*}}, %{{.*}}, %[[CD]], %[[E0]], %[[E1]], %[[E1]], %[[E1]],
// CHECK-NOT: linalg.generic
// NOFUSE-LABEL: func.func @bias_relu
// NOFUSE: call @paddle_onednn_matmul
// NOFUSE: linalg.generic
func.func @bias_relu(%a: memref<64x128xf32>, %b: memref<128x32xf32>, %bias: memref<32xf32>) -> memref<64x32xf32> {
  %zero = arith.constant 0.0 : f32
  %c = memref.alloc() : memref<64x32xf32>
  %d = memref.alloc() : memref<64x32xf32>
  linalg.fill ins(%zero : f32) outs(%c : memref<64x32xf32>)
  linalg.matmul ins(%a, %b : memref<64x128xf32>, memref<128x32xf32>) outs(%c : memref<64x32xf32>)
  linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]}
      ins(%c, %bias : memref<64x32xf32>, memref<32xf32>) outs(%d : memref<64x32xf32>) {
  ^bb0(%x: f32, %v: f32, %o: f32):
    %s = arith.addf %x, %v : f32
    %r = arith.maximumf %s, %zero : f32
    linalg.yield %r : f32
  }
  return %d : memref<64x32xf32>
}

// -----

// Folded batch norm on a conv: a per-channel scale then shift (no bias:
// the first per-channel op is a multiply; operands are numbered as the
// matcher meets them, from the yield back: the shift is 0, the scale 1),
// then a clamp to [0, 6] (6.0 is
// 0x4018000000000000), in place in the conv's output. Constant weights set
// flag 1.
// CHECK: memref.global "private" constant @{{.*}} : memref<14xi64> = dense<[1, 3, 10, 1, 0, 0, 9, 0, 0, 0, 3, -1, 0, 4618441417868443648]>
// CHECK-LABEL: func.func @conv_bn_relu6
// CHECK-NOT: linalg.
// CHECK: call @paddle_onednn_conv2d
// CHECK-NOT: linalg.
#nchw = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#ch = affine_map<(d0, d1, d2, d3) -> (d1)>
#ch4 = affine_map<(d0, d1, d2, d3) -> (0, d1, 0, 0)>
memref.global "private" constant @w : memref<8x4x3x3xf32> = dense<1.0>
func.func @conv_bn_relu6(%in: memref<1x4x10x10xf32>, %scale: memref<8xf32>, %shift: memref<1x8x1x1xf32>) -> memref<1x8x8x8xf32> {
  %zero = arith.constant 0.0 : f32
  %six = arith.constant 6.0 : f32
  %w = memref.get_global @w : memref<8x4x3x3xf32>
  %c = memref.alloc() : memref<1x8x8x8xf32>
  linalg.fill ins(%zero : f32) outs(%c : memref<1x8x8x8xf32>)
  linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%in, %w : memref<1x4x10x10xf32>, memref<8x4x3x3xf32>) outs(%c : memref<1x8x8x8xf32>)
  linalg.generic {indexing_maps = [#nchw, #ch, #ch4, #nchw], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%c, %scale, %shift : memref<1x8x8x8xf32>, memref<8xf32>, memref<1x8x1x1xf32>) outs(%c : memref<1x8x8x8xf32>) {
  ^bb0(%x: f32, %s: f32, %t: f32, %o: f32):
    %m = arith.mulf %x, %s : f32
    %a = arith.addf %m, %t : f32
    %lo = arith.maximumf %a, %zero : f32
    %hi = arith.minimumf %lo, %six : f32
    linalg.yield %hi : f32
  }
  return %c : memref<1x8x8x8xf32>
}

// -----

// gelu as the lowering of paddle.gelu writes it (erf form), after a scalar
// shift (linear: alpha 1, beta 0.5 = 0x3FE0000000000000).
// CHECK: dense<[0, 2, 1, -1, 4607182418800017408, 4602678819172646912, 6, -1, 0, 0]>
// CHECK-LABEL: func.func @gelu_erf
// CHECK-NOT: linalg.generic
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @gelu_erf(%a: memref<64x128xf32>, %b: memref<128x32xf32>) -> memref<64x32xf32> {
  %zero = arith.constant 0.0 : f32
  %half = arith.constant 0.5 : f32
  %one = arith.constant 1.0 : f32
  %rsqrt2 = arith.constant 0.707106769 : f32
  %c = memref.alloc() : memref<64x32xf32>
  %d = memref.alloc() : memref<64x32xf32>
  linalg.fill ins(%zero : f32) outs(%c : memref<64x32xf32>)
  linalg.matmul ins(%a, %b : memref<64x128xf32>, memref<128x32xf32>) outs(%c : memref<64x32xf32>)
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%c : memref<64x32xf32>) outs(%d : memref<64x32xf32>) {
  ^bb0(%y: f32, %o: f32):
    %x = arith.addf %y, %half : f32
    %s = arith.mulf %x, %rsqrt2 : f32
    %e = math.erf %s : f32
    %p = arith.addf %one, %e : f32
    %h = arith.mulf %half, %p : f32
    %r = arith.mulf %x, %h : f32
    linalg.yield %r : f32
  }
  return %d : memref<64x32xf32>
}

// -----

// The tanh form of gelu, ONNX-style sigmoid and tanh chained.
// CHECK: dense<[0, 3, 7, -1, 0, 0, 5, -1, 0, 0, 4, -1, 0, 0]>
// CHECK-LABEL: func.func @gelu_tanh_sigmoid_tanh
// CHECK-NOT: linalg.generic
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @gelu_tanh_sigmoid_tanh(%a: memref<64x128xf32>, %b: memref<128x32xf32>) -> memref<64x32xf32> {
  %zero = arith.constant 0.0 : f32
  %half = arith.constant 0.5 : f32
  %one = arith.constant 1.0 : f32
  %k = arith.constant 0.0447149984 : f32
  %s2pi = arith.constant 0.797884583 : f32
  %c = memref.alloc() : memref<64x32xf32>
  %d = memref.alloc() : memref<64x32xf32>
  linalg.fill ins(%zero : f32) outs(%c : memref<64x32xf32>)
  linalg.matmul ins(%a, %b : memref<64x128xf32>, memref<128x32xf32>) outs(%c : memref<64x32xf32>)
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%c : memref<64x32xf32>) outs(%d : memref<64x32xf32>) {
  ^bb0(%x: f32, %o: f32):
    %x2 = arith.mulf %x, %x : f32
    %x3 = arith.mulf %x, %x2 : f32
    %kx3 = arith.mulf %k, %x3 : f32
    %poly = arith.addf %x, %kx3 : f32
    %in = arith.mulf %s2pi, %poly : f32
    %t = math.tanh %in : f32
    %p = arith.addf %one, %t : f32
    %h = arith.mulf %half, %p : f32
    %g = arith.mulf %x, %h : f32
    %n = arith.negf %g : f32
    %e = math.exp %n : f32
    %den = arith.addf %one, %e : f32
    %sig = arith.divf %one, %den : f32
    %r = math.tanh %sig : f32
    linalg.yield %r : f32
  }
  return %d : memref<64x32xf32>
}

// -----

// A residual in another buffer: copied into the output, then summed.
// CHECK: dense<[0, 2, 12, -1, 0, 0, 2, -1, 0, 0]>
// CHECK-LABEL: func.func @residual
// CHECK-SAME: %[[R:[^:]*]]: memref<64x32xf32>)
// CHECK: memref.alloc() : memref<64x32xf32>
// CHECK: %[[D:.*]] = memref.alloc() : memref<64x32xf32>
// CHECK: memref.copy %[[R]], %[[D]]
// CHECK: call @paddle_onednn_matmul
// CHECK-NOT: linalg.generic
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @residual(%a: memref<64x128xf32>, %b: memref<128x32xf32>, %r: memref<64x32xf32>) -> memref<64x32xf32> {
  %zero = arith.constant 0.0 : f32
  %c = memref.alloc() : memref<64x32xf32>
  %d = memref.alloc() : memref<64x32xf32>
  linalg.fill ins(%zero : f32) outs(%c : memref<64x32xf32>)
  linalg.matmul ins(%a, %b : memref<64x128xf32>, memref<128x32xf32>) outs(%c : memref<64x32xf32>)
  linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%c, %r : memref<64x32xf32>, memref<64x32xf32>) outs(%d : memref<64x32xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %s = arith.addf %y, %x : f32
    %t = arith.maximumf %s, %zero : f32
    linalg.yield %t : f32
  }
  return %d : memref<64x32xf32>
}

// -----

// The residual with a zero bias of its own, in place in the op's output
// (a ResNet downsampling block: the main branch's zero bias add merged
// into the add of the shortcut conv's result): r + 0.0 is summed as r,
// and the result's own + 0.0 merges away: sum, relu.
// CHECK: dense<[0, 2, 12, -1, 0, 0, 2, -1, 0, 0]>
// CHECK-LABEL: func.func @residual_zero_bias
// CHECK-SAME: %[[R:[^:]*]]: memref<64x32xf32>)
// CHECK: %[[C:.*]] = memref.alloc() : memref<64x32xf32>
// CHECK: memref.copy %[[R]], %[[C]]
// CHECK: call @paddle_onednn_matmul
// CHECK-NOT: linalg.generic
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @residual_zero_bias(%a: memref<64x128xf32>, %b: memref<128x32xf32>, %r: memref<64x32xf32>) -> memref<64x32xf32> {
  %zero = arith.constant 0.0 : f32
  %c = memref.alloc() : memref<64x32xf32>
  linalg.fill ins(%zero : f32) outs(%c : memref<64x32xf32>)
  linalg.matmul ins(%a, %b : memref<64x128xf32>, memref<128x32xf32>) outs(%c : memref<64x32xf32>)
  linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%r, %c : memref<64x32xf32>, memref<64x32xf32>) outs(%c : memref<64x32xf32>) {
  ^bb0(%y: f32, %x: f32, %o: f32):
    %xb = arith.addf %x, %zero : f32
    %yb = arith.addf %y, %zero : f32
    %s = arith.addf %yb, %xb : f32
    %t = arith.maximumf %s, %zero : f32
    linalg.yield %t : f32
  }
  return %c : memref<64x32xf32>
}

// -----

// Not fused: the result is read by two ops.
// CHECK-LABEL: func.func @two_readers
// CHECK: call @paddle_onednn_matmul
// CHECK: linalg.generic
// CHECK: memref.load
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @two_readers(%a: memref<64x128xf32>, %b: memref<128x32xf32>) -> (memref<64x32xf32>, f32) {
  %zero = arith.constant 0.0 : f32
  %i = arith.constant 0 : index
  %c = memref.alloc() : memref<64x32xf32>
  %d = memref.alloc() : memref<64x32xf32>
  linalg.fill ins(%zero : f32) outs(%c : memref<64x32xf32>)
  linalg.matmul ins(%a, %b : memref<64x128xf32>, memref<128x32xf32>) outs(%c : memref<64x32xf32>)
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%c : memref<64x32xf32>) outs(%d : memref<64x32xf32>) {
  ^bb0(%x: f32, %o: f32):
    %t = arith.maximumf %x, %zero : f32
    linalg.yield %t : f32
  }
  %v = memref.load %c[%i, %i] : memref<64x32xf32>
  return %d, %v : memref<64x32xf32>, f32
}

// -----

// Not fused: the result read through a transposing map.
// CHECK-LABEL: func.func @transposed_read
// CHECK: call @paddle_onednn_matmul
// CHECK: linalg.generic
#id = affine_map<(d0, d1) -> (d0, d1)>
#t = affine_map<(d0, d1) -> (d1, d0)>
func.func @transposed_read(%a: memref<64x128xf32>, %b: memref<128x64xf32>) -> memref<64x64xf32> {
  %zero = arith.constant 0.0 : f32
  %c = memref.alloc() : memref<64x64xf32>
  %d = memref.alloc() : memref<64x64xf32>
  linalg.fill ins(%zero : f32) outs(%c : memref<64x64xf32>)
  linalg.matmul ins(%a, %b : memref<64x128xf32>, memref<128x64xf32>) outs(%c : memref<64x64xf32>)
  linalg.generic {indexing_maps = [#t, #id], iterator_types = ["parallel", "parallel"]}
      ins(%c : memref<64x64xf32>) outs(%d : memref<64x64xf32>) {
  ^bb0(%x: f32, %o: f32):
    %t = arith.maximumf %x, %zero : f32
    linalg.yield %t : f32
  }
  return %d : memref<64x64xf32>
}

// -----

// Not fused: a body op with no post-op (exp alone), a per-channel operand
// along M instead of N, and an output that is the matmul's own input.
// CHECK-LABEL: func.func @unsupported
// CHECK-COUNT-3: linalg.generic
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
func.func @unsupported(%a: memref<64x128xf32>, %b: memref<128x32xf32>, %v: memref<64xf32>) -> (memref<64x32xf32>, memref<64x32xf32>) {
  %zero = arith.constant 0.0 : f32
  %c = memref.alloc() : memref<64x32xf32>
  %d = memref.alloc() : memref<64x32xf32>
  linalg.fill ins(%zero : f32) outs(%c : memref<64x32xf32>)
  linalg.matmul ins(%a, %b : memref<64x128xf32>, memref<128x32xf32>) outs(%c : memref<64x32xf32>)
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%c : memref<64x32xf32>) outs(%d : memref<64x32xf32>) {
  ^bb0(%x: f32, %o: f32):
    %t = math.exp %x : f32
    linalg.yield %t : f32
  }
  %c2 = memref.alloc() : memref<64x32xf32>
  %d2 = memref.alloc() : memref<64x32xf32>
  linalg.fill ins(%zero : f32) outs(%c2 : memref<64x32xf32>)
  linalg.matmul ins(%a, %b : memref<64x128xf32>, memref<128x32xf32>) outs(%c2 : memref<64x32xf32>)
  linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%c2, %v : memref<64x32xf32>, memref<64xf32>) outs(%d2 : memref<64x32xf32>) {
  ^bb0(%x: f32, %s: f32, %o: f32):
    %t = arith.addf %x, %s : f32
    linalg.yield %t : f32
  }
  %ws = memref.alloc() : memref<64x128xf32>
  %in = memref.subview %ws[0, 0] [64, 32] [1, 1] : memref<64x128xf32> to memref<64x32xf32, strided<[128, 1]>>
  %c3 = memref.alloc() : memref<64x32xf32>
  linalg.fill ins(%zero : f32) outs(%c3 : memref<64x32xf32>)
  linalg.matmul ins(%ws, %b : memref<64x128xf32>, memref<128x32xf32>) outs(%c3 : memref<64x32xf32>)
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%c3 : memref<64x32xf32>) outs(%in : memref<64x32xf32, strided<[128, 1]>>) {
  ^bb0(%x: f32, %o: f32):
    %t = arith.maximumf %x, %zero : f32
    linalg.yield %t : f32
  }
  return %d, %d2 : memref<64x32xf32>, memref<64x32xf32>
}

// -----

// Not fused: the output accumulates (no zero init).
// CHECK-LABEL: func.func @accumulating
// CHECK: call @paddle_onednn_matmul
// CHECK: linalg.generic
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @accumulating(%a: memref<64x128xf32>, %b: memref<128x32xf32>) -> memref<64x32xf32> {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %c = memref.alloc() : memref<64x32xf32>
  %d = memref.alloc() : memref<64x32xf32>
  linalg.fill ins(%one : f32) outs(%c : memref<64x32xf32>)
  linalg.matmul ins(%a, %b : memref<64x128xf32>, memref<128x32xf32>) outs(%c : memref<64x32xf32>)
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%c : memref<64x32xf32>) outs(%d : memref<64x32xf32>) {
  ^bb0(%x: f32, %o: f32):
    %t = arith.maximumf %x, %zero : f32
    linalg.yield %t : f32
  }
  return %d : memref<64x32xf32>
}

// -----

// The matmul reads its lhs through a collapse_shape of a workspace slice
// next to the one the epilogue writes (in place of the matmul's result, as
// the memory planner lays out a Linear layer on [batch, seq, features]). A
// reshape covers its source's bytes, so the two are known apart and the
// epilogue fuses (relu: count 1).
#id = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: memref.global "private" constant @[[$P:__paddle_onednn_program[_0-9]*]] : memref<6xi64> = dense<[0, 1, 2, -1, 0, 0]>
// CHECK-LABEL: func.func @reshaped_lhs_beside_output
// CHECK: call @paddle_onednn_matmul
// CHECK-NOT: linalg.generic
func.func @reshaped_lhs_beside_output(%ws: memref<?xi8>) {
  %zero = arith.constant 0.0 : f32
  %b = memref.alloc() : memref<16x32xf32>
  %c0 = arith.constant 0 : index
  %c8192 = arith.constant 8192 : index
  %x = memref.view %ws[%c8192][] : memref<?xi8> to memref<1x64x16xf32>
  %a = memref.collapse_shape %x [[0, 1], [2]] : memref<1x64x16xf32> into memref<64x16xf32>
  %c = memref.view %ws[%c0][] : memref<?xi8> to memref<64x32xf32>
  %d = memref.view %ws[%c0][] : memref<?xi8> to memref<64x32xf32>
  linalg.fill ins(%zero : f32) outs(%c : memref<64x32xf32>)
  linalg.matmul ins(%a, %b : memref<64x16xf32>, memref<16x32xf32>) outs(%c : memref<64x32xf32>)
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%c : memref<64x32xf32>) outs(%d : memref<64x32xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.maximumf %in, %zero : f32
    linalg.yield %r : f32
  }
  return
}
