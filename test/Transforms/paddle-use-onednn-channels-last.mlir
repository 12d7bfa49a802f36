// RUN: paddle-opt %s --paddle-set-target=library=onednn --paddle-use-onednn --split-input-file | FileCheck %s
// RUN: paddle-opt %s --paddle-set-target=library=onednn --paddle-use-onednn=channels-last=0 --split-input-file | FileCheck %s --check-prefix=PLAIN

// Activations that only oneDNN convolutions read and write are stored
// channels-last: the calls take memref.reinterpret_cast views with NHWC
// strides (N: H*W*C, C: 1, H: W*C, W: C; a grouped [N, G, F, H, W] view:
// G: F, F: 1), so consecutive convs skip oneDNN's plain <-> NHWC reorders.
// A buffer anything else touches (another view of its bytes, a generic
// that indexes it otherwise than by the identity or also maps a buffer that
// must stay plain) keeps its plain layout; a generic that maps all its 4-D
// operands by the identity reads them as [N, H, W, C] views with its loops
// in that order. A whole-buffer copy between a channels-last and
// a plain buffer becomes paddle_onednn_reorder; between two channels-last
// ones it stays a copy. With channels-last=0 no buffer changes.

// PLAIN-NOT: memref.reinterpret_cast
// PLAIN-NOT: paddle_onednn_reorder

// The buffers of a conv chain; the function's argument stays plain, and
// the result is reordered into the caller's plain buffer.
// CHECK-LABEL: func.func @chain(
// CHECK-SAME: %[[X:[^:]*]]: memref<1x4x8x8xf32>
// CHECK-SAME: %[[R:[^:]*]]: memref<1x8x6x6xf32>
// CHECK: %[[A:.*]] = memref.alloc() : memref<1x8x6x6xf32>
// CHECK: %[[B:.*]] = memref.alloc() : memref<1x8x6x6xf32>
// CHECK: %[[XC:.*]] = memref.cast %[[X]] : memref<1x4x8x8xf32> to
// CHECK: %[[A1:.*]] = memref.reinterpret_cast %[[A]] to offset: [0], sizes: [1, 8, 6, 6], strides: [288, 1, 48, 8]
// CHECK: %[[AC1:.*]] = memref.cast %[[A1]]
// CHECK: call @paddle_onednn_conv2d(%[[XC]], %{{.*}}, %[[AC1]],
// CHECK: %[[A2:.*]] = memref.reinterpret_cast %[[A]] to offset: [0], sizes: [1, 8, 6, 6], strides: [288, 1, 48, 8]
// CHECK: %[[AC2:.*]] = memref.cast %[[A2]]
// CHECK: %[[B1:.*]] = memref.reinterpret_cast %[[B]] to offset: [0], sizes: [1, 8, 6, 6], strides: [288, 1, 48, 8]
// CHECK: %[[BC:.*]] = memref.cast %[[B1]]
// CHECK: call @paddle_onednn_conv2d(%[[AC2]], %{{.*}}, %[[BC]],
// CHECK: %[[B2:.*]] = memref.reinterpret_cast %[[B]] to offset: [0], sizes: [1, 8, 6, 6], strides: [288, 1, 48, 8]
// CHECK: %[[FROM:.*]] = memref.cast %[[B2]]
// CHECK: %[[TO:.*]] = memref.cast %[[R]]
// CHECK: call @paddle_onednn_reorder(%[[FROM]], %[[TO]])
// CHECK-NOT: memref.copy
func.func @chain(%x: memref<1x4x8x8xf32>, %f1: memref<8x4x3x3xf32>, %f2: memref<8x8x1x1xf32>, %r: memref<1x8x6x6xf32>) {
  %zero = arith.constant 0.0 : f32
  %a = memref.alloc() : memref<1x8x6x6xf32>
  %b = memref.alloc() : memref<1x8x6x6xf32>
  linalg.fill ins(%zero : f32) outs(%a : memref<1x8x6x6xf32>)
  linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
    ins(%x, %f1 : memref<1x4x8x8xf32>, memref<8x4x3x3xf32>) outs(%a : memref<1x8x6x6xf32>)
  linalg.fill ins(%zero : f32) outs(%b : memref<1x8x6x6xf32>)
  linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
    ins(%a, %f2 : memref<1x8x6x6xf32>, memref<8x8x1x1xf32>) outs(%b : memref<1x8x6x6xf32>)
  memref.dealloc %a : memref<1x8x6x6xf32>
  memref.copy %b, %r : memref<1x8x6x6xf32> to memref<1x8x6x6xf32>
  return
}

