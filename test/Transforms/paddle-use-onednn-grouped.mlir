// RUN: paddle-opt %s --paddle-set-target=library=onednn --paddle-use-onednn --split-input-file | FileCheck %s

// Epilogues of the convolutions MobileNetV2 is made of, as the CPU pipeline
// leaves them on buffers: outputs in planned workspace views, depthwise
// convs as linalg.conv_2d_ngchw_gfchw on an expand_shape of the padded
// input, their epilogues reading the NCHW collapse of the output, and the
// next conv's explicit padding reading the result with memref.load inside
// a generic's body. Program kinds as in paddle-use-onednn-postops.mlir
// (3 clip, 8 bias, 9 add); 6.0 is 0x4018000000000000.

#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>

// relu6 in place; the result is read later only inside the padding
// generic's body (a nested user): the epilogue fuses as one clip.
// CHECK: memref.global "private" constant @{{.*}} : memref<6xi64> = dense<[1, 1, 3, -1, 0, 4618441417868443648]>
// CHECK-LABEL: func.func @relu6_read_by_padding
// CHECK: call @paddle_onednn_conv2d(
// CHECK-NOT: arith.minimumf
// CHECK: linalg.generic
// CHECK: memref.load
memref.global "private" constant @w : memref<8x4x1x1xf32> = dense<1.0>
func.func @relu6_read_by_padding(%in: memref<1x4x6x6xf32>) -> memref<1x8x8x8xf32> {
  %zero = arith.constant 0.0 : f32
  %six = arith.constant 6.0 : f32
  %c5 = arith.constant 5 : index
  %w = memref.get_global @w : memref<8x4x1x1xf32>
  %c = memref.alloc() : memref<1x8x6x6xf32>
  linalg.fill ins(%zero : f32) outs(%c : memref<1x8x6x6xf32>)
  linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%in, %w : memref<1x4x6x6xf32>, memref<8x4x1x1xf32>) outs(%c : memref<1x8x6x6xf32>)
  linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%c : memref<1x8x6x6xf32>) outs(%c : memref<1x8x6x6xf32>) {
  ^bb0(%x: f32, %o: f32):
    %lo = arith.maximumf %x, %zero : f32
    %hi = arith.minimumf %lo, %six : f32
    linalg.yield %hi : f32
  }
  %p = memref.alloc() : memref<1x8x8x8xf32>
  linalg.generic {indexing_maps = [#id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      outs(%p : memref<1x8x8x8xf32>) {
  ^bb0(%o: f32):
    %n = linalg.index 0 : index
    %ch = linalg.index 1 : index
    %h = linalg.index 2 : index
    %x = linalg.index 3 : index
    %hc = arith.minsi %h, %c5 : index
    %xc = arith.minsi %x, %c5 : index
    %v = memref.load %c[%n, %ch, %hc, %xc] : memref<1x8x6x6xf32>
    linalg.yield %v : f32
  }
  return %p : memref<1x8x8x8xf32>
}

// -----

// Not fused: the epilogue writes another buffer, and the conv's own result
// is still read later (inside a generic's body), so it must be written.
// CHECK: memref.global "private" constant @{{.*}} : memref<2xi64> = dense<[1, 0]>
// CHECK-LABEL: func.func @intermediate_read_later
// CHECK: call @paddle_onednn_conv2d(
// CHECK: linalg.generic
// CHECK: arith.minimumf
// CHECK: memref.load
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
memref.global "private" constant @w : memref<8x4x1x1xf32> = dense<1.0>
func.func @intermediate_read_later(%in: memref<1x4x6x6xf32>) -> (memref<1x8x6x6xf32>, memref<1x8x6x6xf32>) {
  %zero = arith.constant 0.0 : f32
  %six = arith.constant 6.0 : f32
  %w = memref.get_global @w : memref<8x4x1x1xf32>
  %c = memref.alloc() : memref<1x8x6x6xf32>
  %d = memref.alloc() : memref<1x8x6x6xf32>
  linalg.fill ins(%zero : f32) outs(%c : memref<1x8x6x6xf32>)
  linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%in, %w : memref<1x4x6x6xf32>, memref<8x4x1x1xf32>) outs(%c : memref<1x8x6x6xf32>)
  linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%c : memref<1x8x6x6xf32>) outs(%d : memref<1x8x6x6xf32>) {
  ^bb0(%x: f32, %o: f32):
    %hi = arith.minimumf %x, %six : f32
    linalg.yield %hi : f32
  }
  %e = memref.alloc() : memref<1x8x6x6xf32>
  linalg.generic {indexing_maps = [#id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      outs(%e : memref<1x8x6x6xf32>) {
  ^bb0(%o: f32):
    %n = linalg.index 0 : index
    %ch = linalg.index 1 : index
    %h = linalg.index 2 : index
    %x = linalg.index 3 : index
    %v = memref.load %c[%n, %ch, %x, %h] : memref<1x8x6x6xf32>
    linalg.yield %v : f32
  }
  return %d, %e : memref<1x8x6x6xf32>, memref<1x8x6x6xf32>
}

