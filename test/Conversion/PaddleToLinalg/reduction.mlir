// RUN: paddle-opt %s --paddle-convert-paddle-to-linalg --split-input-file | FileCheck %s

// bf16 accumulates in f32 and is truncated once; keepdims puts the reduced
// dim back with tensor.expand_shape.
// CHECK-DAG: #[[$ID:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[$ROW:.*]] = affine_map<(d0, d1) -> (d0)>
// CHECK-LABEL: func @sum_bf16_keepdims
// CHECK-SAME: (%[[X:.*]]: tensor<?x8xbf16>)
// CHECK: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[N:.*]] = tensor.dim %[[X]], %{{.*}} : tensor<?x8xbf16>
// CHECK: %[[EMPTY:.*]] = tensor.empty(%[[N]]) : tensor<?xf32>
// CHECK: %[[INIT:.*]] = linalg.fill ins(%[[ZERO]] : f32) outs(%[[EMPTY]] : tensor<?xf32>)
// CHECK: %[[SUM:.*]] = linalg.generic {indexing_maps = [#[[$ID]], #[[$ROW]]], iterator_types = ["parallel", "reduction"]}
// CHECK-SAME: ins(%[[X]] : tensor<?x8xbf16>) outs(%[[INIT]] : tensor<?xf32>)
// CHECK: arith.extf %{{.*}} : bf16 to f32
// CHECK: arith.addf
// CHECK: %[[NARROW:.*]] = linalg.generic
// CHECK-SAME: ins(%[[SUM]] : tensor<?xf32>)
// CHECK: arith.truncf %{{.*}} : f32 to bf16
// CHECK: tensor.expand_shape %[[NARROW]] {{\[\[}}0, 1]] output_shape [%{{.*}}, 1] : tensor<?xbf16> into tensor<?x1xbf16>
func.func @sum_bf16_keepdims(%x: tensor<?x8xbf16>) -> tensor<?x1xbf16> {
  %0 = paddle.reduce_sum %x axes = [1] keepdims : tensor<?x8xbf16> -> tensor<?x1xbf16>
  return %0 : tensor<?x1xbf16>
}

// -----

// Several reduced dims around a dynamic kept one; integers start from the
// smallest value.
// CHECK-DAG: #[[$MID:.*]] = affine_map<(d0, d1, d2) -> (d1)>
// CHECK-LABEL: func @max_i32
// CHECK: %[[MIN:.*]] = arith.constant -2147483648 : i32
// CHECK: %[[INIT:.*]] = linalg.fill ins(%[[MIN]] : i32)
// CHECK: linalg.generic {indexing_maps = [#{{.*}}, #[[$MID]]], iterator_types = ["reduction", "parallel", "reduction"]}
// CHECK-SAME: outs(%[[INIT]] : tensor<?xi32>)
// CHECK: arith.maxsi
func.func @max_i32(%x: tensor<3x?x5xi32>) -> tensor<?xi32> {
  %0 = paddle.reduce_max %x axes = [0, 2] : tensor<3x?x5xi32> -> tensor<?xi32>
  return %0 : tensor<?xi32>
}

// -----

