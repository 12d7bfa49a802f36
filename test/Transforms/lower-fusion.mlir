// RUN: paddle-opt %s --split-input-file --paddle-fuse --paddle-convert-paddle-to-linalg --canonicalize --cse --paddle-lower-fusion | FileCheck %s

// softmax over rows with its scale prologue: one scf.forall over blocks of
// rows (8 x 128 rows, 32 per tile: 4096 elements), and inside it the row
// max, the exps, their row sum and the normalisation. exp(x - max) has two
// readers and is computed once per element, into the tile the loop
// inserts into its output, which the normalisation then divides in place.
// No paddle.fusion is left.
// CHECK-LABEL: func.func @softmax_rows
// CHECK-NOT: paddle.fusion
// CHECK: scf.forall (%{{.*}}, %{{.*}}) = (0, 0) to (8, 128) step (1, 32)
// CHECK: tensor.extract_slice %{{.*}} [1, 32, 128]
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction"]
// CHECK: arith.mulf
// CHECK: arith.maximumf
// CHECK: %[[EXP:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "parallel"]
// CHECK: math.exp
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction"]{{.*}} ins(%[[EXP]] :
// CHECK-NOT: math.exp
// CHECK: %[[NORM:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "parallel"]{{.*}} ins(%[[EXP]], %{{.*}} : {{.*}} outs(%[[EXP]] :
// CHECK-NOT: math.exp
// CHECK: arith.divf
// CHECK: tensor.parallel_insert_slice %[[NORM]]
func.func @softmax_rows(%x: tensor<8x128x128xf32>) -> tensor<8x128x128xf32> {
  %c = paddle.constant dense<0.125> : tensor<f32>
  %t = paddle.mul %x, %c : tensor<8x128x128xf32>, tensor<f32> -> tensor<8x128x128xf32>
  %p = paddle.softmax %t axis = -1 : tensor<8x128x128xf32> -> tensor<8x128x128xf32>
  return %p : tensor<8x128x128xf32>
}

// -----

// The same with a unit batch dim (BERT's [1, 12, 128, 128] scores): unit-dim
// folding computes the group on [12, 128, 128] and expands the result at
// the end; the tile loop is still formed, under that expand_shape.
// CHECK-LABEL: func.func @softmax_rows_unit_dim
// CHECK: scf.forall (%{{.*}}, %{{.*}}) = (0, 0) to (12, 128) step (1, 32)
// CHECK: math.exp
// CHECK: tensor.parallel_insert_slice
// CHECK: tensor.expand_shape %{{.*}} {{\[}}[0, 1], [2], [3]] output_shape [1, 12, 128, 128]
func.func @softmax_rows_unit_dim(%x: tensor<1x12x128x128xf32>) -> tensor<1x12x128x128xf32> {
  %c = paddle.constant dense<0.125> : tensor<f32>
  %t = paddle.mul %x, %c : tensor<1x12x128x128xf32>, tensor<f32> -> tensor<1x12x128x128xf32>
  %p = paddle.softmax %t axis = -1 : tensor<1x12x128x128xf32> -> tensor<1x12x128x128xf32>
  return %p : tensor<1x12x128x128xf32>
}

// -----

// CSE gives equal matmuls one zero-filled accumulator; each writes it in
// place, so each gets its own fill (bufferization would copy the zeros).
// CHECK-LABEL: func.func @unshared_accumulators
// CHECK: %[[E1:.*]] = tensor.empty() : tensor<16x16xf32>
// CHECK: %[[F1:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[E1]] : tensor<16x16xf32>)
// CHECK: %[[E2:.*]] = tensor.empty() : tensor<16x16xf32>
// CHECK: %[[F2:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[E2]] : tensor<16x16xf32>)
// CHECK: linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<16x16xf32>, tensor<16x16xf32>) outs(%[[F2]]
// CHECK: linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<16x16xf32>, tensor<16x16xf32>) outs(%[[F1]]
func.func @unshared_accumulators(%a: tensor<16x16xf32>, %b: tensor<16x16xf32>) -> tensor<16x16xf32> {
  %m = paddle.matmul %a, %b : tensor<16x16xf32>, tensor<16x16xf32> -> tensor<16x16xf32>
  %n = paddle.matmul %m, %b : tensor<16x16xf32>, tensor<16x16xf32> -> tensor<16x16xf32>
  return %n : tensor<16x16xf32>
}

