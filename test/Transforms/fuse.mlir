// RUN: paddle-opt %s --split-input-file --paddle-fuse | FileCheck %s

// An elementwise chain with a broadcast bias is one group; the small
// constant is copied in, the inputs come in as operands.
// CHECK-LABEL: func.func @elementwise_chain
// CHECK-SAME: (%[[X:.*]]: tensor<64x128xf32>, %[[B:.*]]: tensor<128xf32>)
// CHECK: %[[R:.*]] = paddle.fusion "elementwise"(%[[X]], %[[B]] : tensor<64x128xf32>, tensor<128xf32>) -> tensor<64x128xf32> {
// CHECK-NEXT: ^bb0(%[[A0:.*]]: tensor<64x128xf32>, %[[A1:.*]]: tensor<128xf32>):
// CHECK-NEXT: %[[C:.*]] = paddle.constant dense<2.000000e+00>
// CHECK-NEXT: %[[S:.*]] = paddle.add %[[A0]], %[[A1]]
// CHECK-NEXT: %[[T:.*]] = paddle.relu %[[S]]
// CHECK-NEXT: %[[U:.*]] = paddle.mul %[[T]], %[[C]]
// CHECK-NEXT: paddle.yield %[[U]] : tensor<64x128xf32>
// CHECK: return %[[R]]
func.func @elementwise_chain(%x: tensor<64x128xf32>, %b: tensor<128xf32>) -> tensor<64x128xf32> {
  %c = paddle.constant dense<2.0> : tensor<f32>
  %0 = paddle.add %x, %b : tensor<64x128xf32>, tensor<128xf32> -> tensor<64x128xf32>
  %1 = paddle.relu %0 : tensor<64x128xf32> -> tensor<64x128xf32>
  %2 = paddle.mul %1, %c : tensor<64x128xf32>, tensor<f32> -> tensor<64x128xf32>
  return %2 : tensor<64x128xf32>
}

// -----

// A cheap op read broadcast twice over is recomputed per element: on the
// default device, 8192 extra FLOPs (20 ns) cost less than writing and
// reading its 32 KiB result (80 ns at L1 bandwidth).
// CHECK-LABEL: func.func @cheap_broadcast_producer
// CHECK: paddle.fusion "elementwise"
// CHECK-NEXT: ^bb0
// CHECK-NEXT: paddle.neg
// CHECK-NEXT: paddle.add
// CHECK-NEXT: paddle.yield
func.func @cheap_broadcast_producer(%x: tensor<2x64x128xf32>, %b: tensor<64x128xf32>) -> tensor<2x64x128xf32> {
  %0 = paddle.neg %b : tensor<64x128xf32> -> tensor<64x128xf32>
  %1 = paddle.add %x, %0 : tensor<2x64x128xf32>, tensor<64x128xf32> -> tensor<2x64x128xf32>
  return %1 : tensor<2x64x128xf32>
}

// -----

// Must not fuse: exp read broadcast over 512 rows would be recomputed 512
// times (654k FLOPs, 1.6 us) to save 1 KiB of traffic (1 ns). The
// exp and the add stay separate kernels (single ops are not wrapped).
// CHECK-LABEL: func.func @no_expensive_broadcast_recompute
// CHECK-NOT: paddle.fusion
// CHECK: paddle.exp
// CHECK-NEXT: paddle.add
// CHECK-NEXT: return
func.func @no_expensive_broadcast_recompute(%x: tensor<512x128xf32>, %b: tensor<128xf32>) -> tensor<512x128xf32> {
  %0 = paddle.exp %b : tensor<128xf32> -> tensor<128xf32>
  %1 = paddle.add %x, %0 : tensor<512x128xf32>, tensor<128xf32> -> tensor<512x128xf32>
  return %1 : tensor<512x128xf32>
}

// -----

// Must not fuse: a value used outside the group (here returned) is never
// duplicated; it ends its own group and the consumer is on its own.
// CHECK-LABEL: func.func @no_fuse_value_used_outside
// CHECK: %[[E:.*]] = paddle.fusion "elementwise"
// CHECK: paddle.exp
// CHECK-NEXT: paddle.neg
// CHECK-NEXT: paddle.yield
// CHECK: %[[M:.*]] = paddle.mul %[[E]], %[[E]]
// CHECK-NEXT: return %[[E]], %[[M]]
func.func @no_fuse_value_used_outside(%x: tensor<64xf32>) -> (tensor<64xf32>, tensor<64xf32>) {
  %0 = paddle.exp %x : tensor<64xf32> -> tensor<64xf32>
  %1 = paddle.neg %0 : tensor<64xf32> -> tensor<64xf32>
  %2 = paddle.mul %1, %1 : tensor<64xf32>, tensor<64xf32> -> tensor<64xf32>
  return %1, %2 : tensor<64xf32>, tensor<64xf32>
}

