// RUN: paddle-opt %s --paddle-simplify --split-input-file | FileCheck %s

// The head split of an ONNX attention: a [3, 1, 2, 0, 4] transpose of the
// QKV projection and three constant gathers become gathers of the
// projection itself (views), each followed by a reshape: the transposes
// left move only unit dims.
// CHECK-LABEL: func @gather_of_transpose
// CHECK-SAME: (%[[X:.*]]: tensor<1x128x1x3x768xf32>)
// CHECK-NOT: paddle.transpose
// CHECK: %[[Q:.*]] = paddle.gather %[[X]], %{{.*}} axis = 3 : tensor<1x128x1x3x768xf32>, tensor<i64> -> tensor<1x128x1x768xf32>
// CHECK: paddle.reshape %[[Q]] shape = [128, 1, 1, 768] : tensor<1x128x1x768xf32> -> tensor<128x1x1x768xf32>
// CHECK: %[[K:.*]] = paddle.gather %[[X]], %{{.*}} axis = 3
// CHECK: paddle.reshape %[[K]]
// CHECK-NOT: paddle.transpose
func.func @gather_of_transpose(%x: tensor<1x128x1x3x768xf32>) -> (tensor<128x1x1x768xf32>, tensor<128x1x1x768xf32>) {
  %t = paddle.transpose %x perm = [3, 1, 2, 0, 4] : tensor<1x128x1x3x768xf32> -> tensor<3x128x1x1x768xf32>
  %c0 = paddle.constant dense<0> : tensor<i64>
  %c2 = paddle.constant dense<-1> : tensor<i64>
  %q = paddle.gather %t, %c0 axis = 0 : tensor<3x128x1x1x768xf32>, tensor<i64> -> tensor<128x1x1x768xf32>
  %k = paddle.gather %t, %c2 axis = 0 : tensor<3x128x1x1x768xf32>, tensor<i64> -> tensor<128x1x1x768xf32>
  return %q, %k : tensor<128x1x1x768xf32>, tensor<128x1x1x768xf32>
}

// -----

// BERT's export: a reshape that drops a unit dim sits between the
// transpose and the gathers.
// CHECK-LABEL: func @gather_of_transpose_through_reshape
// CHECK-SAME: (%[[X:.*]]: tensor<1x128x1x3x768xf32>)
// CHECK-NOT: paddle.transpose
// CHECK: %[[V:.*]] = paddle.gather %[[X]], %{{.*}} axis = 3 : tensor<1x128x1x3x768xf32>, tensor<i64> -> tensor<1x128x1x768xf32>
// CHECK: paddle.reshape %[[V]] shape = [128, 1, 768] : tensor<1x128x1x768xf32> -> tensor<128x1x768xf32>
// CHECK-NOT: paddle.transpose
func.func @gather_of_transpose_through_reshape(%x: tensor<1x128x1x3x768xf32>) -> tensor<128x1x768xf32> {
  %t = paddle.transpose %x perm = [3, 1, 2, 0, 4] : tensor<1x128x1x3x768xf32> -> tensor<3x128x1x1x768xf32>
  %r = paddle.reshape %t shape = [3, 128, 1, 768] : tensor<3x128x1x1x768xf32> -> tensor<3x128x1x768xf32>
  %c2 = paddle.constant dense<2> : tensor<i64>
  %v = paddle.gather %r, %c2 axis = 0 : tensor<3x128x1x768xf32>, tensor<i64> -> tensor<128x1x768xf32>
  return %v : tensor<128x1x768xf32>
}

// -----

// Gathers along a dim the transpose moves keep a transpose of the slice.
// CHECK-LABEL: func @gather_of_transpose_keeps_order
// CHECK-SAME: (%[[X:.*]]: tensor<2x3x4xf32>)
// CHECK: %[[G:.*]] = paddle.gather %[[X]], %{{.*}} axis = 1 : tensor<2x3x4xf32>, tensor<i64> -> tensor<2x4xf32>
// CHECK: paddle.transpose %[[G]] perm = [1, 0] : tensor<2x4xf32> -> tensor<4x2xf32>
func.func @gather_of_transpose_keeps_order(%x: tensor<2x3x4xf32>) -> tensor<4x2xf32> {
  %t = paddle.transpose %x perm = [2, 1, 0] : tensor<2x3x4xf32> -> tensor<4x3x2xf32>
  %c = paddle.constant dense<1> : tensor<i64>
  %g = paddle.gather %t, %c axis = 1 : tensor<4x3x2xf32>, tensor<i64> -> tensor<4x2xf32>
  return %g : tensor<4x2xf32>
}