// -----

// A depthwise conv in a workspace: input an expand_shape of the view at
// bytes [0, 1152), output a view at 2048 and the epilogue's output another
// view of those bytes. The expand_shape covers its source's bytes only, so
// the output is apart from the input and the relu6 fuses. Only the call
// uses the buffers, so they are stored channels-last.
// CHECK: memref.global "private" constant @{{.*}} : memref<6xi64> = dense<[1, 1, 3, -1, 0, 4618441417868443648]>
// CHECK-LABEL: func.func @depthwise_workspace
// CHECK: memref.view %{{.*}}[%c2048{{.*}}][] : memref<?xi8> to memref<1x8x1x4x4xf32>
// CHECK: %[[RES:.*]] = memref.view %{{.*}}[%c2048{{.*}}][] : memref<?xi8> to memref<1x8x1x4x4xf32>
// CHECK: %[[NHWC:.*]] = memref.reinterpret_cast %[[RES]] to offset: [0], sizes: [1, 8, 1, 4, 4], strides: [128, 1, 1, 32, 8]
// CHECK: %[[OUT:.*]] = memref.cast %[[NHWC]]
// CHECK: call @paddle_onednn_conv2d_grouped(%{{.*}}, %{{.*}}, %[[OUT]],
// CHECK-NOT: linalg.
#id5 = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>
memref.global "private" constant @dw : memref<8x1x1x3x3xf32> = dense<1.0>
func.func @depthwise_workspace(%ws: memref<?xi8>) {
  %zero = arith.constant 0.0 : f32
  %six = arith.constant 6.0 : f32
  %c0 = arith.constant 0 : index
  %c2048 = arith.constant 2048 : index
  %w = memref.get_global @dw : memref<8x1x1x3x3xf32>
  %pin = memref.view %ws[%c0][] : memref<?xi8> to memref<1x8x6x6xf32>
  %in = memref.expand_shape %pin [[0], [1, 2], [3], [4]] output_shape [1, 8, 1, 6, 6] : memref<1x8x6x6xf32> into memref<1x8x1x6x6xf32>
  %out = memref.view %ws[%c2048][] : memref<?xi8> to memref<1x8x1x4x4xf32>
  linalg.fill ins(%zero : f32) outs(%out : memref<1x8x1x4x4xf32>)
  linalg.conv_2d_ngchw_gfchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%in, %w : memref<1x8x1x6x6xf32>, memref<8x1x1x3x3xf32>) outs(%out : memref<1x8x1x4x4xf32>)
  %res = memref.view %ws[%c2048][] : memref<?xi8> to memref<1x8x1x4x4xf32>
  linalg.generic {indexing_maps = [#id5, #id5], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]}
      ins(%out : memref<1x8x1x4x4xf32>) outs(%res : memref<1x8x1x4x4xf32>) {
  ^bb0(%x: f32, %o: f32):
    %lo = arith.maximumf %x, %zero : f32
    %hi = arith.minimumf %lo, %six : f32
    linalg.yield %hi : f32
  }
  return
}

// -----

// Not fused: the epilogue's output overlaps the bytes of the conv's input
// (seen through the expand_shape), which the fused call still reads.
// CHECK: memref.global "private" constant @{{.*}} : memref<2xi64> = dense<[1, 0]>
// CHECK-LABEL: func.func @depthwise_output_overlaps_input
// CHECK: call @paddle_onednn_conv2d_grouped(
// CHECK: linalg.generic
#id5 = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>
memref.global "private" constant @dw : memref<8x1x1x3x3xf32> = dense<1.0>
func.func @depthwise_output_overlaps_input(%ws: memref<?xi8>) {
  %zero = arith.constant 0.0 : f32
  %six = arith.constant 6.0 : f32
  %c0 = arith.constant 0 : index
  %c1024 = arith.constant 1024 : index
  %c2048 = arith.constant 2048 : index
  %w = memref.get_global @dw : memref<8x1x1x3x3xf32>
  %pin = memref.view %ws[%c0][] : memref<?xi8> to memref<1x8x6x6xf32>
  %in = memref.expand_shape %pin [[0], [1, 2], [3], [4]] output_shape [1, 8, 1, 6, 6] : memref<1x8x6x6xf32> into memref<1x8x1x6x6xf32>
  %out = memref.view %ws[%c2048][] : memref<?xi8> to memref<1x8x1x4x4xf32>
  linalg.fill ins(%zero : f32) outs(%out : memref<1x8x1x4x4xf32>)
  linalg.conv_2d_ngchw_gfchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%in, %w : memref<1x8x1x6x6xf32>, memref<8x1x1x3x3xf32>) outs(%out : memref<1x8x1x4x4xf32>)
  %res = memref.view %ws[%c1024][] : memref<?xi8> to memref<1x8x1x4x4xf32>
  linalg.generic {indexing_maps = [#id5, #id5], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]}
      ins(%out : memref<1x8x1x4x4xf32>) outs(%res : memref<1x8x1x4x4xf32>) {
  ^bb0(%x: f32, %o: f32):
    %hi = arith.minimumf %x, %six : f32
    linalg.yield %hi : f32
  }
  return
}

// -----

// A folded batch norm + relu6 on a depthwise conv as the model has it: the
// epilogue reads the NCHW collapse of the output and a per-channel bias.
// The bias becomes the primitive's (kind 8, operand 0) and the call writes
// the epilogue's NCHW output expanded back to [N, G, F, H, W].
// CHECK: memref.global "private" constant @{{.*}} : memref<10xi64> = dense<[1, 2, 8, 0, 0, 0, 3, -1, 0, 4618441417868443648]>
// CHECK-LABEL: func.func @depthwise_bias_relu6
// CHECK-SAME: (%[[IN:.*]]: memref<1x8x1x6x6xf32>, %[[B:.*]]: memref<1x8x1x1xf32>)
// CHECK: %[[R:.*]] = memref.alloc() : memref<1x8x4x4xf32>
// CHECK: %[[E:.*]] = memref.expand_shape %[[R]] {{\[}}[0], [1, 2], [3], [4]] output_shape [1, 8, 1, 4, 4] : memref<1x8x4x4xf32> into memref<1x8x1x4x4xf32>
// CHECK: %[[OUT:.*]] = memref.cast %[[E]]
// CHECK: %[[BIAS:.*]] = memref.cast %[[B]] : memref<1x8x1x1xf32> to memref<*xf32>
// CHECK: call @paddle_onednn_conv2d_grouped(%{{.*}}, %{{.*}}, %[[OUT]], %[[BIAS]],
// CHECK-NOT: linalg.
#ch4 = affine_map<(d0, d1, d2, d3) -> (0, d1, 0, 0)>
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
memref.global "private" constant @dw : memref<8x1x1x3x3xf32> = dense<1.0>
func.func @depthwise_bias_relu6(%in: memref<1x8x1x6x6xf32>, %bias: memref<1x8x1x1xf32>) -> memref<1x8x4x4xf32> {
  %zero = arith.constant 0.0 : f32
  %six = arith.constant 6.0 : f32
  %w = memref.get_global @dw : memref<8x1x1x3x3xf32>
  %out = memref.alloc() : memref<1x8x1x4x4xf32>
  linalg.fill ins(%zero : f32) outs(%out : memref<1x8x1x4x4xf32>)
  linalg.conv_2d_ngchw_gfchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%in, %w : memref<1x8x1x6x6xf32>, memref<8x1x1x3x3xf32>) outs(%out : memref<1x8x1x4x4xf32>)
  %r = memref.alloc() : memref<1x8x4x4xf32>
  %nchw = memref.collapse_shape %out [[0], [1, 2], [3], [4]] : memref<1x8x1x4x4xf32> into memref<1x8x4x4xf32>
  linalg.generic {indexing_maps = [#id4, #ch4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%nchw, %bias : memref<1x8x4x4xf32>, memref<1x8x1x1xf32>) outs(%r : memref<1x8x4x4xf32>) {
  ^bb0(%x: f32, %b: f32, %o: f32):
    %a = arith.addf %x, %b : f32
    %lo = arith.maximumf %a, %zero : f32
    %hi = arith.minimumf %lo, %six : f32
    linalg.yield %hi : f32
  }
  return %r : memref<1x8x4x4xf32>
}

// -----

// Two channels per group (4 groups): in NCHW the channel is oneDNN's
// g * 2 + f, so a per-channel scale on the collapse fuses (kind 10, mul).
// CHECK: memref.global "private" constant @{{.*}} : memref<6xi64> = dense<[1, 1, 10, 0, 0, 0]>
// CHECK-LABEL: func.func @grouped_scale_nchw
// CHECK: call @paddle_onednn_conv2d_grouped(
// CHECK-NOT: linalg.
#ch4 = affine_map<(d0, d1, d2, d3) -> (0, d1, 0, 0)>
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
memref.global "private" constant @gw : memref<4x2x2x3x3xf32> = dense<1.0>
func.func @grouped_scale_nchw(%in: memref<1x4x2x6x6xf32>, %scale: memref<1x8x1x1xf32>) -> memref<1x8x4x4xf32> {
  %zero = arith.constant 0.0 : f32
  %w = memref.get_global @gw : memref<4x2x2x3x3xf32>
  %out = memref.alloc() : memref<1x4x2x4x4xf32>
  linalg.fill ins(%zero : f32) outs(%out : memref<1x4x2x4x4xf32>)
  linalg.conv_2d_ngchw_gfchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%in, %w : memref<1x4x2x6x6xf32>, memref<4x2x2x3x3xf32>) outs(%out : memref<1x4x2x4x4xf32>)
  %r = memref.alloc() : memref<1x8x4x4xf32>
  %nchw = memref.collapse_shape %out [[0], [1, 2], [3], [4]] : memref<1x4x2x4x4xf32> into memref<1x8x4x4xf32>
  linalg.generic {indexing_maps = [#id4, #ch4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%nchw, %scale : memref<1x8x4x4xf32>, memref<1x8x1x1xf32>) outs(%r : memref<1x8x4x4xf32>) {
  ^bb0(%x: f32, %s: f32, %o: f32):
    %m = arith.mulf %x, %s : f32
    linalg.yield %m : f32
  }
  return %r : memref<1x8x4x4xf32>
}

// -----

// The [N, G, F, H, W] form itself: with F = 1 a vector along the group dim
// is per-channel (bias, kind 8); with F = 2 it is not (one value for both
// channels of a group), and the epilogue stays.
// (The pass adds each call's globals at the top: the second one's first.)
// CHECK: memref.global "private" constant @{{.*}} : memref<2xi64> = dense<[1, 0]>
// CHECK: memref.global "private" constant @{{.*}} : memref<6xi64> = dense<[1, 1, 8, 0, 0, 0]>
// CHECK-LABEL: func.func @depthwise_bias_5d
// CHECK: call @paddle_onednn_conv2d_grouped(
// CHECK-NOT: linalg.
// CHECK-LABEL: func.func @grouped_group_vector_5d
// CHECK: call @paddle_onednn_conv2d_grouped(
// CHECK: linalg.generic
#id5 = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>
#g5 = affine_map<(d0, d1, d2, d3, d4) -> (d1)>
memref.global "private" constant @dw : memref<8x1x1x3x3xf32> = dense<1.0>
memref.global "private" constant @gw : memref<4x2x2x3x3xf32> = dense<1.0>
func.func @depthwise_bias_5d(%in: memref<1x8x1x6x6xf32>, %bias: memref<8xf32>) -> memref<1x8x1x4x4xf32> {
  %zero = arith.constant 0.0 : f32
  %w = memref.get_global @dw : memref<8x1x1x3x3xf32>
  %out = memref.alloc() : memref<1x8x1x4x4xf32>
  linalg.fill ins(%zero : f32) outs(%out : memref<1x8x1x4x4xf32>)
  linalg.conv_2d_ngchw_gfchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%in, %w : memref<1x8x1x6x6xf32>, memref<8x1x1x3x3xf32>) outs(%out : memref<1x8x1x4x4xf32>)
  linalg.generic {indexing_maps = [#id5, #g5, #id5], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]}
      ins(%out, %bias : memref<1x8x1x4x4xf32>, memref<8xf32>) outs(%out : memref<1x8x1x4x4xf32>) {
  ^bb0(%x: f32, %b: f32, %o: f32):
    %a = arith.addf %x, %b : f32
    linalg.yield %a : f32
  }
  return %out : memref<1x8x1x4x4xf32>
}
func.func @grouped_group_vector_5d(%in: memref<1x4x2x6x6xf32>, %v: memref<4xf32>) -> memref<1x4x2x4x4xf32> {
  %zero = arith.constant 0.0 : f32
  %w = memref.get_global @gw : memref<4x2x2x3x3xf32>
  %out = memref.alloc() : memref<1x4x2x4x4xf32>
  linalg.fill ins(%zero : f32) outs(%out : memref<1x4x2x4x4xf32>)
  linalg.conv_2d_ngchw_gfchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%in, %w : memref<1x4x2x6x6xf32>, memref<4x2x2x3x3xf32>) outs(%out : memref<1x4x2x4x4xf32>)
  linalg.generic {indexing_maps = [#id5, #g5, #id5], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]}
      ins(%out, %v : memref<1x4x2x4x4xf32>, memref<4xf32>) outs(%out : memref<1x4x2x4x4xf32>) {
  ^bb0(%x: f32, %b: f32, %o: f32):
    %a = arith.addf %x, %b : f32
    linalg.yield %a : f32
  }
  return %out : memref<1x4x2x4x4xf32>
}

// -----

// The relu6 written straight into the interior of the next conv's padded
// input (bufferization fuses the padding copy into the epilogue), after
// the zero fill of that buffer: the fill writes nothing the conv touches,
// so the call moves past it and writes the strided interior itself.
// CHECK: memref.global "private" constant @{{.*}} : memref<6xi64> = dense<[1, 1, 3, -1, 0, 4618441417868443648]>
// CHECK-LABEL: func.func @relu6_into_padding
// CHECK: %[[P:.*]] = memref.alloc() : memref<1x8x8x8xf32>
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%[[P]] : memref<1x8x8x8xf32>)
// CHECK: %[[S:.*]] = memref.subview %[[P]][0, 0, 1, 1] [1, 8, 6, 6] [1, 1, 1, 1]
// CHECK: %[[OUT:.*]] = memref.cast %[[S]]
// CHECK: call @paddle_onednn_conv2d(%{{.*}}, %{{.*}}, %[[OUT]],
// CHECK-NOT: linalg.
// CHECK: return %[[P]]
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
memref.global "private" constant @w : memref<8x4x1x1xf32> = dense<1.0>
func.func @relu6_into_padding(%in: memref<1x4x6x6xf32>) -> memref<1x8x8x8xf32> {
  %zero = arith.constant 0.0 : f32
  %six = arith.constant 6.0 : f32
  %w = memref.get_global @w : memref<8x4x1x1xf32>
  %c = memref.alloc() : memref<1x8x6x6xf32>
  %p = memref.alloc() : memref<1x8x8x8xf32>
  linalg.fill ins(%zero : f32) outs(%c : memref<1x8x6x6xf32>)
  linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%in, %w : memref<1x4x6x6xf32>, memref<8x4x1x1xf32>) outs(%c : memref<1x8x6x6xf32>)
  linalg.fill ins(%zero : f32) outs(%p : memref<1x8x8x8xf32>)
  %s = memref.subview %p[0, 0, 1, 1] [1, 8, 6, 6] [1, 1, 1, 1] : memref<1x8x8x8xf32> to memref<1x8x6x6xf32, strided<[512, 64, 8, 1], offset: 9>>
  linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%c : memref<1x8x6x6xf32>) outs(%s : memref<1x8x6x6xf32, strided<[512, 64, 8, 1], offset: 9>>) {
  ^bb0(%x: f32, %o: f32):
    %lo = arith.maximumf %x, %zero : f32
    %hi = arith.minimumf %lo, %six : f32
    linalg.yield %hi : f32
  }
  return %p : memref<1x8x8x8xf32>
}

// -----

// Not fused: the fill in between writes the conv's own input.
// CHECK: memref.global "private" constant @{{.*}} : memref<2xi64> = dense<[1, 0]>
// CHECK-LABEL: func.func @fill_of_input_in_between
// CHECK: call @paddle_onednn_conv2d(
// CHECK: linalg.fill
// CHECK: linalg.generic
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
memref.global "private" constant @w : memref<8x4x1x1xf32> = dense<1.0>
func.func @fill_of_input_in_between(%in: memref<1x4x6x6xf32>) -> memref<1x8x6x6xf32> {
  %zero = arith.constant 0.0 : f32
  %six = arith.constant 6.0 : f32
  %w = memref.get_global @w : memref<8x4x1x1xf32>
  %c = memref.alloc() : memref<1x8x6x6xf32>
  linalg.fill ins(%zero : f32) outs(%c : memref<1x8x6x6xf32>)
  linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%in, %w : memref<1x4x6x6xf32>, memref<8x4x1x1xf32>) outs(%c : memref<1x8x6x6xf32>)
  linalg.fill ins(%zero : f32) outs(%in : memref<1x4x6x6xf32>)
  linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%c : memref<1x8x6x6xf32>) outs(%c : memref<1x8x6x6xf32>) {
  ^bb0(%x: f32, %o: f32):
    %hi = arith.minimumf %x, %six : f32
    linalg.yield %hi : f32
  }
  return %c : memref<1x8x6x6xf32>
}
