// RUN: paddle-opt %s --paddle-convert-paddle-to-linalg --split-input-file | FileCheck %s

// A rank-2 matmul is a linalg.matmul into a zero-filled accumulator.
// CHECK-LABEL: func @matmul_2d
// CHECK-SAME: (%[[A:.*]]: tensor<3x4xf32>, %[[B:.*]]: tensor<4x?xf32>)
// CHECK: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[INIT:.*]] = tensor.empty(%{{.*}}) : tensor<3x?xf32>
// CHECK: %[[FILL:.*]] = linalg.fill ins(%[[ZERO]] : f32) outs(%[[INIT]] : tensor<3x?xf32>)
// CHECK: %[[MM:.*]] = linalg.matmul ins(%[[A]], %[[B]] : tensor<3x4xf32>, tensor<4x?xf32>) outs(%[[FILL]] : tensor<3x?xf32>)
// CHECK: return %[[MM]]
func.func @matmul_2d(%a: tensor<3x4xf32>, %b: tensor<4x?xf32>) -> tensor<3x?xf32> {
  %0 = paddle.matmul %a, %b : tensor<3x4xf32>, tensor<4x?xf32> -> tensor<3x?xf32>
  return %0 : tensor<3x?xf32>
}

// -----

// Batch dims broadcast (size 1 -> 5, missing -> ?), are folded into one for
// linalg.batch_matmul and split again; f16 accumulates in f32.
// CHECK-DAG: #[[$LHS:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, 0, d2, d3)>
// CHECK-DAG: #[[$RHS:.*]] = affine_map<(d0, d1, d2, d3) -> (d1, d2, d3)>
// CHECK-LABEL: func @matmul_batched
// CHECK-SAME: (%[[A:.*]]: tensor<?x1x3x4xf16>, %[[B:.*]]: tensor<5x4x6xf16>)
// CHECK: %[[BA:.*]] = linalg.generic {indexing_maps = [#[[$LHS]], #{{.*}}]{{.*}} ins(%[[A]] : tensor<?x1x3x4xf16>) outs(%{{.*}} : tensor<?x5x3x4xf16>)
// CHECK: %[[BB:.*]] = linalg.generic {indexing_maps = [#[[$RHS]], #{{.*}}]{{.*}} ins(%[[B]] : tensor<5x4x6xf16>) outs(%{{.*}} : tensor<?x5x4x6xf16>)
// CHECK: %[[CA:.*]] = tensor.collapse_shape %[[BA]] {{\[}}[0, 1], [2], [3]] : tensor<?x5x3x4xf16> into tensor<?x3x4xf16>
// CHECK: %[[CB:.*]] = tensor.collapse_shape %[[BB]] {{\[}}[0, 1], [2], [3]] : tensor<?x5x4x6xf16> into tensor<?x4x6xf16>
// CHECK: %[[FILL:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<?x3x6xf32>)
// CHECK: %[[BMM:.*]] = linalg.batch_matmul ins(%[[CA]], %[[CB]] : tensor<?x3x4xf16>, tensor<?x4x6xf16>) outs(%[[FILL]] : tensor<?x3x6xf32>)
// CHECK: %[[E:.*]] = tensor.expand_shape %[[BMM]] {{\[}}[0, 1], [2], [3]] output_shape [%{{.*}}, 5, 3, 6] : tensor<?x3x6xf32> into tensor<?x5x3x6xf32>
// CHECK: linalg.generic
// CHECK-SAME: ins(%[[E]] : tensor<?x5x3x6xf32>) outs(%{{.*}} : tensor<?x5x3x6xf16>)
// CHECK: arith.truncf %{{.*}} : f32 to f16
func.func @matmul_batched(%a: tensor<?x1x3x4xf16>, %b: tensor<5x4x6xf16>) -> tensor<?x5x3x6xf16> {
  %0 = paddle.matmul %a, %b : tensor<?x1x3x4xf16>, tensor<5x4x6xf16> -> tensor<?x5x3x6xf16>
  return %0 : tensor<?x5x3x6xf16>
}

// -----

