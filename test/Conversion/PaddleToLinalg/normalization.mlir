// RUN: paddle-opt %s --paddle-convert-paddle-to-linalg --split-input-file | FileCheck %s

// softmax: the max along the axis, exp(x - max) once into a tensor of the
// compute type, its sum along the axis, then one broadcasting division;
// f16 computes in f32.
// CHECK-DAG: #[[$ID:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[$ROW:.*]] = affine_map<(d0, d1) -> (d0)>
// CHECK-DAG: #[[$BCAST:.*]] = affine_map<(d0, d1) -> (d0, 0)>
// CHECK-LABEL: func @softmax_f16
// CHECK-SAME: (%[[X:.*]]: tensor<?x10xf16>)
// CHECK: %[[NEGINF:.*]] = arith.constant 0xFF800000 : f32
// CHECK: %[[MAXINIT:.*]] = linalg.fill ins(%[[NEGINF]] : f32)
// CHECK: %[[MAX:.*]] = linalg.generic {indexing_maps = [#[[$ID]], #[[$ROW]]], iterator_types = ["parallel", "reduction"]}
// CHECK-SAME: ins(%[[X]] : tensor<?x10xf16>) outs(%[[MAXINIT]] : tensor<?xf32>)
// CHECK: arith.extf %{{.*}} : f16 to f32
// CHECK: arith.maximumf
// CHECK: %[[MAXE:.*]] = tensor.expand_shape %[[MAX]] {{\[\[}}0, 1]] output_shape [%{{.*}}, 1] : tensor<?xf32> into tensor<?x1xf32>
// CHECK: %[[EXP:.*]] = linalg.generic {indexing_maps = [#[[$ID]], #[[$BCAST]], #[[$ID]]], iterator_types = ["parallel", "parallel"]}
// CHECK-SAME: ins(%[[X]], %[[MAXE]] : tensor<?x10xf16>, tensor<?x1xf32>) outs(%{{.*}} : tensor<?x10xf32>)
// CHECK: arith.subf
// CHECK: math.exp
// CHECK: %[[SUM:.*]] = linalg.generic {indexing_maps = [#[[$ID]], #[[$ROW]]], iterator_types = ["parallel", "reduction"]}
// CHECK-SAME: ins(%[[EXP]] : tensor<?x10xf32>) outs(%{{.*}} : tensor<?xf32>)
// CHECK: arith.addf
// CHECK: %[[SUME:.*]] = tensor.expand_shape %[[SUM]]
// CHECK: linalg.generic {indexing_maps = [#[[$ID]], #[[$BCAST]], #[[$ID]]], iterator_types = ["parallel", "parallel"]}
// CHECK-SAME: ins(%[[EXP]], %[[SUME]] : tensor<?x10xf32>, tensor<?x1xf32>)
// CHECK-NOT: math.exp
// CHECK: arith.divf
// CHECK: arith.truncf %{{.*}} : f32 to f16
func.func @softmax_f16(%x: tensor<?x10xf16>) -> tensor<?x10xf16> {
  %0 = paddle.softmax %x axis = 1 : tensor<?x10xf16> -> tensor<?x10xf16>
  return %0 : tensor<?x10xf16>
}

// -----

// log_softmax subtracts the log of the sum instead of dividing.
// CHECK-LABEL: func @log_softmax
// CHECK: linalg.generic {{.*}} iterator_types = ["reduction", "parallel"]
// CHECK: arith.maximumf
// CHECK: linalg.generic {{.*}} iterator_types = ["reduction", "parallel"]
// CHECK: math.exp
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel"]
// CHECK: %[[SHIFTED:.*]] = arith.subf
// CHECK: %[[LOG:.*]] = math.log
// CHECK: arith.subf %[[SHIFTED]], %[[LOG]] : f32
func.func @log_softmax(%x: tensor<4x?xf32>) -> tensor<4x?xf32> {
  %0 = paddle.log_softmax %x axis = -2 : tensor<4x?xf32> -> tensor<4x?xf32>
  return %0 : tensor<4x?xf32>
}

// -----