// -----

// A max pooling between convs (a ResNet stem) reads and writes its
// activations channels-last as well.
// CHECK-LABEL: func.func @pool_between(
// CHECK: %[[A:.*]] = memref.alloc() : memref<1x8x6x6xf32>
// CHECK: %[[P:.*]] = memref.alloc() : memref<1x8x3x3xf32>
// CHECK: %[[A1:.*]] = memref.reinterpret_cast %[[A]] to offset: [0], sizes: [1, 8, 6, 6], strides: [288, 1, 48, 8]
// CHECK: %[[AC1:.*]] = memref.cast %[[A1]]
// CHECK: call @paddle_onednn_conv2d(%{{.*}}, %{{.*}}, %[[AC1]],
// CHECK: %[[A2:.*]] = memref.reinterpret_cast %[[A]] to offset: [0], sizes: [1, 8, 6, 6], strides: [288, 1, 48, 8]
// CHECK: %[[AC2:.*]] = memref.cast %[[A2]]
// CHECK: %[[P1:.*]] = memref.reinterpret_cast %[[P]] to offset: [0], sizes: [1, 8, 3, 3], strides: [72, 1, 24, 8]
// CHECK: %[[PC1:.*]] = memref.cast %[[P1]]
// CHECK: call @paddle_onednn_max_pool2d(%[[AC2]], %[[PC1]],
// CHECK: %[[P2:.*]] = memref.reinterpret_cast %[[P]] to offset: [0], sizes: [1, 8, 3, 3], strides: [72, 1, 24, 8]
// CHECK: %[[PC2:.*]] = memref.cast %[[P2]]
// CHECK: call @paddle_onednn_conv2d(%[[PC2]],
func.func @pool_between(%x: memref<1x4x8x8xf32>, %f1: memref<8x4x3x3xf32>, %f2: memref<8x8x1x1xf32>, %r: memref<1x8x3x3xf32>) {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %a = memref.alloc() : memref<1x8x6x6xf32>
  %p = memref.alloc() : memref<1x8x3x3xf32>
  %window = memref.alloc() : memref<2x2xf32>
  linalg.fill ins(%zero : f32) outs(%a : memref<1x8x6x6xf32>)
  linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
    ins(%x, %f1 : memref<1x4x8x8xf32>, memref<8x4x3x3xf32>) outs(%a : memref<1x8x6x6xf32>)
  linalg.fill ins(%ninf : f32) outs(%p : memref<1x8x3x3xf32>)
  linalg.pooling_nchw_max {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
    ins(%a, %window : memref<1x8x6x6xf32>, memref<2x2xf32>) outs(%p : memref<1x8x3x3xf32>)
  linalg.fill ins(%zero : f32) outs(%r : memref<1x8x3x3xf32>)
  linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
    ins(%p, %f2 : memref<1x8x3x3xf32>, memref<8x8x1x1xf32>) outs(%r : memref<1x8x3x3xf32>)
  return
}

// -----

// A conv output a generic reads stays plain when the generic also maps
// the caller's buffer %r by the identity.
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// CHECK-LABEL: func.func @read_by_generic(
// CHECK-NOT: memref.reinterpret_cast
// CHECK: call @paddle_onednn_conv2d(
// CHECK-NOT: memref.reinterpret_cast
// CHECK: linalg.generic
func.func @read_by_generic(%x: memref<1x4x8x8xf32>, %f1: memref<8x4x3x3xf32>, %r: memref<1x8x6x6xf32>) {
  %zero = arith.constant 0.0 : f32
  %a = memref.alloc() : memref<1x8x6x6xf32>
  linalg.fill ins(%zero : f32) outs(%a : memref<1x8x6x6xf32>)
  linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
    ins(%x, %f1 : memref<1x4x8x8xf32>, memref<8x4x3x3xf32>) outs(%a : memref<1x8x6x6xf32>)
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%a : memref<1x8x6x6xf32>) outs(%r : memref<1x8x6x6xf32>) {
  ^bb0(%v: f32, %o: f32):
    %e = math.exp %v : f32
    linalg.yield %e : f32
  }
  return
}

// -----

