// RUN: paddle-opt %s --paddle-convert-paddle-to-linalg --split-input-file | FileCheck %s

// Static reshapes that merge or split neighbouring dims are collapse/expand;
// others merge the runs of dims the two shapes share, then split them, so
// that both steps stay views of a strided input.
// CHECK-LABEL: func @reshape_static
// CHECK-SAME: (%[[X:.*]]: tensor<2x3x4xf32>, %[[Y:.*]]: tensor<8x1x6xf32>)
// CHECK: tensor.collapse_shape %[[X]] {{\[}}[0, 1], [2]] : tensor<2x3x4xf32> into tensor<6x4xf32>
// CHECK: tensor.expand_shape %[[X]] {{\[}}[0], [1], [2, 3]] output_shape [2, 3, 2, 2] : tensor<2x3x4xf32> into tensor<2x3x2x2xf32>
// CHECK: %[[ALL:.*]] = tensor.collapse_shape %[[X]] {{\[}}[0, 1, 2]] : tensor<2x3x4xf32> into tensor<24xf32>
// CHECK: tensor.expand_shape %[[ALL]] {{\[}}[0, 1]] output_shape [4, 6] : tensor<24xf32> into tensor<4x6xf32>
// CHECK: %[[RUNS:.*]] = tensor.collapse_shape %[[Y]] {{\[}}[0], [1, 2]] : tensor<8x1x6xf32> into tensor<8x6xf32>
// CHECK: tensor.expand_shape %[[RUNS]] {{\[}}[0], [1, 2]] output_shape [8, 2, 3] : tensor<8x6xf32> into tensor<8x2x3xf32>
// CHECK-NOT: tensor.reshape
func.func @reshape_static(%x: tensor<2x3x4xf32>, %y: tensor<8x1x6xf32>) -> (tensor<6x4xf32>, tensor<2x3x2x2xf32>, tensor<4x6xf32>, tensor<8x2x3xf32>) {
  %0 = paddle.reshape %x shape = [-1, 4] : tensor<2x3x4xf32> -> tensor<6x4xf32>
  %1 = paddle.reshape %x shape = [2, 3, 2, 2] : tensor<2x3x4xf32> -> tensor<2x3x2x2xf32>
  %2 = paddle.reshape %x shape = [4, 6] : tensor<2x3x4xf32> -> tensor<4x6xf32>
  %3 = paddle.reshape %y shape = [8, 2, 3] : tensor<8x1x6xf32> -> tensor<8x2x3xf32>
  return %0, %1, %2, %3 : tensor<6x4xf32>, tensor<2x3x2x2xf32>, tensor<4x6xf32>, tensor<8x2x3xf32>
}

// -----

// The -1 size is the element count divided by the known sizes, checked to
// divide evenly at run time.
// CHECK-LABEL: func @reshape_dynamic
// CHECK-SAME: (%[[X:.*]]: tensor<?x8xf32>)
// CHECK: %[[C4:.*]] = arith.constant 4 : index
// CHECK: %[[REM:.*]] = arith.remui %[[COUNT:.*]], %[[C4]] : index
// CHECK: %[[OK:.*]] = arith.cmpi eq, %[[REM]], %{{.*}} : index
// CHECK: cf.assert %[[OK]], "{{.*}}.mlir:{{[0-9]+}}:{{[0-9]+}}: paddle.reshape: the element count is not a multiple of the known sizes"
// CHECK: %[[N:.*]] = arith.divui %[[COUNT]], %[[C4]] : index
// CHECK: %[[SHAPE:.*]] = tensor.from_elements %[[N]], %{{.*}} : tensor<2xindex>
// CHECK: tensor.reshape %[[X]](%[[SHAPE]]) : (tensor<?x8xf32>, tensor<2xindex>) -> tensor<?x4xf32>
func.func @reshape_dynamic(%x: tensor<?x8xf32>) -> tensor<?x4xf32> {
  %0 = paddle.reshape %x shape = [-1, 4] : tensor<?x8xf32> -> tensor<?x4xf32>
  return %0 : tensor<?x4xf32>
}

// -----