// -----

// layer_norm (+ residual): tiled along rows only (the reductions keep the
// rows; columns are reduced), 4096 / 768 -> 4 rows of 128 per tile. The
// maps of the row statistics (the mean, 1 / sqrt(var + eps)) stay generics
// over the tile's rows: fused into the normalisation, which reads them
// broadcast, they would be computed again for every element.
// CHECK-LABEL: func.func @layer_norm_rows
// CHECK: scf.forall (%{{.*}}) = (0) to (128) step (4)
// CHECK: iterator_types = ["parallel", "reduction"]
// CHECK: iterator_types = ["parallel"]
// CHECK: arith.divf
// CHECK: iterator_types = ["parallel", "reduction"]
// CHECK: iterator_types = ["parallel"]
// CHECK: math.sqrt
// CHECK: arith.divf
// CHECK: iterator_types = ["parallel", "parallel"]
// CHECK-NOT: math.sqrt
// CHECK-NOT: arith.divf
// CHECK: tensor.parallel_insert_slice
func.func @layer_norm_rows(%x: tensor<128x768xf32>, %r: tensor<128x768xf32>, %g: tensor<768xf32>, %b: tensor<768xf32>) -> tensor<128x768xf32> {
  %a = paddle.add %x, %r : tensor<128x768xf32>, tensor<128x768xf32> -> tensor<128x768xf32>
  %y = paddle.layer_norm %a scale %g bias %b axes = [-1] : tensor<128x768xf32>, tensor<768xf32>, tensor<768xf32> -> tensor<128x768xf32>
  return %y : tensor<128x768xf32>
}

// -----

// An elementwise group becomes one linalg.generic, no loop.
// CHECK-LABEL: func.func @elementwise_one_generic
// CHECK-NOT: scf.forall
// CHECK: linalg.generic
// CHECK: arith.addf
// CHECK: arith.maximumf
// CHECK-NOT: linalg.generic
// CHECK: return
func.func @elementwise_one_generic(%x: tensor<64x128xf32>, %b: tensor<128xf32>) -> tensor<64x128xf32> {
  %0 = paddle.add %x, %b : tensor<64x128xf32>, tensor<128xf32> -> tensor<64x128xf32>
  %1 = paddle.relu %0 : tensor<64x128xf32> -> tensor<64x128xf32>
  return %1 : tensor<64x128xf32>
}

// -----

// A matmul group keeps its named op (the library path and the matmul tiling
// recognise it) followed by one epilogue generic, and is not tiled here
// although the matmul has a reduction loop.
// CHECK-LABEL: func.func @matmul_group
// CHECK-NOT: scf.forall
// CHECK: linalg.matmul
// CHECK-NEXT: linalg.generic
// CHECK: math.tanh
// CHECK-NOT: linalg.generic
func.func @matmul_group(%x: tensor<64x64xf32>, %w: tensor<64x64xf32>, %b: tensor<64xf32>) -> tensor<64x64xf32> {
  %1 = paddle.matmul %x, %w : tensor<64x64xf32>, tensor<64x64xf32> -> tensor<64x64xf32>
  %2 = paddle.add %1, %b : tensor<64x64xf32>, tensor<64xf32> -> tensor<64x64xf32>
  %3 = paddle.tanh %2 : tensor<64x64xf32> -> tensor<64x64xf32>
  return %3 : tensor<64x64xf32>
}


// -----