// A residual: %a is copied into %c, which the third conv accumulates into
// (no zero fill: accumulate = 1). Both sides of the copy are only convs'
// and change together, so the copy moves NHWC bytes as they are.
// CHECK-LABEL: func.func @residual(
// CHECK: %[[A:.*]] = memref.alloc() : memref<1x8x6x6xf32>
// CHECK: %[[B:.*]] = memref.alloc() : memref<1x8x6x6xf32>
// CHECK: %[[C:.*]] = memref.alloc() : memref<1x8x6x6xf32>
// CHECK: memref.reinterpret_cast %[[A]] {{.*}} strides: [288, 1, 48, 8]
// CHECK: call @paddle_onednn_conv2d(
// CHECK: memref.reinterpret_cast %[[A]] {{.*}} strides: [288, 1, 48, 8]
// CHECK: memref.reinterpret_cast %[[B]] {{.*}} strides: [288, 1, 48, 8]
// CHECK: call @paddle_onednn_conv2d(
// CHECK: memref.copy %[[A]], %[[C]] : memref<1x8x6x6xf32> to memref<1x8x6x6xf32>
// CHECK: memref.reinterpret_cast %[[B]] {{.*}} strides: [288, 1, 48, 8]
// CHECK: memref.reinterpret_cast %[[C]] {{.*}} strides: [288, 1, 48, 8]
// CHECK: call @paddle_onednn_conv2d({{.*}}, %c1_i64{{[_0-9]*}}) :
func.func @residual(%x: memref<1x4x8x8xf32>, %f1: memref<8x4x3x3xf32>, %f2: memref<8x8x1x1xf32>, %f3: memref<8x8x1x1xf32>, %f4: memref<8x8x1x1xf32>, %r: memref<1x8x6x6xf32>) {
  %zero = arith.constant 0.0 : f32
  %a = memref.alloc() : memref<1x8x6x6xf32>
  %b = memref.alloc() : memref<1x8x6x6xf32>
  %c = memref.alloc() : memref<1x8x6x6xf32>
  linalg.fill ins(%zero : f32) outs(%a : memref<1x8x6x6xf32>)
  linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
    ins(%x, %f1 : memref<1x4x8x8xf32>, memref<8x4x3x3xf32>) outs(%a : memref<1x8x6x6xf32>)
  linalg.fill ins(%zero : f32) outs(%b : memref<1x8x6x6xf32>)
  linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
    ins(%a, %f2 : memref<1x8x6x6xf32>, memref<8x8x1x1xf32>) outs(%b : memref<1x8x6x6xf32>)
  memref.copy %a, %c : memref<1x8x6x6xf32> to memref<1x8x6x6xf32>
  linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
    ins(%b, %f3 : memref<1x8x6x6xf32>, memref<8x8x1x1xf32>) outs(%c : memref<1x8x6x6xf32>)
  linalg.fill ins(%zero : f32) outs(%r : memref<1x8x6x6xf32>)
  linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
    ins(%c, %f4 : memref<1x8x6x6xf32>, memref<8x8x1x1xf32>) outs(%r : memref<1x8x6x6xf32>)
  return
}

// -----

// The copy's other side is read by a generic: it stays plain, and the
// copy from the channels-last %a becomes a reorder.
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// CHECK-LABEL: func.func @copy_to_plain(
// CHECK: %[[A:.*]] = memref.alloc() : memref<1x8x6x6xf32>
// CHECK: %[[C:.*]] = memref.alloc() : memref<1x8x6x6xf32>
// CHECK: call @paddle_onednn_conv2d(
// CHECK: %[[FROM:.*]] = memref.reinterpret_cast %[[A]] {{.*}} strides: [288, 1, 48, 8]
// CHECK: %[[F:.*]] = memref.cast %[[FROM]]
// CHECK: %[[T:.*]] = memref.cast %[[C]]
// CHECK: call @paddle_onednn_reorder(%[[F]], %[[T]])
// CHECK: call @paddle_onednn_conv2d(
// CHECK: linalg.generic {{.*}} ins(%[[C]] : memref<1x8x6x6xf32>)
func.func @copy_to_plain(%x: memref<1x4x8x8xf32>, %f1: memref<8x4x3x3xf32>, %f2: memref<8x8x1x1xf32>, %r: memref<1x8x6x6xf32>, %s: memref<1x8x6x6xf32>) {
  %zero = arith.constant 0.0 : f32
  %a = memref.alloc() : memref<1x8x6x6xf32>
  %c = memref.alloc() : memref<1x8x6x6xf32>
  linalg.fill ins(%zero : f32) outs(%a : memref<1x8x6x6xf32>)
  linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
    ins(%x, %f1 : memref<1x4x8x8xf32>, memref<8x4x3x3xf32>) outs(%a : memref<1x8x6x6xf32>)
  memref.copy %a, %c : memref<1x8x6x6xf32> to memref<1x8x6x6xf32>
  linalg.fill ins(%zero : f32) outs(%r : memref<1x8x6x6xf32>)
  linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
    ins(%a, %f2 : memref<1x8x6x6xf32>, memref<8x8x1x1xf32>) outs(%r : memref<1x8x6x6xf32>)
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%c : memref<1x8x6x6xf32>) outs(%s : memref<1x8x6x6xf32>) {
  ^bb0(%v: f32, %o: f32):
    %e = math.exp %v : f32
    linalg.yield %e : f32
  }
  return
}