// A written result type more dynamic than the inferred one gets a cast.
// CHECK-LABEL: func @reshape_cast
// CHECK: %[[R:.*]] = tensor.expand_shape
// CHECK: %[[C:.*]] = tensor.cast %[[R]] : tensor<2x3xf32> to tensor<?x?xf32>
// CHECK: return %[[C]]
func.func @reshape_cast(%x: tensor<6xf32>) -> tensor<?x?xf32> {
  %0 = "paddle.reshape"(%x) <{shape = array<i64: 2, 3>}> : (tensor<6xf32>) -> tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}

// -----

// Size-1 dims read index 0 and missing leading dims are not indexed.
// CHECK-DAG: #[[$IN:.*]] = affine_map<(d0, d1, d2) -> (d1, 0)>
// CHECK-DAG: #[[$OUT:.*]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-LABEL: func @broadcast_to
// CHECK-SAME: (%[[X:.*]]: tensor<3x1xf32>)
// CHECK: %[[INIT:.*]] = tensor.empty() : tensor<2x3x4xf32>
// CHECK: linalg.generic {indexing_maps = [#[[$IN]], #[[$OUT]]], iterator_types = ["parallel", "parallel", "parallel"]}
// CHECK-SAME: ins(%[[X]] : tensor<3x1xf32>) outs(%[[INIT]] : tensor<2x3x4xf32>)
// CHECK-NEXT: ^bb0(%[[IN:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: linalg.yield %[[IN]] : f32
func.func @broadcast_to(%x: tensor<3x1xf32>) -> tensor<2x3x4xf32> {
  %0 = paddle.broadcast_to %x shape = [2, 3, 4] : tensor<3x1xf32> -> tensor<2x3x4xf32>
  return %0 : tensor<2x3x4xf32>
}

// -----

// A dynamic dim against a static target must equal it at run time.
// CHECK-LABEL: func @broadcast_to_dynamic
// CHECK-SAME: (%[[X:.*]]: tensor<?xi1>)
// CHECK: %[[D:.*]] = tensor.dim %[[X]], %{{.*}} : tensor<?xi1>
// CHECK: %[[EQ:.*]] = arith.cmpi eq, %[[D]], %{{.*}} : index
// CHECK: cf.assert %[[EQ]]
// CHECK: linalg.generic
// CHECK-SAME: ins(%[[X]] : tensor<?xi1>) outs(%{{.*}} : tensor<5x7xi1>)
func.func @broadcast_to_dynamic(%x: tensor<?xi1>) -> tensor<5x7xi1> {
  %0 = paddle.broadcast_to %x shape = [5, 7] : tensor<?xi1> -> tensor<5x7xi1>
  return %0 : tensor<5x7xi1>
}

// -----

// CHECK-LABEL: func @transpose
// CHECK-SAME: (%[[X:.*]]: tensor<2x3x?xbf16>)
// CHECK: %[[D:.*]] = tensor.dim %[[X]], %{{.*}} : tensor<2x3x?xbf16>
// CHECK: %[[INIT:.*]] = tensor.empty(%[[D]]) : tensor<?x2x3xbf16>
// CHECK: linalg.transpose ins(%[[X]] : tensor<2x3x?xbf16>) outs(%[[INIT]] : tensor<?x2x3xbf16>) permutation = [2, 0, 1]
func.func @transpose(%x: tensor<2x3x?xbf16>) -> tensor<?x2x3xbf16> {
  %0 = paddle.transpose %x perm = [2, 0, 1] : tensor<2x3x?xbf16> -> tensor<?x2x3xbf16>
  return %0 : tensor<?x2x3xbf16>
}

// -----