// -----

// Not when the transpose has another user (it is computed anyway), nor
// for a gather of an index tensor.
// CHECK-LABEL: func @gather_of_transpose_no
// CHECK: paddle.transpose
// CHECK: paddle.gather %{{.*}}, %{{.*}} axis = 0 : tensor<3x2xf32>
// CHECK: paddle.transpose
// CHECK: paddle.gather %{{.*}}, %{{.*}} axis = 0 : tensor<3x2xf32>, tensor<2xi64>
func.func @gather_of_transpose_no(%x: tensor<2x3xf32>, %i: tensor<2xi64>) -> (tensor<2xf32>, tensor<3x2xf32>, tensor<2x2xf32>) {
  %t = paddle.transpose %x perm = [1, 0] : tensor<2x3xf32> -> tensor<3x2xf32>
  %c = paddle.constant dense<1> : tensor<i64>
  %g = paddle.gather %t, %c axis = 0 : tensor<3x2xf32>, tensor<i64> -> tensor<2xf32>
  %u = paddle.transpose %x perm = [1, 0] : tensor<2x3xf32> -> tensor<3x2xf32>
  %h = paddle.gather %u, %i axis = 0 : tensor<3x2xf32>, tensor<2xi64> -> tensor<2x2xf32>
  return %g, %t, %h : tensor<2xf32>, tensor<3x2xf32>, tensor<2x2xf32>
}

// -----

// A transpose of unit dims is a reshape; one that reorders two dims of
// size other than 1 is not.
// CHECK-LABEL: func @transpose_of_unit_dims
// CHECK-SAME: (%[[X:.*]]: tensor<1x128x768xf32>)
// CHECK: paddle.reshape %[[X]] shape = [128, 1, 768] : tensor<1x128x768xf32> -> tensor<128x1x768xf32>
// CHECK: paddle.transpose %[[X]] perm = [0, 2, 1]
func.func @transpose_of_unit_dims(%x: tensor<1x128x768xf32>) -> (tensor<128x1x768xf32>, tensor<1x768x128xf32>) {
  %t = paddle.transpose %x perm = [1, 0, 2] : tensor<1x128x768xf32> -> tensor<128x1x768xf32>
  %u = paddle.transpose %x perm = [0, 2, 1] : tensor<1x128x768xf32> -> tensor<1x768x128xf32>
  return %t, %u : tensor<128x1x768xf32>, tensor<1x768x128xf32>
}

// -----

// k of an attention: heads-major, a unit batch dim, then the last two dims
// swapped, is one transpose.
// CHECK-LABEL: func @transpose_through_unit_reshape
// CHECK-SAME: (%[[X:.*]]: tensor<128x12x64xf32>)
// CHECK: %[[T:.*]] = paddle.transpose %[[X]] perm = [1, 2, 0] : tensor<128x12x64xf32> -> tensor<12x64x128xf32>
// CHECK: %[[R:.*]] = paddle.reshape %[[T]] shape = [1, 12, 64, 128] : tensor<12x64x128xf32> -> tensor<1x12x64x128xf32>
// CHECK: return %[[R]]
func.func @transpose_through_unit_reshape(%x: tensor<128x12x64xf32>) -> tensor<1x12x64x128xf32> {
  %t = paddle.transpose %x perm = [1, 0, 2] : tensor<128x12x64xf32> -> tensor<12x128x64xf32>
  %r = paddle.reshape %t shape = [1, 12, 128, 64] : tensor<12x128x64xf32> -> tensor<1x12x128x64xf32>
  %k = paddle.transpose %r perm = [0, 1, 3, 2] : tensor<1x12x128x64xf32> -> tensor<1x12x64x128xf32>
  return %k : tensor<1x12x64x128xf32>
}

// -----

// Without a transpose under the reshape nothing merges: left alone.
// CHECK-LABEL: func @transpose_through_unit_reshape_no
// CHECK: paddle.reshape
// CHECK: paddle.transpose
func.func @transpose_through_unit_reshape_no(%x: tensor<12x128x64xf32>) -> tensor<1x12x64x128xf32> {
  %r = paddle.reshape %x shape = [1, 12, 128, 64] : tensor<12x128x64xf32> -> tensor<1x12x128x64xf32>
  %k = paddle.transpose %r perm = [0, 1, 3, 2] : tensor<1x12x128x64xf32> -> tensor<1x12x64x128xf32>
  return %k : tensor<1x12x64x128xf32>
}