// A Linear layer on [batch, seq, features]: the matmul runs over the folded
// rows, and its epilogue is collapsed the same way, so it reads the matmul's
// 2-D result (as the library path needs for post-ops) and only the group's
// result is expanded back.
// CHECK-LABEL: func.func @matmul_group_folded_rows
// CHECK: %[[A:.*]] = tensor.collapse_shape %{{.*}} {{\[}}[0, 1], [2]] : tensor<2x64x32xf32> into tensor<128x32xf32>
// CHECK: %[[MM:.*]] = linalg.matmul ins(%[[A]], %{{.*}} : tensor<128x32xf32>, tensor<32x48xf32>)
// CHECK: %[[E:.*]] = linalg.generic {{.*}} ins(%[[MM]], %{{.*}} : tensor<128x48xf32>, tensor<48xf32>)
// CHECK: math.tanh
// CHECK: tensor.expand_shape %[[E]] {{\[}}[0, 1], [2]] output_shape [2, 64, 48] : tensor<128x48xf32> into tensor<2x64x48xf32>
func.func @matmul_group_folded_rows(%x: tensor<2x64x32xf32>, %w: tensor<32x48xf32>, %b: tensor<48xf32>) -> tensor<2x64x48xf32> {
  %1 = paddle.matmul %x, %w : tensor<2x64x32xf32>, tensor<32x48xf32> -> tensor<2x64x48xf32>
  %2 = paddle.add %1, %b : tensor<2x64x48xf32>, tensor<48xf32> -> tensor<2x64x48xf32>
  %3 = paddle.tanh %2 : tensor<2x64x48xf32> -> tensor<2x64x48xf32>
  return %3 : tensor<2x64x48xf32>
}

// -----

// A transposed constant weight (ONNX Gemm with transB) is folded at compile
// time: no transpose is left to run on every call.
// CHECK-LABEL: func.func @transposed_constant_weight
// CHECK-NOT: linalg.transpose
// CHECK: arith.constant dense<{{\[}}[1.000000e+00, 3.000000e+00], [2.000000e+00, 4.000000e+00]]> : tensor<2x2xf32>
// CHECK: linalg.matmul
func.func @transposed_constant_weight(%x: tensor<4x2xf32>) -> tensor<4x2xf32> {
  %w = paddle.constant dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>
  %t = paddle.transpose %w perm = [1, 0] : tensor<2x2xf32> -> tensor<2x2xf32>
  %0 = paddle.matmul %x, %t : tensor<4x2xf32>, tensor<2x2xf32> -> tensor<4x2xf32>
  return %0 : tensor<4x2xf32>
}

// -----

// Multi-output fusion: the new moment m' is returned and also read by the
// parameter update. Both become one generic with two results, the return
// reads each from it: no other generic is left to compute m' again.
// CHECK-LABEL: func.func @returned_producer
// CHECK-NOT: linalg.generic
// CHECK: %[[F:.*]]:2 = linalg.generic {{.*}} ins(%arg0, %arg1, %arg2 :
// CHECK: linalg.yield %{{.*}}, %{{.*}} : f32, f32
// CHECK-NOT: linalg.generic
// CHECK: return %[[F]]#1, %[[F]]#0
func.func @returned_producer(%p: tensor<64x256xf32>, %m: tensor<64x256xf32>, %g: tensor<64x256xf32>) -> (tensor<64x256xf32>, tensor<64x256xf32>) {
  %b1 = paddle.constant dense<0.9> : tensor<f32>
  %b2 = paddle.constant dense<0.1> : tensor<f32>
  %lr = paddle.constant dense<0.01> : tensor<f32>
  %a = paddle.mul %m, %b1 : tensor<64x256xf32>, tensor<f32> -> tensor<64x256xf32>
  %b = paddle.mul %g, %b2 : tensor<64x256xf32>, tensor<f32> -> tensor<64x256xf32>
  %mn = paddle.add %a, %b : tensor<64x256xf32>, tensor<64x256xf32> -> tensor<64x256xf32>
  %s = paddle.mul %mn, %lr : tensor<64x256xf32>, tensor<f32> -> tensor<64x256xf32>
  %pn = paddle.sub %p, %s : tensor<64x256xf32>, tensor<64x256xf32> -> tensor<64x256xf32>
  return %pn, %mn : tensor<64x256xf32>, tensor<64x256xf32>
}