// Static dims use constant offsets and sizes; a dynamic dim clamps start and
// limit to its size at run time. The strided view is copied into a dense
// tensor.
// CHECK-LABEL: func @slice
// CHECK-SAME: (%[[X:.*]]: tensor<5x?xf64>)
// CHECK: %[[N:.*]] = tensor.dim %[[X]], %{{.*}} : tensor<5x?xf64>
// CHECK: %[[LO:.*]] = arith.minsi %{{.*}}, %[[N]] : index
// CHECK: %[[HI:.*]] = arith.minsi %{{.*}}, %[[N]] : index
// CHECK: %[[SPAN:.*]] = arith.subi %[[HI]], %[[LO]] : index
// CHECK: %[[POS:.*]] = arith.maxsi %[[SPAN]], %{{.*}} : index
// CHECK: %[[SIZE:.*]] = arith.ceildivsi %[[POS]], %{{.*}} : index
// CHECK: %[[OFF:.*]] = arith.select %{{.*}}, %{{.*}}, %[[LO]] : index
// CHECK: %[[INIT:.*]] = tensor.empty(%[[SIZE]]) : tensor<2x?xf64>
// CHECK: %[[VIEW:.*]] = tensor.extract_slice %[[X]][0, %[[OFF]]] [2, %[[SIZE]]] [2, 3] : tensor<5x?xf64> to tensor<2x?xf64>
// CHECK: linalg.copy ins(%[[VIEW]] : tensor<2x?xf64>) outs(%[[INIT]] : tensor<2x?xf64>)
func.func @slice(%x: tensor<5x?xf64>) -> tensor<2x?xf64> {
  %0 = paddle.slice %x start = [0, 1] limit = [4, 100] stride = [2, 3] : tensor<5x?xf64> -> tensor<2x?xf64>
  return %0 : tensor<2x?xf64>
}

// -----

// An empty slice takes no view at all.
// CHECK-LABEL: func @slice_empty
// CHECK-NOT: tensor.extract_slice
// CHECK: %[[E:.*]] = tensor.empty() : tensor<0x3xf32>
// CHECK-NEXT: return %[[E]]
func.func @slice_empty(%x: tensor<4x3xf32>) -> tensor<0x3xf32> {
  %0 = paddle.slice %x start = [6, 0] limit = [9, 3] stride = [1, 1] : tensor<4x3xf32> -> tensor<0x3xf32>
  return %0 : tensor<0x3xf32>
}

// -----

// Each input is copied into its place, at a constant offset while the sizes
// before it are static; the dynamic dim of %b that is static in %a is checked
// at run time.
// CHECK-LABEL: func @concat
// CHECK-SAME: (%[[A:.*]]: tensor<2x3xf32>, %[[B:.*]]: tensor<?x?xf32>)
// CHECK: %[[B0:.*]] = tensor.dim %[[B]], %{{.*}} : tensor<?x?xf32>
// CHECK: %[[B1:.*]] = tensor.dim %[[B]], %{{.*}} : tensor<?x?xf32>
// CHECK: %[[EQ:.*]] = arith.cmpi eq, %[[B0]], %{{.*}} : index
// CHECK: cf.assert %[[EQ]], "{{.*}}.mlir:{{[0-9]+}}:{{[0-9]+}}: paddle.concat: input sizes differ in dim 0"
// CHECK: %[[TOTAL:.*]] = arith.addi %{{.*}}, %[[B1]] : index
// CHECK: %[[INIT:.*]] = tensor.empty(%[[TOTAL]]) : tensor<2x?xf32>
// CHECK: %[[SLOT:.*]] = tensor.extract_slice %[[INIT]][0, 0] [2, 3] [1, 1]
// CHECK: %[[CA:.*]] = linalg.copy ins(%[[A]] : tensor<2x3xf32>) outs(%[[SLOT]] : tensor<2x3xf32>)
// CHECK: %[[R0:.*]] = tensor.insert_slice %[[CA]] into %[[INIT]][0, 0] [2, 3] [1, 1]
// CHECK: linalg.copy ins(%[[B]] : tensor<?x?xf32>)
// CHECK: tensor.insert_slice %{{.*}} into %[[R0]][0, 3] [%{{.*}}, %{{.*}}] [1, 1] : tensor<?x?xf32> into tensor<2x?xf32>
func.func @concat(%a: tensor<2x3xf32>, %b: tensor<?x?xf32>) -> tensor<2x?xf32> {
  %0 = paddle.concat %a, %b axis = -1 : tensor<2x3xf32>, tensor<?x?xf32> -> tensor<2x?xf32>
  return %0 : tensor<2x?xf32>
}

// -----