// A batched lhs times a matrix (unit batch dims on the rhs): the batch dims
// fold into the rows of one linalg.matmul, and no copy of the matrix is made.
// CHECK-LABEL: func @matmul_batched_lhs_times_matrix
// CHECK-SAME: (%[[A:.*]]: tensor<?x128x64xf32>, %[[B:.*]]: tensor<1x64x32xf32>)
// CHECK-NOT: linalg.generic
// CHECK: %[[CA:.*]] = tensor.collapse_shape %[[A]] {{\[}}[0, 1], [2]] : tensor<?x128x64xf32> into tensor<?x64xf32>
// CHECK: %[[CB:.*]] = tensor.collapse_shape %[[B]] {{\[}}[0, 1], [2]] : tensor<1x64x32xf32> into tensor<64x32xf32>
// CHECK: %[[FILL:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<?x32xf32>)
// CHECK: %[[MM:.*]] = linalg.matmul ins(%[[CA]], %[[CB]] : tensor<?x64xf32>, tensor<64x32xf32>) outs(%[[FILL]] : tensor<?x32xf32>)
// CHECK: %[[E:.*]] = tensor.expand_shape %[[MM]] {{\[}}[0, 1], [2]] output_shape [%{{.*}}, 128, 32] : tensor<?x32xf32> into tensor<?x128x32xf32>
// CHECK-NOT: linalg.generic
// CHECK: return %[[E]]
func.func @matmul_batched_lhs_times_matrix(%a: tensor<?x128x64xf32>, %b: tensor<1x64x32xf32>) -> tensor<?x128x32xf32> {
  %0 = paddle.matmul %a, %b : tensor<?x128x64xf32>, tensor<1x64x32xf32> -> tensor<?x128x32xf32>
  return %0 : tensor<?x128x32xf32>
}

// -----

// Vectors are promoted to [1, K] and [K, 1]; the added dims are dropped.
// CHECK-LABEL: func @matmul_vectors
// CHECK-SAME: (%[[A:.*]]: tensor<4xi32>, %[[B:.*]]: tensor<4xi32>)
// CHECK: %[[EA:.*]] = tensor.expand_shape %[[A]] {{\[}}[0, 1]] output_shape [1, 4] : tensor<4xi32> into tensor<1x4xi32>
// CHECK: %[[EB:.*]] = tensor.expand_shape %[[B]] {{\[}}[0, 1]] output_shape [4, 1] : tensor<4xi32> into tensor<4x1xi32>
// CHECK: %[[MM:.*]] = linalg.matmul ins(%[[EA]], %[[EB]] : tensor<1x4xi32>, tensor<4x1xi32>)
// CHECK: %[[R:.*]] = tensor.collapse_shape %[[MM]] [] : tensor<1x1xi32> into tensor<i32>
// CHECK: return %[[R]]
func.func @matmul_vectors(%a: tensor<4xi32>, %b: tensor<4xi32>) -> tensor<i32> {
  %0 = paddle.matmul %a, %b : tensor<4xi32>, tensor<4xi32> -> tensor<i32>
  return %0 : tensor<i32>
}

// -----

// Two dynamic batch dims stay separate, in a contraction linalg.generic.
// CHECK-DAG: #[[$A:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d4)>
// CHECK-DAG: #[[$B:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d4, d3)>
// CHECK-DAG: #[[$C:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>
// CHECK-LABEL: func @matmul_dynamic_batch
// CHECK: linalg.generic {indexing_maps = [#[[$A]], #[[$B]], #[[$C]]], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
// CHECK: arith.mulf
// CHECK: arith.addf
func.func @matmul_dynamic_batch(%a: tensor<?x?x3x4xf32>, %b: tensor<?x?x4x5xf32>) -> tensor<?x?x3x5xf32> {
  %0 = paddle.matmul %a, %b : tensor<?x?x3x4xf32>, tensor<?x?x4x5xf32> -> tensor<?x?x3x5xf32>
  return %0 : tensor<?x?x3x5xf32>
}

// -----