// -----

// A reduction with its producer (x * x) and consumers (+ eps, rsqrt): RMS
// normalisation. The final scale reads the rsqrt broadcast over 256
// columns, so fusing it would recompute the rsqrt 256 times per row (8160
// FLOPs, 20 ns) to save 256 bytes (0.3 ns): the cost model leaves it out.
// CHECK-LABEL: func.func @reduction_with_producers_and_consumers
// CHECK: %[[R:.*]] = paddle.fusion "reduction"
// CHECK: paddle.mul
// CHECK-NEXT: paddle.reduce_mean
// CHECK-NEXT: paddle.add
// CHECK-NEXT: paddle.rsqrt
// CHECK-NEXT: paddle.yield
// CHECK: paddle.mul %{{.*}}, %[[R]]
// CHECK-NEXT: return
func.func @reduction_with_producers_and_consumers(%x: tensor<32x256xf32>) -> tensor<32x256xf32> {
  %eps = paddle.constant dense<1.0e-6> : tensor<f32>
  %0 = paddle.mul %x, %x : tensor<32x256xf32>, tensor<32x256xf32> -> tensor<32x256xf32>
  %1 = paddle.reduce_mean %0 axes = [1] keepdims : tensor<32x256xf32> -> tensor<32x1xf32>
  %2 = paddle.add %1, %eps : tensor<32x1xf32>, tensor<f32> -> tensor<32x1xf32>
  %3 = paddle.rsqrt %2 : tensor<32x1xf32> -> tensor<32x1xf32>
  %4 = paddle.mul %x, %3 : tensor<32x256xf32>, tensor<32x1xf32> -> tensor<32x256xf32>
  return %4 : tensor<32x256xf32>
}

// -----

// Attention scores: scale and mask are fused into the softmax; the batch
// matmul is not (no matmul in a group with a reduction).
// CHECK-LABEL: func.func @softmax_with_prologue
// CHECK: %[[S:.*]] = paddle.matmul
// CHECK: paddle.fusion "softmax"(%[[S]], %{{.*}} : tensor<8x128x128xf32>, tensor<128x128xf32>)
// CHECK: paddle.mul
// CHECK-NEXT: paddle.add
// CHECK-NEXT: paddle.softmax
// CHECK-NEXT: paddle.yield
func.func @softmax_with_prologue(%q: tensor<8x128x64xf32>, %k: tensor<8x64x128xf32>, %mask: tensor<128x128xf32>) -> tensor<8x128x128xf32> {
  %s = paddle.matmul %q, %k : tensor<8x128x64xf32>, tensor<8x64x128xf32> -> tensor<8x128x128xf32>
  %c = paddle.constant dense<0.125> : tensor<f32>
  %t = paddle.mul %s, %c : tensor<8x128x128xf32>, tensor<f32> -> tensor<8x128x128xf32>
  %m = paddle.add %t, %mask : tensor<8x128x128xf32>, tensor<128x128xf32> -> tensor<8x128x128xf32>
  %p = paddle.softmax %m axis = -1 : tensor<8x128x128xf32> -> tensor<8x128x128xf32>
  return %p : tensor<8x128x128xf32>
}

// -----

// The residual add feeding a layer_norm joins it.
// CHECK-LABEL: func.func @layer_norm_with_residual
// CHECK: paddle.fusion "layer_norm"
// CHECK: paddle.add
// CHECK-NEXT: paddle.layer_norm
// CHECK-NEXT: paddle.yield
func.func @layer_norm_with_residual(%x: tensor<128x768xf32>, %r: tensor<128x768xf32>, %g: tensor<768xf32>, %b: tensor<768xf32>) -> tensor<128x768xf32> {
  %a = paddle.add %x, %r : tensor<128x768xf32>, tensor<128x768xf32> -> tensor<128x768xf32>
  %y = paddle.layer_norm %a scale %g bias %b axes = [-1] : tensor<128x768xf32>, tensor<768xf32>, tensor<768xf32> -> tensor<128x768xf32>
  return %y : tensor<128x768xf32>
}