// CHECK-LABEL: func @pad
// CHECK-SAME: (%[[X:.*]]: tensor<2x?xi32>)
// CHECK: %[[D:.*]] = tensor.dim %[[X]], %{{.*}} : tensor<2x?xi32>
// CHECK: %[[N:.*]] = arith.addi %[[D]], %{{.*}} : index
// CHECK: %[[V:.*]] = arith.constant -7 : i32
// CHECK: %[[INIT:.*]] = tensor.empty(%[[N]]) : tensor<5x?xi32>
// CHECK: %[[FILL:.*]] = linalg.fill ins(%[[V]] : i32) outs(%[[INIT]] : tensor<5x?xi32>)
// CHECK: %[[SLOT:.*]] = tensor.extract_slice %[[FILL]][1, 0] [2, %{{.*}}] [1, 1]
// CHECK: %[[C:.*]] = linalg.copy ins(%[[X]] : tensor<2x?xi32>) outs(%[[SLOT]] : tensor<2x?xi32>)
// CHECK: tensor.insert_slice %[[C]] into %[[FILL]][1, 0] [2, %{{.*}}] [1, 1]
func.func @pad(%x: tensor<2x?xi32>) -> tensor<5x?xi32> {
  %0 = paddle.pad %x low = [1, 0] high = [2, 3] value = -7 : i32 : tensor<2x?xi32> -> tensor<5x?xi32>
  return %0 : tensor<5x?xi32>
}

// -----

// The indices are checked once, by their minimum and maximum, before the
// loop, which then reads them wrapped once, without a branch or a clamp.
// CHECK-DAG: #[[$ALL:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[$NONE:.*]] = affine_map<(d0, d1) -> ()>
// CHECK-DAG: #[[$IDX:.*]] = affine_map<(d0, d1, d2) -> (d1, d2)>
// CHECK-DAG: #[[$ID:.*]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-LABEL: func @gather
// CHECK-SAME: (%[[X:.*]]: tensor<4x?xf32>, %[[I:.*]]: tensor<2x3xi64>)
// CHECK: %[[N:.*]] = tensor.dim %[[X]], %{{.*}} : tensor<4x?xf32>
// CHECK: %[[MAXI:.*]] = arith.constant 9223372036854775807 : i64
// CHECK: %[[LO0:.*]] = linalg.fill ins(%[[MAXI]] : i64) outs(%{{.*}} : tensor<i64>)
// CHECK: %[[MINI:.*]] = arith.constant -9223372036854775808 : i64
// CHECK: %[[HI0:.*]] = linalg.fill ins(%[[MINI]] : i64) outs(%{{.*}} : tensor<i64>)
// CHECK: %[[MM:.*]]:2 = linalg.generic {indexing_maps = [#[[$ALL]], #[[$NONE]], #[[$NONE]]], iterator_types = ["reduction", "reduction"]}
// CHECK-SAME: ins(%[[I]] : tensor<2x3xi64>) outs(%[[LO0]], %[[HI0]] : tensor<i64>, tensor<i64>)
// CHECK: arith.minsi
// CHECK: arith.maxsi
// CHECK: %[[LO:.*]] = tensor.extract %[[MM]]#0[] : tensor<i64>
// CHECK: %[[HI:.*]] = tensor.extract %[[MM]]#1[] : tensor<i64>
// CHECK: %[[NEGN:.*]] = arith.subi %{{.*}}, %[[N]] : index
// CHECK: %[[LOI:.*]] = arith.index_cast %[[LO]] : i64 to index
// CHECK: %[[GE:.*]] = arith.cmpi sge, %[[LOI]], %[[NEGN]] : index
// CHECK: %[[HII:.*]] = arith.index_cast %[[HI]] : i64 to index
// CHECK: %[[LT:.*]] = arith.cmpi slt, %[[HII]], %[[N]] : index
// CHECK: %[[OK:.*]] = arith.andi %[[GE]], %[[LT]] : i1
// CHECK: cf.assert %[[OK]], "{{.*}}.mlir:{{[0-9]+}}:{{[0-9]+}}: paddle.gather: an index is out of range for dim 1 of x: valid indices are -size to size - 1"
// CHECK: linalg.generic {indexing_maps = [#[[$IDX]], #[[$ID]]], iterator_types = ["parallel", "parallel", "parallel"]}
// CHECK-SAME: ins(%[[I]] : tensor<2x3xi64>)
// CHECK-NEXT: ^bb0(%[[IN:.*]]: i64, %{{.*}}: f32):
// CHECK-NEXT: %[[IDX:.*]] = arith.index_cast %[[IN]] : i64 to index
// CHECK-NEXT: %[[ZERO:.*]] = arith.constant 0 : index
// CHECK-NEXT: %[[NEG:.*]] = arith.cmpi slt, %[[IDX]], %[[ZERO]] : index
// CHECK-NEXT: %[[ADD:.*]] = arith.addi %[[IDX]], %[[N]] : index
// CHECK-NEXT: %[[W:.*]] = arith.select %[[NEG]], %[[ADD]], %[[IDX]] : index
// CHECK-NEXT: %[[A:.*]] = linalg.index 0 : index
// CHECK-NEXT: %[[E:.*]] = tensor.extract %[[X]][%[[A]], %[[W]]] : tensor<4x?xf32>
// CHECK-NEXT: linalg.yield %[[E]] : f32
func.func @gather(%x: tensor<4x?xf32>, %i: tensor<2x3xi64>) -> tensor<4x2x3xf32> {
  %0 = paddle.gather %x, %i axis = 1 : tensor<4x?xf32>, tensor<2x3xi64> -> tensor<4x2x3xf32>
  return %0 : tensor<4x2x3xf32>
}