// -----

// Scales of q and k move behind the matmul and fold into one constant.
// CHECK-LABEL: func @scale_out_of_matmul
// CHECK-SAME: (%[[Q:.*]]: tensor<2x8x4xf32>, %[[K:.*]]: tensor<2x4x8xf32>)
// CHECK: %[[S:.*]] = paddle.constant dense<1.250000e-01> : tensor<1xf32>
// CHECK: %[[M:.*]] = paddle.matmul %[[Q]], %[[K]]
// CHECK: %[[R:.*]] = paddle.mul %[[M]], %[[S]] : tensor<2x8x8xf32>, tensor<1xf32> -> tensor<2x8x8xf32>
// CHECK: return %[[R]]
func.func @scale_out_of_matmul(%q: tensor<2x8x4xf32>, %k: tensor<2x4x8xf32>) -> tensor<2x8x8xf32> {
  %s = paddle.constant dense<0.25> : tensor<1xf32>
  %t = paddle.constant dense<0.5> : tensor<1xf32>
  %qs = paddle.mul %q, %s : tensor<2x8x4xf32>, tensor<1xf32> -> tensor<2x8x4xf32>
  %ks = paddle.mul %t, %k : tensor<1xf32>, tensor<2x4x8xf32> -> tensor<2x4x8xf32>
  %m = paddle.matmul %qs, %ks : tensor<2x8x4xf32>, tensor<2x4x8xf32> -> tensor<2x8x8xf32>
  return %m : tensor<2x8x8xf32>
}

// -----

// Not for a factor with more than one element, nor one whose broadcast
// adds dims to the result, nor after an elementwise op (GELU's 0.5: the
// scale is free in the GELU's kernel or oneDNN post-op), nor for a scaled
// operand that something else reads too (the scaling stays anyway).
// CHECK-LABEL: func @scale_out_of_matmul_no
// CHECK: %[[A:.*]] = paddle.mul
// CHECK: paddle.matmul %[[A]]
// CHECK: %[[B:.*]] = paddle.mul
// CHECK: paddle.matmul %[[B]]
// CHECK: paddle.erf
// CHECK: %[[G:.*]] = paddle.mul
// CHECK: paddle.matmul %[[G]]
// CHECK: %[[T:.*]] = paddle.mul %{{.*}}, %{{.*}} : tensor<4x8xf32>, tensor<f32>
// CHECK: %[[P:.*]] = paddle.matmul %{{.*}}, %[[T]]
// CHECK: return %{{.*}}, %{{.*}}, %{{.*}}, %[[P]], %[[T]]
func.func @scale_out_of_matmul_no(%a: tensor<8x4xf32>, %b: tensor<4x8xf32>, %c: tensor<1x1x1xf32>) -> (tensor<8x8xf32>, tensor<1x8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<4x8xf32>) {
  %s = paddle.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  %as = paddle.mul %a, %s : tensor<8x4xf32>, tensor<4xf32> -> tensor<8x4xf32>
  %m = paddle.matmul %as, %b : tensor<8x4xf32>, tensor<4x8xf32> -> tensor<8x8xf32>
  %ac = paddle.mul %a, %c : tensor<8x4xf32>, tensor<1x1x1xf32> -> tensor<1x8x4xf32>
  %n = paddle.matmul %ac, %b : tensor<1x8x4xf32>, tensor<4x8xf32> -> tensor<1x8x8xf32>
  %half = paddle.constant dense<0.5> : tensor<f32>
  %e = paddle.erf %a : tensor<8x4xf32> -> tensor<8x4xf32>
  %g = paddle.mul %e, %half : tensor<8x4xf32>, tensor<f32> -> tensor<8x4xf32>
  %o = paddle.matmul %g, %b : tensor<8x4xf32>, tensor<4x8xf32> -> tensor<8x8xf32>
  %bt = paddle.transpose %b perm = [0, 1] : tensor<4x8xf32> -> tensor<4x8xf32>
  %bs = paddle.mul %bt, %half : tensor<4x8xf32>, tensor<f32> -> tensor<4x8xf32>
  %p = paddle.matmul %a, %bs : tensor<8x4xf32>, tensor<4x8xf32> -> tensor<8x8xf32>
  return %m, %n, %o, %p, %bs : tensor<8x8xf32>, tensor<1x8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<4x8xf32>
}