// Float max/min propagate NaN: arith.maximumf / minimumf from -inf / +inf.
// CHECK-LABEL: func @min_all
// CHECK: %[[INF:.*]] = arith.constant 0x7F800000 : f32
// CHECK: linalg.fill ins(%[[INF]] : f32) outs(%{{.*}} : tensor<f32>)
// CHECK: iterator_types = ["reduction", "reduction"]
// CHECK: arith.minimumf
func.func @min_all(%x: tensor<?x?xf32>) -> tensor<f32> {
  %0 = paddle.reduce_min %x : tensor<?x?xf32> -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

// CHECK-LABEL: func @prod_i8
// CHECK: arith.constant 1 : i8
// CHECK: arith.muli
func.func @prod_i8(%x: tensor<4x6xi8>) -> tensor<4xi8> {
  %0 = paddle.reduce_prod %x axes = [-1] : tensor<4x6xi8> -> tensor<4xi8>
  return %0 : tensor<4xi8>
}

// -----

// The mean divides the sum by the product of the reduced sizes.
// CHECK-LABEL: func @mean
// CHECK-SAME: (%[[X:.*]]: tensor<?x4x?xf32>)
// CHECK: %[[SUM:.*]] = linalg.generic
// CHECK: arith.addf
// CHECK: %[[D2:.*]] = tensor.dim %[[X]], %{{.*}} : tensor<?x4x?xf32>
// CHECK: %[[COUNT:.*]] = arith.muli %{{.*}}, %[[D2]] : index
// CHECK: %[[I:.*]] = arith.index_cast %[[COUNT]] : index to i64
// CHECK: %[[F:.*]] = arith.sitofp %[[I]] : i64 to f32
// CHECK: linalg.generic
// CHECK-SAME: ins(%[[SUM]] : tensor<?xf32>)
// CHECK: arith.divf %{{.*}}, %[[F]] : f32
// CHECK: tensor.expand_shape %{{.*}} {{\[\[}}0, 1, 2]] output_shape [%{{.*}}, 1, 1] : tensor<?xf32> into tensor<?x1x1xf32>
func.func @mean(%x: tensor<?x4x?xf32>) -> tensor<?x1x1xf32> {
  %0 = paddle.reduce_mean %x axes = [1, 2] keepdims : tensor<?x4x?xf32> -> tensor<?x1x1xf32>
  return %0 : tensor<?x1x1xf32>
}

// -----

// A written result type more static than the inferred one gets a tensor.cast.
// CHECK-LABEL: func @static_result
// CHECK: %[[R:.*]] = linalg.generic
// CHECK: %[[C:.*]] = tensor.cast %[[R]] : tensor<?xf32> to tensor<6xf32>
// CHECK: return %[[C]]
func.func @static_result(%x: tensor<?x3xf32>) -> tensor<6xf32> {
  %0 = paddle.reduce_sum %x axes = [1] : tensor<?x3xf32> -> tensor<6xf32>
  return %0 : tensor<6xf32>
}

// -----

// argmax carries the best value and its index; the index comes from
// linalg.index of the reduced dim.
// CHECK-LABEL: func @argmax_f32
// CHECK-SAME: (%[[X:.*]]: tensor<?x5xf32>)
// CHECK: %[[NEGINF:.*]] = arith.constant 0xFF800000 : f32
// CHECK: %[[BEST:.*]] = linalg.fill ins(%[[NEGINF]] : f32) outs(%{{.*}} : tensor<?xf32>)
// CHECK: %[[ZERO:.*]] = arith.constant 0 : i64
// CHECK: %[[IDX:.*]] = linalg.fill ins(%[[ZERO]] : i64) outs(%{{.*}} : tensor<?xi64>)
// CHECK: %[[R:.*]]:2 = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]
// CHECK-SAME: ins(%[[X]] : tensor<?x5xf32>) outs(%[[BEST]], %[[IDX]] : tensor<?xf32>, tensor<?xi64>)
// CHECK: linalg.index 1 : index
// CHECK: arith.cmpf ogt
// CHECK: arith.cmpf uno
// CHECK: return %[[R]]#1 : tensor<?xi64>
func.func @argmax_f32(%x: tensor<?x5xf32>) -> tensor<?xi64> {
  %0 = paddle.argmax %x axis = -1 : tensor<?x5xf32> -> tensor<?xi64>
  return %0 : tensor<?xi64>
}

// -----

// CHECK-LABEL: func @argmax_keepdims
// CHECK: %[[R:.*]]:2 = linalg.generic {{.*}} iterator_types = ["reduction", "parallel"]
// CHECK: arith.cmpi sgt
// CHECK: tensor.expand_shape %[[R]]#1 {{\[\[}}0, 1]] output_shape [1, 5] : tensor<5xi64> into tensor<1x5xi64>
func.func @argmax_keepdims(%x: tensor<?x5xi32>) -> tensor<1x5xi64> {
  %0 = paddle.argmax %x axis = 0 keepdims : tensor<?x5xi32> -> tensor<1x5xi64>
  return %0 : tensor<1x5xi64>
}

// -----

// max, min and argmax of nothing have no value: a dynamic reduced dim is
// checked to be non-empty at run time, unless allow_empty asks for the
// neutral value (ONNX's ReduceMax / ReduceMin); sum needs no check.
// CHECK-LABEL: func @reductions_of_nothing
// CHECK-SAME: (%[[X:.*]]: tensor<?x3xf32>)
// CHECK: %[[N:.*]] = tensor.dim %[[X]], %{{.*}} : tensor<?x3xf32>
// CHECK: %[[NONEMPTY:.*]] = arith.cmpi sgt, %[[N]], %{{.*}} : index
// CHECK: cf.assert %[[NONEMPTY]], "{{.*}}.mlir:[[# @LINE + 10]]:8: paddle.reduce_max: reduces dim 0 of size 0, which has no maximum (numpy raises)"
// CHECK: arith.maximumf
// CHECK-NOT: cf.assert
// CHECK: arith.minimumf
// CHECK: cf.assert %{{.*}}, "{{.*}}.mlir:[[# @LINE + 8]]:8: paddle.argmax: reduces dim 0 of size 0, which has no largest element (numpy raises)"
// CHECK-NOT: cf.assert
// CHECK: arith.addf
// CHECK-NOT: cf.assert
// CHECK: return
func.func @reductions_of_nothing(%x: tensor<?x3xf32>) -> (tensor<3xf32>, tensor<3xf32>, tensor<3xi64>, tensor<3xf32>) {
  %0 = paddle.reduce_max %x axes = [0] : tensor<?x3xf32> -> tensor<3xf32>
  %1 = paddle.reduce_min %x axes = [0] allow_empty : tensor<?x3xf32> -> tensor<3xf32>
  %2 = paddle.argmax %x axis = 0 : tensor<?x3xf32> -> tensor<3xi64>
  %3 = paddle.reduce_sum %x axes = [0] : tensor<?x3xf32> -> tensor<3xf32>
  return %0, %1, %2, %3 : tensor<3xf32>, tensor<3xf32>, tensor<3xi64>, tensor<3xf32>
}