// CHECK-LABEL: func @conv2d
// CHECK-SAME: (%[[X:.*]]: tensor<?x3x8x8xf32>, %[[W:.*]]: tensor<4x3x3x3xf32>)
// CHECK: %[[FILL:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<?x4x3x6xf32>)
// CHECK: %[[C:.*]] = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<[2, 1]> : tensor<2xi64>} ins(%[[X]], %[[W]] : tensor<?x3x8x8xf32>, tensor<4x3x3x3xf32>) outs(%[[FILL]] : tensor<?x4x3x6xf32>)
// CHECK: return %[[C]]
func.func @conv2d(%x: tensor<?x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<?x4x3x6xf32> {
  %0 = paddle.conv2d %x, %w {strides = array<i64: 2, 1>} : tensor<?x3x8x8xf32>, tensor<4x3x3x3xf32> -> tensor<?x4x3x6xf32>
  return %0 : tensor<?x4x3x6xf32>
}

// -----

// A dynamic spatial size: the padded input must hold the dilated kernel
// (the verifier checks static sizes), as must a dynamic kernel be non-empty;
// both are checked before the output size is computed.
// CHECK-LABEL: func @conv2d_dynamic_spatial
// CHECK-SAME: (%[[X:.*]]: tensor<1x1x?x?xf32>, %[[W:.*]]: tensor<1x1x3x?xf32>)
// CHECK: %[[KW:.*]] = tensor.dim %[[W]], %{{.*}} : tensor<1x1x3x?xf32>
// CHECK: cf.assert %{{.*}}, "{{.*}}.mlir:[[# @LINE + 6]]:8: paddle.conv2d: the padded input is smaller than the dilated kernel"
// CHECK: %[[KOK:.*]] = arith.cmpi sge, %[[KW]], %{{.*}} : index
// CHECK: cf.assert %[[KOK]], "{{.*}}.mlir:[[# @LINE + 4]]:8: paddle.conv2d: the filter has a spatial size of 0"
// CHECK: cf.assert %{{.*}}, "{{.*}}.mlir:[[# @LINE + 3]]:8: paddle.conv2d: the padded input is smaller than the dilated kernel"
// CHECK: linalg.conv_2d_nchw_fchw {dilations = dense<[2, 1]> : tensor<2xi64>
func.func @conv2d_dynamic_spatial(%x: tensor<1x1x?x?xf32>, %w: tensor<1x1x3x?xf32>) -> tensor<1x1x?x?xf32> {
  %0 = paddle.conv2d %x, %w {dilations = array<i64: 2, 1>}
      : tensor<1x1x?x?xf32>, tensor<1x1x3x?xf32> -> tensor<1x1x?x?xf32>
  return %0 : tensor<1x1x?x?xf32>
}

// -----

// Zero padding, marked with its sizes (top, left, bottom, right) for
// paddle-use-onednn, then the channels split into groups for the grouped
// conv.
// CHECK-LABEL: func @conv2d_groups
// CHECK-SAME: (%[[X:.*]]: tensor<?x4x9x?xf32>, %[[W:.*]]: tensor<6x2x3x3xf32>)
// CHECK: %[[P:.*]] = linalg.generic
// CHECK-SAME: outs(%{{.*}} : tensor<?x4x11x?xf32>)
// CHECK-SAME: paddle.zero_pad = array<i64: 1, 1, 1, 1>
// CHECK: %[[V:.*]] = tensor.extract %[[X]]
// CHECK: arith.select %{{.*}}, %[[V]], %{{.*}} : f32
// CHECK: %[[EX:.*]] = tensor.expand_shape %[[P]] {{\[}}[0], [1, 2], [3], [4]] output_shape [%{{.*}}, 2, 2, 11, %{{.*}}] : tensor<?x4x11x?xf32> into tensor<?x2x2x11x?xf32>
// CHECK: %[[EW:.*]] = tensor.expand_shape %[[W]] {{\[}}[0, 1], [2], [3], [4]] output_shape [2, 3, 2, 3, 3] : tensor<6x2x3x3xf32> into tensor<2x3x2x3x3xf32>
// CHECK: %[[C:.*]] = linalg.conv_2d_ngchw_gfchw {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%[[EX]], %[[EW]] : tensor<?x2x2x11x?xf32>, tensor<2x3x2x3x3xf32>) outs(%{{.*}} : tensor<?x2x3x5x?xf32>)
// CHECK: %[[R:.*]] = tensor.collapse_shape %[[C]] {{\[}}[0], [1, 2], [3], [4]] : tensor<?x2x3x5x?xf32> into tensor<?x6x5x?xf32>
// CHECK: return %[[R]]
func.func @conv2d_groups(%x: tensor<?x4x9x?xf32>, %w: tensor<6x2x3x3xf32>) -> tensor<?x6x5x?xf32> {
  %0 = paddle.conv2d %x, %w {strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>, groups = 2}
      : tensor<?x4x9x?xf32>, tensor<6x2x3x3xf32> -> tensor<?x6x5x?xf32>
  return %0 : tensor<?x6x5x?xf32>
}

// -----

// Max pooling pads with the lowest value, never 0 (no zero_pad marker; the
// max_pool_pad marker, with the static padding sizes).
// CHECK-LABEL: func @max_pool_int
// CHECK: %[[P:.*]] = linalg.generic
// CHECK-SAME: outs(%{{.*}} : tensor<1x2x7x7xi32>)
// CHECK-NOT: paddle.zero_pad
// CHECK-SAME: paddle.max_pool_pad = array<i64: 1, 1, 1, 1>
// CHECK: arith.select %{{.*}}, %{{.*}}, %[[MIN:.*]] : i32
// CHECK: %[[FILL:.*]] = linalg.fill ins(%{{.*}} : i32) outs(%{{.*}} : tensor<1x2x3x3xi32>)
// CHECK: %[[WIN:.*]] = tensor.empty() : tensor<3x3xi32>
// CHECK: %[[R:.*]] = linalg.pooling_nchw_max {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%[[P]], %[[WIN]] : tensor<1x2x7x7xi32>, tensor<3x3xi32>) outs(%[[FILL]] : tensor<1x2x3x3xi32>)
// CHECK: return %[[R]]
func.func @max_pool_int(%x: tensor<1x2x5x5xi32>) -> tensor<1x2x3x3xi32> {
  %0 = paddle.max_pool2d %x {kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>}
      : tensor<1x2x5x5xi32> -> tensor<1x2x3x3xi32>
  return %0 : tensor<1x2x3x3xi32>
}

// -----

// In ceil mode the last window needs an extra padded row and column: the
// marker's bottom and right sizes include them ((4 - 1) * 2 + 3 = 9 rows of
// the padded input, 6 + 1 + 2).
// CHECK-LABEL: func @max_pool_ceil
// CHECK: linalg.generic
// CHECK-SAME: outs(%{{.*}} : tensor<1x2x9x9xf32>)
// CHECK-SAME: paddle.max_pool_pad = array<i64: 1, 1, 2, 2>
// CHECK: arith.select %{{.*}}, %{{.*}}, %[[NINF:.*]] : f32
// CHECK: linalg.pooling_nchw_max
// CHECK-SAME: outs(%{{.*}} : tensor<1x2x4x4xf32>)
func.func @max_pool_ceil(%x: tensor<1x2x6x6xf32>) -> tensor<1x2x4x4xf32> {
  %0 = paddle.max_pool2d %x {kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>,
                             padding = array<i64: 1, 1, 1, 1>, ceil_mode}
      : tensor<1x2x6x6xf32> -> tensor<1x2x4x4xf32>
  return %0 : tensor<1x2x4x4xf32>
}

// -----

// A dynamic spatial size: the bottom padding is only known at run time,
// and the padding copy carries no marker.
// CHECK-LABEL: func @max_pool_dynamic
// CHECK: linalg.generic
// CHECK-NOT: paddle.max_pool_pad
// CHECK: linalg.pooling_nchw_max
func.func @max_pool_dynamic(%x: tensor<1x2x?x6xf32>) -> tensor<1x2x?x4xf32> {
  %0 = paddle.max_pool2d %x {kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>,
                             padding = array<i64: 1, 1, 1, 1>, ceil_mode}
      : tensor<1x2x?x6xf32> -> tensor<1x2x?x4xf32>
  return %0 : tensor<1x2x?x4xf32>
}

// -----

// Average pooling: the window sum, then a division by the divisor computed
// from the output position; a dynamic size is checked at run time.
// CHECK-LABEL: func @avg_pool_dynamic
// CHECK: cf.assert %{{.*}}, "{{.*}}.mlir:{{[0-9]+}}:{{[0-9]+}}: paddle.avg_pool2d: input is smaller than the kernel"
// CHECK: %[[SUM:.*]] = linalg.pooling_nchw_sum {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
// CHECK-SAME: outs(%{{.*}} : tensor<?x3x4x?xf32>)
// CHECK: linalg.generic
// CHECK-SAME: ins(%[[SUM]] : tensor<?x3x4x?xf32>)
// CHECK: linalg.index 2
// CHECK: linalg.index 3
// CHECK: %[[D:.*]] = arith.sitofp %{{.*}} : i64 to f32
// CHECK: arith.divf %{{.*}}, %[[D]] : f32
func.func @avg_pool_dynamic(%x: tensor<?x3x7x?xf32>) -> tensor<?x3x4x?xf32> {
  %0 = paddle.avg_pool2d %x {kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>,
                             padding = array<i64: 1, 1, 1, 1>, ceil_mode}
      : tensor<?x3x7x?xf32> -> tensor<?x3x4x?xf32>
  return %0 : tensor<?x3x4x?xf32>
}

// -----

// CHECK-LABEL: func @rng_uniform
// CHECK-SAME: (%[[S:.*]]: tensor<i64>, %[[N:.*]]: index)
// CHECK: %[[SEED:.*]] = tensor.extract %[[S]][] : tensor<i64>
// CHECK: %[[INIT:.*]] = tensor.empty(%[[N]]) : tensor<?x3xf32>
// CHECK: linalg.generic {{.*}} outs(%[[INIT]] : tensor<?x3xf32>)
// CHECK: linalg.index 0
// CHECK: linalg.index 1
// CHECK: arith.xori %[[SEED]]
// CHECK: arith.shrui
// CHECK: arith.uitofp %{{.*}} : i64 to f64
// CHECK: arith.truncf %{{.*}} : f64 to f32
func.func @rng_uniform(%s: tensor<i64>, %n: index) -> tensor<?x3xf32> {
  %0 = paddle.rng_uniform %s [%n] : tensor<i64> -> tensor<?x3xf32>
  return %0 : tensor<?x3xf32>
}
