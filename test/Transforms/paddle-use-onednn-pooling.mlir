// RUN: paddle-opt %s --paddle-set-target=library=onednn --paddle-use-onednn=channels-last=0 --split-input-file | FileCheck %s
// RUN: paddle-opt %s --paddle-set-target=device=%S/Inputs/onednn-balanced.json --paddle-use-onednn=channels-last=0 --split-input-file | FileCheck %s --check-prefix=BAL

// Max poolings become paddle_onednn_max_pool2d(input, output, kernel h, w,
// strides h, w, padding top, left, bottom, right) when a -inf fill of the
// output comes right before them (the call overwrites the output, and the
// fill goes). The lowering's -inf padding copy (a generic marked
// paddle.max_pool_pad) folds into the call's padding when it was written
// for the pool alone, as a conv's zero padding does.

#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>

// CHECK-LABEL: func.func @folded(
// CHECK-SAME: %[[X:[^:]*]]: memref<1x4x8x8xf32>
// CHECK-NOT: linalg.generic
// CHECK-NOT: linalg.fill
// CHECK: %[[SRC:.*]] = memref.cast %[[X]]
// CHECK: %[[DST:.*]] = memref.cast %[[OUT:[^ ]*]] :
// CHECK: call @paddle_onednn_max_pool2d(%[[SRC]], %[[DST]], %c3_i64{{[_0-9]*}}, %c3_i64{{[_0-9]*}}, %c2_i64{{[_0-9]*}}, %c2_i64{{[_0-9]*}}, %c1_i64{{[_0-9]*}}, %c1_i64{{[_0-9]*}}, %c1_i64{{[_0-9]*}}, %c0_i64{{[_0-9]*}})
// CHECK-NOT: linalg.pooling_nchw_max
// CHECK: memref.copy %[[OUT]]
func.func @folded(%x: memref<1x4x8x8xf32>, %r: memref<1x4x4x4xf32>) {
  %out = memref.alloc() : memref<1x4x4x4xf32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c7 = arith.constant 7 : index
  %ninf = arith.constant 0xFF800000 : f32
  // top 1, left 1, bottom 1, right 0 (asymmetric, as ceil mode makes it)
  %padded = memref.alloc() : memref<1x4x10x9xf32>
  linalg.generic {indexing_maps = [#id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      outs(%padded : memref<1x4x10x9xf32>) attrs = {paddle.max_pool_pad = array<i64: 1, 1, 1, 0>} {
  ^bb0(%o: f32):
    %n = linalg.index 0 : index
    %c = linalg.index 1 : index
    %h0 = linalg.index 2 : index
    %w0 = linalg.index 3 : index
    %h = arith.subi %h0, %c1 : index
    %w = arith.subi %w0, %c1 : index
    %hc = arith.minsi %h, %c7 : index
    %wc = arith.minsi %w, %c7 : index
    %hc2 = arith.maxsi %hc, %c0 : index
    %wc2 = arith.maxsi %wc, %c0 : index
    %v = memref.load %x[%n, %c, %hc2, %wc2] : memref<1x4x8x8xf32>
    %inh = arith.cmpi eq, %h, %hc2 : index
    %inw = arith.cmpi eq, %w, %wc2 : index
    %inside = arith.andi %inh, %inw : i1
    %s = arith.select %inside, %v, %ninf : f32
    linalg.yield %s : f32
  }
  linalg.fill ins(%ninf : f32) outs(%out : memref<1x4x4x4xf32>)
  %window = memref.alloc() : memref<3x3xf32>
  linalg.pooling_nchw_max {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
    ins(%padded, %window : memref<1x4x10x9xf32>, memref<3x3xf32>) outs(%out : memref<1x4x4x4xf32>)
  memref.dealloc %padded : memref<1x4x10x9xf32>
  memref.copy %out, %r : memref<1x4x4x4xf32> to memref<1x4x4x4xf32>
  return
}

// -----

// Without padding, the call reads the input as it is, padding 0.

// CHECK-LABEL: func.func @unpadded(
// CHECK-SAME: %[[X:[^:]*]]: memref<2x3x6x6xf32>, %[[R:[^:]*]]: memref<2x3x3x3xf32>
// CHECK-NOT: linalg.fill
// CHECK: %[[SRC:.*]] = memref.cast %[[X]]
// CHECK: %[[DST:.*]] = memref.cast %[[R]]
// CHECK: call @paddle_onednn_max_pool2d(%[[SRC]], %[[DST]], %c2_i64{{[_0-9]*}}, %c2_i64{{[_0-9]*}}, %c2_i64{{[_0-9]*}}, %c2_i64{{[_0-9]*}}, %c0_i64{{[_0-9]*}}, %c0_i64{{[_0-9]*}}, %c0_i64{{[_0-9]*}}, %c0_i64{{[_0-9]*}})
// CHECK-NOT: linalg.pooling_nchw_max
func.func @unpadded(%x: memref<2x3x6x6xf32>, %r: memref<2x3x3x3xf32>) {
  %ninf = arith.constant 0xFF800000 : f32
  %window = memref.alloc() : memref<2x2xf32>
  linalg.fill ins(%ninf : f32) outs(%r : memref<2x3x3x3xf32>)
  linalg.pooling_nchw_max {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
    ins(%x, %window : memref<2x3x6x6xf32>, memref<2x2xf32>) outs(%r : memref<2x3x3x3xf32>)
  return
}

// -----

// No -inf fill right before: the pooling takes the maximum with the
// output's contents, which the call would drop. It stays.

// CHECK-LABEL: func.func @accumulating(
// CHECK-NOT: call @
// CHECK: linalg.pooling_nchw_max
func.func @accumulating(%x: memref<1x3x6x6xf32>, %r: memref<1x3x3x3xf32>) {
  %window = memref.alloc() : memref<2x2xf32>
  linalg.pooling_nchw_max {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
    ins(%x, %window : memref<1x3x6x6xf32>, memref<2x2xf32>) outs(%r : memref<1x3x3x3xf32>)
  return
}

// -----

// A fill of zero is not a max's identity: the pooling stays.

// CHECK-LABEL: func.func @zero_init(
// CHECK-NOT: call @
// CHECK: linalg.fill
// CHECK: linalg.pooling_nchw_max
func.func @zero_init(%x: memref<1x3x6x6xf32>, %r: memref<1x3x3x3xf32>) {
  %zero = arith.constant 0.0 : f32
  %window = memref.alloc() : memref<2x2xf32>
  linalg.fill ins(%zero : f32) outs(%r : memref<1x3x3x3xf32>)
  linalg.pooling_nchw_max {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
    ins(%x, %window : memref<1x3x6x6xf32>, memref<2x2xf32>) outs(%r : memref<1x3x3x3xf32>)
  return
}

// -----

// Dilated windows are not oneDNN's pooling_forward: the pooling stays.

// CHECK-LABEL: func.func @dilated(
// CHECK-NOT: call @
// CHECK: linalg.pooling_nchw_max
func.func @dilated(%x: memref<1x3x7x7xf32>, %r: memref<1x3x3x3xf32>) {
  %ninf = arith.constant 0xFF800000 : f32
  %window = memref.alloc() : memref<2x2xf32>
  linalg.fill ins(%ninf : f32) outs(%r : memref<1x3x3x3xf32>)
  linalg.pooling_nchw_max {dilations = dense<2> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
    ins(%x, %window : memref<1x3x7x7xf32>, memref<2x2xf32>) outs(%r : memref<1x3x3x3xf32>)
  return
}

// -----

// The padded copy is read again after the pooling: it stays, and the call
// reads it unpadded.
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>

// CHECK-LABEL: func.func @read_again(
// CHECK: %[[P:.*]] = memref.alloc() : memref<1x2x6x6xf32>
// CHECK: linalg.generic
// CHECK-SAME: outs(%[[P]]
// CHECK: %[[IN:.*]] = memref.cast %[[P]]
// CHECK: call @paddle_onednn_max_pool2d(%[[IN]], {{.*}}, %c0_i64{{[_0-9]*}}, %c0_i64{{[_0-9]*}}, %c0_i64{{[_0-9]*}}, %c0_i64{{[_0-9]*}})
// CHECK: memref.copy %[[P]]
func.func @read_again(%x: memref<1x2x4x4xf32>, %r: memref<1x2x2x2xf32>, %keep: memref<1x2x6x6xf32>) {
  %ninf = arith.constant 0xFF800000 : f32
  %padded = memref.alloc() : memref<1x2x6x6xf32>
  linalg.generic {indexing_maps = [#id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      outs(%padded : memref<1x2x6x6xf32>) attrs = {paddle.max_pool_pad = array<i64: 1, 1, 1, 1>} {
  ^bb0(%o: f32):
    %n = linalg.index 0 : index
    %c = linalg.index 1 : index
    %h = linalg.index 2 : index
    %w = linalg.index 3 : index
    %v = memref.load %x[%n, %c, %h, %w] : memref<1x2x4x4xf32>
    linalg.yield %v : f32
  }
  %window = memref.alloc() : memref<3x3xf32>
  linalg.fill ins(%ninf : f32) outs(%r : memref<1x2x2x2xf32>)
  linalg.pooling_nchw_max {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
    ins(%padded, %window : memref<1x2x6x6xf32>, memref<3x3xf32>) outs(%r : memref<1x2x2x2xf32>)
  memref.copy %padded, %keep : memref<1x2x6x6xf32> to memref<1x2x6x6xf32>
  return
}

// -----

// The library choice under the balanced spec (1 ns per operation at the
// peak, scalar loops at 0.01 of it, oneDNN at 0.5 plus 100 us per call): a
// 2x2 window over a 1x1x4x4 input is 16 maxima, 1.6 us of scalar loops,
// and stays ours unless forced; over 1x16x32x32 it is 16384 maxima, 1638
// us of scalar loops against oneDNN's 133 us, and becomes a call.

// CHECK-LABEL: func.func @large(
// CHECK: call @paddle_onednn_max_pool2d
// BAL-LABEL: func.func @large(
// BAL: call @paddle_onednn_max_pool2d
// BAL-NOT: linalg.pooling_nchw_max
func.func @large(%x: memref<1x16x32x32xf32>, %r: memref<1x16x16x16xf32>) {
  %ninf = arith.constant 0xFF800000 : f32
  %window = memref.alloc() : memref<2x2xf32>
  linalg.fill ins(%ninf : f32) outs(%r : memref<1x16x16x16xf32>)
  linalg.pooling_nchw_max {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
    ins(%x, %window : memref<1x16x32x32xf32>, memref<2x2xf32>) outs(%r : memref<1x16x16x16xf32>)
  return
}


// CHECK-LABEL: func.func @tiny(
// CHECK: call @paddle_onednn_max_pool2d
// BAL-LABEL: func.func @tiny(
// BAL-NOT: call @
// BAL: linalg.pooling_nchw_max
func.func @tiny(%x: memref<1x1x4x4xf32>, %r: memref<1x1x2x2xf32>) {
  %ninf = arith.constant 0xFF800000 : f32
  %window = memref.alloc() : memref<2x2xf32>
  linalg.fill ins(%ninf : f32) outs(%r : memref<1x1x2x2xf32>)
  linalg.pooling_nchw_max {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
    ins(%x, %window : memref<1x1x4x4xf32>, memref<2x2xf32>) outs(%r : memref<1x1x2x2xf32>)
  return
}