// -----

// Constant indices in range of a static dim need no check; one out of range
// gets the run-time check (the module fails when it runs).
// CHECK-LABEL: func @gather_constant_indices
// CHECK-NOT: cf.assert
// CHECK: linalg.generic
// CHECK-NOT: cf.assert
// CHECK: return
// CHECK-LABEL: func @gather_constant_out_of_range
// CHECK: cf.assert %{{.*}}, "{{.*}}.mlir:{{[0-9]+}}:{{[0-9]+}}: paddle.gather: an index is out of range for dim 0 of x (size 3): valid indices are -size to size - 1"
func.func @gather_constant_indices(%x: tensor<3x4xf32>) -> tensor<4x4xf32> {
  %i = paddle.constant dense<[-3, 0, 2, -1]> : tensor<4xi32>
  %0 = paddle.gather %x, %i axis = 0 : tensor<3x4xf32>, tensor<4xi32> -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}
func.func @gather_constant_out_of_range(%x: tensor<3x4xf32>) -> tensor<4xf32> {
  %i = paddle.constant dense<3> : tensor<i32>
  %0 = paddle.gather %x, %i axis = 0 : tensor<3x4xf32>, tensor<i32> -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// One constant index into a static dim is a slice without that dim (wrapped
// once: -2 of 3 is 1), not a loop reading x by index.
// CHECK-LABEL: func @gather_constant_index
// CHECK-SAME: (%[[X:.*]]: tensor<3x8x4xf32>)
// CHECK-NOT: linalg.generic
// CHECK: %[[S:.*]] = tensor.extract_slice %[[X]][1, 0, 0] [1, 8, 4] [1, 1, 1] : tensor<3x8x4xf32> to tensor<8x4xf32>
// CHECK: return %[[S]]
func.func @gather_constant_index(%x: tensor<3x8x4xf32>) -> tensor<8x4xf32> {
  %i = paddle.constant dense<-2> : tensor<i64>
  %0 = paddle.gather %x, %i axis = 0 : tensor<3x8x4xf32>, tensor<i64> -> tensor<8x4xf32>
  return %0 : tensor<8x4xf32>
}

// -----

// The indices are checked as for gather; then a loop nest over the updates
// carries the result, and bf16 adds in f32.
// CHECK-LABEL: func @scatter_add
// CHECK-SAME: (%[[X:.*]]: tensor<5x3xbf16>, %[[I:.*]]: tensor<4xi32>, %[[U:.*]]: tensor<4x?xbf16>)
// CHECK: cf.assert %{{.*}}, "{{.*}}.mlir:{{[0-9]+}}:{{[0-9]+}}: paddle.scatter_add: dim 1 of updates does not match x and indices"
// CHECK: linalg.generic
// CHECK-SAME: iterator_types = ["reduction"]
// CHECK-SAME: ins(%[[I]] : tensor<4xi32>)
// CHECK: cf.assert %{{.*}}, "{{.*}}.mlir:{{[0-9]+}}:{{[0-9]+}}: paddle.scatter_add: an index is out of range for dim 0 of x (size 5): valid indices are -size to size - 1"
// CHECK: scf.for %[[IV0:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[ACC0:.*]] = %[[X]]) -> (tensor<5x3xbf16>)
// CHECK: scf.for %[[IV1:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[ACC1:.*]] = %[[ACC0]]) -> (tensor<5x3xbf16>)
// CHECK: %[[RAW:.*]] = tensor.extract %[[I]][%[[IV0]]] : tensor<4xi32>
// CHECK: arith.index_cast %[[RAW]] : i32 to index
// CHECK: %[[W:.*]] = arith.select
// CHECK-NOT: scf.if
// CHECK: %[[OLD:.*]] = tensor.extract %[[ACC1]][%[[W]], %[[IV1]]] : tensor<5x3xbf16>
// CHECK: %[[UPD:.*]] = tensor.extract %[[U]][%[[IV0]], %[[IV1]]] : tensor<4x?xbf16>
// CHECK: %[[OW:.*]] = arith.extf %[[OLD]] : bf16 to f32
// CHECK: %[[UW:.*]] = arith.extf %[[UPD]] : bf16 to f32
// CHECK: %[[SUM:.*]] = arith.addf %[[OW]], %[[UW]] : f32
// CHECK: %[[T:.*]] = arith.truncf %[[SUM]] : f32 to bf16
// CHECK: %[[NEW:.*]] = tensor.insert %[[T]] into %[[ACC1]][%[[W]], %[[IV1]]] : tensor<5x3xbf16>
// CHECK: scf.yield %[[NEW]]
func.func @scatter_add(%x: tensor<5x3xbf16>, %i: tensor<4xi32>, %u: tensor<4x?xbf16>) -> tensor<5x3xbf16> {
  %0 = paddle.scatter_add %x, %i, %u axis = 0 : tensor<5x3xbf16>, tensor<4xi32>, tensor<4x?xbf16> -> tensor<5x3xbf16>
  return %0 : tensor<5x3xbf16>
}

// -----

// A transpose that only moves dims of size 1 keeps every element in place:
// a reshape (collapse to the other dims, then expand), not a copy.
// CHECK-LABEL: func @transpose_of_unit_dims
// CHECK-SAME: (%[[X:.*]]: tensor<1x128x768xf32>)
// CHECK-NOT: linalg.transpose
// CHECK: %[[C:.*]] = tensor.collapse_shape %[[X]] {{\[\[}}0, 1], [2]] : tensor<1x128x768xf32> into tensor<128x768xf32>
// CHECK: %[[E:.*]] = tensor.expand_shape %[[C]] {{\[\[}}0], [1, 2]] output_shape [128, 1, 768] : tensor<128x768xf32> into tensor<128x1x768xf32>
// CHECK: return %[[E]]
func.func @transpose_of_unit_dims(%x: tensor<1x128x768xf32>) -> tensor<128x1x768xf32> {
  %0 = paddle.transpose %x perm = [1, 0, 2] : tensor<1x128x768xf32> -> tensor<128x1x768xf32>
  return %0 : tensor<128x1x768xf32>
}

// -----

// Dims of size > 1 change their order: a copy, even with unit dims moving.
// CHECK-LABEL: func @transpose_with_unit_dims
// CHECK: linalg.transpose ins(%{{.*}} : tensor<1x128x1x3xf32>) outs(%{{.*}} : tensor<3x128x1x1xf32>) permutation = [3, 1, 2, 0]
func.func @transpose_with_unit_dims(%x: tensor<1x128x1x3xf32>) -> tensor<3x128x1x1xf32> {
  %0 = paddle.transpose %x perm = [3, 1, 2, 0] : tensor<1x128x1x3xf32> -> tensor<3x128x1x1xf32>
  return %0 : tensor<3x128x1x1xf32>
}