// -----

// Not multi-output fusion: the consumer reads the returned value broadcast
// (a row of it for every row), so the fused op would compute and write each
// element once per row. The two stay apart.
// CHECK-LABEL: func.func @returned_producer_read_broadcast
// CHECK: %[[R:.*]] = linalg.generic {{.*}} ins(%arg1 : tensor<256xf32>)
// CHECK: %[[O:.*]] = linalg.generic {{.*}} ins(%arg0, %[[R]] : tensor<64x256xf32>, tensor<256xf32>)
// CHECK: return %[[O]], %[[R]]
func.func @returned_producer_read_broadcast(%x: tensor<64x256xf32>, %v: tensor<256xf32>) -> (tensor<64x256xf32>, tensor<256xf32>) {
  %e = paddle.exp %v : tensor<256xf32> -> tensor<256xf32>
  %y = paddle.mul %x, %e : tensor<64x256xf32>, tensor<256xf32> -> tensor<64x256xf32>
  return %y, %e : tensor<64x256xf32>, tensor<256xf32>
}

// -----

// Not multi-output fusion either: the value has a second reader that is
// an op, not the return (the rule only covers values that leave the
// function), so each reader keeps reading it from memory.
// CHECK-LABEL: func.func @producer_with_two_readers
// CHECK: %[[E:.*]] = linalg.generic {{.*}} ins(%arg0 : tensor<64x256xf32>)
// CHECK: math.exp
// CHECK: linalg.generic {{.*}} ins(%[[E]], %arg1 :
// CHECK: linalg.generic {{.*}} ins(%[[E]], %arg2 :
func.func @producer_with_two_readers(%x: tensor<64x256xf32>, %a: tensor<64x256xf32>, %b: tensor<64x256xf32>) -> (tensor<64x256xf32>, tensor<64x256xf32>) {
  %e = paddle.exp %x : tensor<64x256xf32> -> tensor<64x256xf32>
  %y = paddle.add %e, %a : tensor<64x256xf32>, tensor<64x256xf32> -> tensor<64x256xf32>
  %z = paddle.mul %e, %b : tensor<64x256xf32>, tensor<64x256xf32> -> tensor<64x256xf32>
  return %y, %z : tensor<64x256xf32>, tensor<64x256xf32>
}

// -----

// The returned value read twice by its consumer (m' * m'): one multi-output
// op still, which reads m, g and p and never its own result.
// CHECK-LABEL: func.func @returned_producer_read_twice
// CHECK: %[[F:.*]]:2 = linalg.generic {{.*}} ins(%arg0, %arg1, %arg2 :
// CHECK-NOT: linalg.generic
// CHECK: return %[[F]]#1, %[[F]]#0
func.func @returned_producer_read_twice(%p: tensor<64x256xf32>, %m: tensor<64x256xf32>, %g: tensor<64x256xf32>) -> (tensor<64x256xf32>, tensor<64x256xf32>) {
  %b1 = paddle.constant dense<0.9> : tensor<f32>
  %a = paddle.mul %m, %b1 : tensor<64x256xf32>, tensor<f32> -> tensor<64x256xf32>
  %mn = paddle.add %a, %g : tensor<64x256xf32>, tensor<64x256xf32> -> tensor<64x256xf32>
  %s = paddle.mul %mn, %mn : tensor<64x256xf32>, tensor<64x256xf32> -> tensor<64x256xf32>
  %pn = paddle.sub %p, %s : tensor<64x256xf32>, tensor<64x256xf32> -> tensor<64x256xf32>
  return %pn, %mn : tensor<64x256xf32>, tensor<64x256xf32>
}