// -----

// A layer norm written out by hand. The final scale reads rsqrt(var + eps)
// broadcast over the 64 columns; recomputing it per element costs more than
// the 64 bytes it saves, so it stays out, and with it `d`, which is then
// read by two groups: the mean and `d` form one group, the variance and
// rsqrt another (over the same rows), the scale is on its own.
// CHECK-LABEL: func.func @decomposed_layer_norm
// CHECK: %[[D:.*]] = paddle.fusion "reduction"
// CHECK: paddle.reduce_mean
// CHECK-NEXT: paddle.sub
// CHECK-NEXT: paddle.yield
// CHECK: %[[R:.*]] = paddle.fusion "reduction"(%[[D]]
// CHECK: paddle.mul
// CHECK-NEXT: paddle.reduce_mean
// CHECK-NEXT: paddle.add
// CHECK-NEXT: paddle.rsqrt
// CHECK-NEXT: paddle.yield
// CHECK: paddle.mul %[[D]], %[[R]]
func.func @decomposed_layer_norm(%x: tensor<16x64xf32>) -> tensor<16x64xf32> {
  %eps = paddle.constant dense<1.0e-5> : tensor<f32>
  %m = paddle.reduce_mean %x axes = [1] keepdims : tensor<16x64xf32> -> tensor<16x1xf32>
  %d = paddle.sub %x, %m : tensor<16x64xf32>, tensor<16x1xf32> -> tensor<16x64xf32>
  %sq = paddle.mul %d, %d : tensor<16x64xf32>, tensor<16x64xf32> -> tensor<16x64xf32>
  %v = paddle.reduce_mean %sq axes = [1] keepdims : tensor<16x64xf32> -> tensor<16x1xf32>
  %ve = paddle.add %v, %eps : tensor<16x1xf32>, tensor<f32> -> tensor<16x1xf32>
  %r = paddle.rsqrt %ve : tensor<16x1xf32> -> tensor<16x1xf32>
  %y = paddle.mul %d, %r : tensor<16x64xf32>, tensor<16x1xf32> -> tensor<16x64xf32>
  return %y : tensor<16x64xf32>
}

// -----

// Must not fuse: reductions over differently shaped inputs (a row sum
// feeding a total) are separate groups.
// CHECK-LABEL: func.func @no_fuse_reductions_of_other_shapes
// CHECK: paddle.fusion "reduction"
// CHECK: paddle.reduce_sum {{.*}} : tensor<16x64xf32>
// CHECK: paddle.yield
// CHECK: paddle.reduce_sum {{.*}} : tensor<16xf32>
func.func @no_fuse_reductions_of_other_shapes(%x: tensor<16x64xf32>) -> tensor<f32> {
  %e = paddle.exp %x : tensor<16x64xf32> -> tensor<16x64xf32>
  %s = paddle.reduce_sum %e axes = [1] : tensor<16x64xf32> -> tensor<16xf32>
  %t = paddle.reduce_sum %s axes = [0] : tensor<16xf32> -> tensor<f32>
  return %t : tensor<f32>
}

// -----

// matmul + bias + gelu + residual: one "matmul" group (its epilogue).
// CHECK-LABEL: func.func @matmul_epilogue
// CHECK: paddle.fusion "matmul"
// CHECK: paddle.matmul
// CHECK-NEXT: paddle.add
// CHECK-NEXT: paddle.gelu
// CHECK-NEXT: paddle.add
// CHECK-NEXT: paddle.yield
func.func @matmul_epilogue(%x: tensor<128x768xf32>, %w: tensor<768x768xf32>, %b: tensor<768xf32>) -> tensor<128x768xf32> {
  %0 = paddle.matmul %x, %w : tensor<128x768xf32>, tensor<768x768xf32> -> tensor<128x768xf32>
  %1 = paddle.add %0, %b : tensor<128x768xf32>, tensor<768xf32> -> tensor<128x768xf32>
  %2 = paddle.gelu %1 : tensor<128x768xf32> -> tensor<128x768xf32>
  %3 = paddle.add %2, %x : tensor<128x768xf32>, tensor<128x768xf32> -> tensor<128x768xf32>
  return %3 : tensor<128x768xf32>
}