// layer_norm: the mean, then the sum of squared deviations (two passes),
// 1 / sqrt(var + eps) per row, then x - mean times it, scale and bias
// broadcast with x (no division per element).
// CHECK-LABEL: func @layer_norm
// CHECK-SAME: (%[[X:.*]]: tensor<?x4x8xf32>, %[[G:.*]]: tensor<8xf32>, %[[B:.*]]: tensor<4x1xf32>)
// CHECK: %[[COUNT:.*]] = arith.sitofp %{{.*}} : i64 to f32
// CHECK: %[[EPS:.*]] = arith.constant 1.000000e-03 : f32
// CHECK: %[[SUM:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction", "reduction"]
// CHECK-SAME: ins(%[[X]] : tensor<?x4x8xf32>)
// CHECK: %[[MEAN:.*]] = linalg.generic
// CHECK-SAME: ins(%[[SUM]] : tensor<?xf32>)
// CHECK: arith.divf %{{.*}}, %[[COUNT]]
// CHECK: %[[SQ:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction", "reduction"]
// CHECK-SAME: ins(%[[X]], %[[MEAN]] : tensor<?x4x8xf32>, tensor<?xf32>)
// CHECK: arith.mulf
// CHECK: %[[STD:.*]] = linalg.generic
// CHECK-SAME: ins(%[[SQ]] : tensor<?xf32>)
// CHECK: arith.addf %{{.*}}, %[[EPS]]
// CHECK: math.sqrt
// CHECK: arith.divf
// CHECK: linalg.generic
// CHECK-SAME: ins(%[[X]], %{{.*}}, %{{.*}}, %[[G]], %[[B]] : tensor<?x4x8xf32>, tensor<?x1x1xf32>, tensor<?x1x1xf32>, tensor<8xf32>, tensor<4x1xf32>)
// CHECK: arith.subf
// CHECK-NEXT: arith.mulf
// CHECK-NEXT: arith.mulf
// CHECK-NEXT: arith.addf
func.func @layer_norm(%x: tensor<?x4x8xf32>, %g: tensor<8xf32>, %b: tensor<4x1xf32>) -> tensor<?x4x8xf32> {
  %0 = paddle.layer_norm %x scale %g bias %b axes = [1, 2] {epsilon = 1.0e-3 : f64} : tensor<?x4x8xf32>, tensor<8xf32>, tensor<4x1xf32> -> tensor<?x4x8xf32>
  return %0 : tensor<?x4x8xf32>
}

// -----

// batch_norm_inference: the parameters are expanded to [1, C, 1] and read
// along dim 1; a dynamic C is checked against x.
// CHECK-DAG: #[[$CHAN:.*]] = affine_map<(d0, d1, d2) -> (0, d1, 0)>
// CHECK-LABEL: func @batch_norm
// CHECK-SAME: (%[[X:.*]]: tensor<?x3x4xf32>, %[[P:.*]]: tensor<?xf32>, %[[Q:.*]]: tensor<3xf32>)
// CHECK: %[[PE:.*]] = tensor.expand_shape %[[P]] {{\[\[}}0, 1, 2]] output_shape [1, %{{.*}}, 1] : tensor<?xf32> into tensor<1x?x1xf32>
// CHECK: %[[QE:.*]] = tensor.expand_shape %[[Q]] {{\[\[}}0, 1, 2]] output_shape [1, 3, 1] : tensor<3xf32> into tensor<1x3x1xf32>
// CHECK: %[[C:.*]] = tensor.dim %[[PE]], %{{.*}} : tensor<1x?x1xf32>
// CHECK: %[[EQ:.*]] = arith.cmpi eq, %[[C]], %{{.*}} : index
// CHECK: cf.assert %[[EQ]]
// CHECK: linalg.generic {indexing_maps = [#{{.*}}, #[[$CHAN]], #[[$CHAN]], #[[$CHAN]], #[[$CHAN]], #{{.*}}]
// CHECK: math.sqrt
// CHECK: arith.divf
func.func @batch_norm(%x: tensor<?x3x4xf32>, %p: tensor<?xf32>, %q: tensor<3xf32>) -> tensor<?x3x4xf32> {
  %0 = paddle.batch_norm_inference %x, %p, %q, %p, %q : tensor<?x3x4xf32>, tensor<?xf32>, tensor<3xf32>, tensor<?xf32>, tensor<3xf32> -> tensor<?x3x4xf32>
  return %0 : tensor<?x3x4xf32>
}