// -----

// Workspace views: the conv writes %a, and %alias (the same bytes, as
// memory planning's in-place reuse gives) is read by a generic, so %a
// keeps the layout %alias is read in. %b, whose bytes nothing else
// views, changes.
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// CHECK-LABEL: func.func @aliased_view(
// CHECK: %[[A:.*]] = memref.view %{{.*}}[%c0{{.*}}][] : memref<?xi8> to memref<1x8x6x6xf32>
// CHECK: %[[B:.*]] = memref.view %{{.*}}[%c1152{{.*}}][] : memref<?xi8> to memref<1x8x6x6xf32>
// CHECK-NOT: memref.reinterpret_cast %[[A]]
// CHECK: memref.reinterpret_cast %[[B]]
// CHECK-NOT: memref.reinterpret_cast %[[A]]
// CHECK: linalg.generic
func.func @aliased_view(%ws: memref<?xi8>, %x: memref<1x4x8x8xf32>, %f1: memref<8x4x3x3xf32>, %f2: memref<8x8x1x1xf32>, %r: memref<1x8x6x6xf32>) {
  %zero = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  %c1152 = arith.constant 1152 : index
  %a = memref.view %ws[%c0][] : memref<?xi8> to memref<1x8x6x6xf32>
  %b = memref.view %ws[%c1152][] : memref<?xi8> to memref<1x8x6x6xf32>
  linalg.fill ins(%zero : f32) outs(%a : memref<1x8x6x6xf32>)
  linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
    ins(%x, %f1 : memref<1x4x8x8xf32>, memref<8x4x3x3xf32>) outs(%a : memref<1x8x6x6xf32>)
  linalg.fill ins(%zero : f32) outs(%b : memref<1x8x6x6xf32>)
  linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
    ins(%a, %f2 : memref<1x8x6x6xf32>, memref<8x8x1x1xf32>) outs(%b : memref<1x8x6x6xf32>)
  %alias = memref.view %ws[%c0][] : memref<?xi8> to memref<1x8x6x6xf32>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%alias : memref<1x8x6x6xf32>) outs(%r : memref<1x8x6x6xf32>) {
  ^bb0(%v: f32, %o: f32):
    %e = math.exp %v : f32
    linalg.yield %e : f32
  }
  return
}

// -----