// -----

// The weight gradient of a Linear layer as reverse-mode autodiff writes it,
// transpose(transpose(x) @ dy): the gradient comes out of
// matmul(transpose(dy), x) in its own layout, and only dy (64x256) is
// transposed instead of x (64x784) and the whole gradient (256x784).
// Batched, the batch dim stays in place.
// CHECK-LABEL: func.func @transpose_of_matmul
// CHECK: %[[DT:.*]] = paddle.transpose %arg1 perm = [1, 0] : tensor<64x256xf32> -> tensor<256x64xf32>
// CHECK: %[[W:.*]] = paddle.matmul %[[DT]], %arg0 : tensor<256x64xf32>, tensor<64x784xf32> -> tensor<256x784xf32>
// CHECK: %[[BT:.*]] = paddle.transpose %arg3 perm = [0, 2, 1] : tensor<4x16x8xf32> -> tensor<4x8x16xf32>
// CHECK: %[[B:.*]] = paddle.matmul %[[BT]], %arg2 : tensor<4x8x16xf32>, tensor<4x16x64xf32> -> tensor<4x8x64xf32>
// CHECK-NOT: paddle.transpose
// CHECK: return %[[W]], %[[B]]
func.func @transpose_of_matmul(%x: tensor<64x784xf32>, %dy: tensor<64x256xf32>, %p: tensor<4x16x64xf32>, %q: tensor<4x16x8xf32>) -> (tensor<256x784xf32>, tensor<4x8x64xf32>) {
  %xt = paddle.transpose %x perm = [1, 0] : tensor<64x784xf32> -> tensor<784x64xf32>
  %g = paddle.matmul %xt, %dy : tensor<784x64xf32>, tensor<64x256xf32> -> tensor<784x256xf32>
  %w = paddle.transpose %g perm = [1, 0] : tensor<784x256xf32> -> tensor<256x784xf32>
  %pt = paddle.transpose %p perm = [0, 2, 1] : tensor<4x16x64xf32> -> tensor<4x64x16xf32>
  %h = paddle.matmul %pt, %q : tensor<4x64x16xf32>, tensor<4x16x8xf32> -> tensor<4x64x8xf32>
  %b = paddle.transpose %h perm = [0, 2, 1] : tensor<4x64x8xf32> -> tensor<4x8x64xf32>
  return %w, %b : tensor<256x784xf32>, tensor<4x8x64xf32>
}

// -----

// Left as they are: a product smaller than its operands (moving both
// would cost more than the one transpose), a product read twice, a
// transpose that is not a swap of the last two dims, and a batch dim
// broadcast in.
// CHECK-LABEL: func.func @transpose_of_matmul_no
// CHECK-COUNT-4: paddle.transpose %{{.*}} perm
// CHECK-NOT: paddle.transpose
func.func @transpose_of_matmul_no(%a: tensor<8x512xf32>, %b: tensor<512x8xf32>, %c: tensor<2x8x8xf32>, %d: tensor<8x8xf32>) -> (tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x2x8xf32>, tensor<2x8x8xf32>) {
  %m = paddle.matmul %a, %b : tensor<8x512xf32>, tensor<512x8xf32> -> tensor<8x8xf32>
  %t = paddle.transpose %m perm = [1, 0] : tensor<8x8xf32> -> tensor<8x8xf32>
  %n = paddle.matmul %d, %d : tensor<8x8xf32>, tensor<8x8xf32> -> tensor<8x8xf32>
  %u = paddle.transpose %n perm = [1, 0] : tensor<8x8xf32> -> tensor<8x8xf32>
  %o = paddle.matmul %c, %c : tensor<2x8x8xf32>, tensor<2x8x8xf32> -> tensor<2x8x8xf32>
  %v = paddle.transpose %o perm = [1, 0, 2] : tensor<2x8x8xf32> -> tensor<8x2x8xf32>
  %x = paddle.matmul %c, %d : tensor<2x8x8xf32>, tensor<8x8xf32> -> tensor<2x8x8xf32>
  %y = paddle.transpose %x perm = [0, 2, 1] : tensor<2x8x8xf32> -> tensor<2x8x8xf32>
  return %t, %u, %n, %v, %y : tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x2x8xf32>, tensor<2x8x8xf32>
}