// -----

// conv + per-channel bias + relu: one "conv" group.
// CHECK-LABEL: func.func @conv_epilogue
// CHECK: paddle.fusion "conv"
// CHECK: paddle.conv2d
// CHECK-NEXT: paddle.add
// CHECK-NEXT: paddle.relu
// CHECK-NEXT: paddle.yield
func.func @conv_epilogue(%x: tensor<1x16x14x14xf32>, %w: tensor<32x16x3x3xf32>, %b: tensor<32x1x1xf32>) -> tensor<1x32x12x12xf32> {
  %0 = paddle.conv2d %x, %w : tensor<1x16x14x14xf32>, tensor<32x16x3x3xf32> -> tensor<1x32x12x12xf32>
  %1 = paddle.add %0, %b : tensor<1x32x12x12xf32>, tensor<32x1x1xf32> -> tensor<1x32x12x12xf32>
  %2 = paddle.relu %1 : tensor<1x32x12x12xf32> -> tensor<1x32x12x12xf32>
  return %2 : tensor<1x32x12x12xf32>
}

// -----

// Must not fuse: no prologue into a matmul (relu feeding it stays out), no
// two matmuls in one group (the second matmul's group is the epilogue).
// CHECK-LABEL: func.func @no_fuse_into_matmul
// CHECK: %[[R:.*]] = paddle.relu
// CHECK: %[[M:.*]] = paddle.matmul %[[R]]
// CHECK: paddle.fusion "matmul"(%[[M]]
// CHECK: paddle.matmul
// CHECK-NEXT: paddle.tanh
// CHECK-NEXT: paddle.yield
func.func @no_fuse_into_matmul(%x: tensor<64x64xf32>, %w: tensor<64x64xf32>) -> tensor<64x64xf32> {
  %0 = paddle.relu %x : tensor<64x64xf32> -> tensor<64x64xf32>
  %1 = paddle.matmul %0, %w : tensor<64x64xf32>, tensor<64x64xf32> -> tensor<64x64xf32>
  %2 = paddle.matmul %1, %w : tensor<64x64xf32>, tensor<64x64xf32> -> tensor<64x64xf32>
  %3 = paddle.tanh %2 : tensor<64x64xf32> -> tensor<64x64xf32>
  return %3 : tensor<64x64xf32>
}

// -----

// Must not fuse: a matmul whose result is also returned stays a kernel of
// its own (its epilogue ops still form a group).
// CHECK-LABEL: func.func @no_fuse_matmul_used_outside
// CHECK: %[[M:.*]] = paddle.matmul
// CHECK-NEXT: %[[G:.*]] = paddle.fusion "elementwise"(%[[M]] :
// CHECK: return %[[G]], %[[M]]
func.func @no_fuse_matmul_used_outside(%x: tensor<64x64xf32>, %w: tensor<64x64xf32>) -> (tensor<64x64xf32>, tensor<64x64xf32>) {
  %1 = paddle.matmul %x, %w : tensor<64x64xf32>, tensor<64x64xf32> -> tensor<64x64xf32>
  %2 = paddle.tanh %1 : tensor<64x64xf32> -> tensor<64x64xf32>
  %3 = paddle.add %1, %2 : tensor<64x64xf32>, tensor<64x64xf32> -> tensor<64x64xf32>
  return %3, %1 : tensor<64x64xf32>, tensor<64x64xf32>
}

// -----

// A matmul whose result two epilogue ops read (x + tanh(x)) still fuses:
// both uses are inside the group.
// CHECK-LABEL: func.func @matmul_read_twice_by_epilogue
// CHECK: paddle.fusion "matmul"
// CHECK: paddle.matmul
// CHECK-NEXT: paddle.tanh
// CHECK-NEXT: paddle.add
func.func @matmul_read_twice_by_epilogue(%x: tensor<64x64xf32>, %w: tensor<64x64xf32>) -> tensor<64x64xf32> {
  %1 = paddle.matmul %x, %w : tensor<64x64xf32>, tensor<64x64xf32> -> tensor<64x64xf32>
  %2 = paddle.tanh %1 : tensor<64x64xf32> -> tensor<64x64xf32>
  %3 = paddle.add %1, %2 : tensor<64x64xf32>, tensor<64x64xf32> -> tensor<64x64xf32>
  return %3 : tensor<64x64xf32>
}