// A depthwise conv between two convs: the NCHW buffer it reads through an
// expand_shape and the [N, G, F, H, W] buffer it writes, which the next
// conv reads through a collapse_shape. Each view the calls take gets the
// strides of its own shape.
// CHECK-LABEL: func.func @grouped(
// CHECK: %[[A:.*]] = memref.alloc() : memref<1x8x6x6xf32>
// CHECK: %[[D:.*]] = memref.alloc() : memref<1x8x1x4x4xf32>
// CHECK: memref.reinterpret_cast %[[A]] to offset: [0], sizes: [1, 8, 6, 6], strides: [288, 1, 48, 8]
// CHECK: call @paddle_onednn_conv2d(
// CHECK: memref.reinterpret_cast %[[A]] to offset: [0], sizes: [1, 8, 1, 6, 6], strides: [288, 1, 1, 48, 8]
// CHECK: memref.reinterpret_cast %[[D]] to offset: [0], sizes: [1, 8, 1, 4, 4], strides: [128, 1, 1, 32, 8]
// CHECK: call @paddle_onednn_conv2d_grouped(
// CHECK: memref.reinterpret_cast %[[D]] to offset: [0], sizes: [1, 8, 4, 4], strides: [128, 1, 32, 8]
// CHECK: call @paddle_onednn_conv2d(
func.func @grouped(%x: memref<1x4x8x8xf32>, %f1: memref<8x4x3x3xf32>, %dw: memref<8x1x1x3x3xf32>, %f2: memref<8x8x1x1xf32>, %r: memref<1x8x4x4xf32>) {
  %zero = arith.constant 0.0 : f32
  %a = memref.alloc() : memref<1x8x6x6xf32>
  %d = memref.alloc() : memref<1x8x1x4x4xf32>
  linalg.fill ins(%zero : f32) outs(%a : memref<1x8x6x6xf32>)
  linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
    ins(%x, %f1 : memref<1x4x8x8xf32>, memref<8x4x3x3xf32>) outs(%a : memref<1x8x6x6xf32>)
  %a5 = memref.expand_shape %a [[0], [1, 2], [3], [4]] output_shape [1, 8, 1, 6, 6] : memref<1x8x6x6xf32> into memref<1x8x1x6x6xf32>
  linalg.fill ins(%zero : f32) outs(%d : memref<1x8x1x4x4xf32>)
  linalg.conv_2d_ngchw_gfchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
    ins(%a5, %dw : memref<1x8x1x6x6xf32>, memref<8x1x1x3x3xf32>) outs(%d : memref<1x8x1x4x4xf32>)
  %d4 = memref.collapse_shape %d [[0], [1, 2], [3], [4]] : memref<1x8x1x4x4xf32> into memref<1x8x4x4xf32>
  linalg.fill ins(%zero : f32) outs(%r : memref<1x8x4x4xf32>)
  linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
    ins(%d4, %f2 : memref<1x8x4x4xf32>, memref<8x8x1x1xf32>) outs(%r : memref<1x8x4x4xf32>)
  return
}

// -----

// A global average pool reads the conv output channels-last: the generic
// takes a [1, 6, 6, 8] view and runs its loops (N, H, W, C), the channels
// innermost, which are contiguous.
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#nc = affine_map<(d0, d1, d2, d3) -> (d0, d1)>
// CHECK-LABEL: func.func @pooled(
// CHECK: %[[A:.*]] = memref.alloc() : memref<1x8x6x6xf32>
// CHECK: memref.reinterpret_cast %[[A]] to offset: [0], sizes: [1, 8, 6, 6], strides: [288, 1, 48, 8]
// CHECK: call @paddle_onednn_conv2d(
// CHECK: %[[V:.*]] = memref.reinterpret_cast %[[A]] to offset: [0], sizes: [1, 6, 6, 8], strides: [288, 48, 8, 1] : memref<1x8x6x6xf32> to memref<1x6x6x8xf32>
// CHECK: linalg.generic {indexing_maps = [#{{.*}}, #{{.*}}], iterator_types = ["parallel", "reduction", "reduction", "parallel"]} ins(%[[V]] : memref<1x6x6x8xf32>) outs(%{{.*}} : memref<1x8xf32>)
// CHECK-NOT: paddle_onednn_reorder
// PLAIN-LABEL: func.func @pooled(
// PLAIN: iterator_types = ["parallel", "parallel", "reduction", "reduction"]
func.func @pooled(%x: memref<1x4x8x8xf32>, %f1: memref<8x4x3x3xf32>, %r: memref<1x8xf32>) {
  %zero = arith.constant 0.0 : f32
  %a = memref.alloc() : memref<1x8x6x6xf32>
  linalg.fill ins(%zero : f32) outs(%a : memref<1x8x6x6xf32>)
  linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
    ins(%x, %f1 : memref<1x4x8x8xf32>, memref<8x4x3x3xf32>) outs(%a : memref<1x8x6x6xf32>)
  linalg.fill ins(%zero : f32) outs(%r : memref<1x8xf32>)
  linalg.generic {indexing_maps = [#id, #nc], iterator_types = ["parallel", "parallel", "reduction", "reduction"]}
      ins(%a : memref<1x8x6x6xf32>) outs(%r : memref<1x8xf32>) {
  ^bb0(%v: f32, %o: f32):
    %m = arith.maximumf %v, %zero : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  }
  memref.dealloc %a : memref<1x8x6x6xf32>
  return
}
