// RUN: paddle-opt %s --paddle-set-target=library=onednn --paddle-use-onednn --split-input-file | FileCheck %s

// A matmul operand that a linalg.transpose wrote for it alone: the call
// reads the transpose's source through swapped strides (operand map 18:
// logical dims (m, k) at memref dims (1, 0), against 33 for (0, 1)), and
// the transpose is gone.
// CHECK-LABEL: func.func @transposed_lhs
// CHECK-SAME: (%[[A:.*]]: memref<96x64xf32>, %[[B:.*]]: memref<96x48xf32>)
// CHECK-NOT: linalg.transpose
// CHECK: %[[CA:.*]] = memref.cast %[[A]] : memref<96x64xf32> to memref<*xf32>
// CHECK: %[[CB:.*]] = memref.cast %[[B]] : memref<96x48xf32> to memref<*xf32>
// CHECK: call @paddle_onednn_matmul(%[[CA]], %[[CB]], {{.*}}, %c18_i64{{(_[0-9]+)?}}, %c33_i64{{(_[0-9]+)?}}, %c33_i64
func.func @transposed_lhs(%a: memref<96x64xf32>, %b: memref<96x48xf32>) -> memref<64x48xf32> {
  %cst = arith.constant 0.0 : f32
  %t = memref.alloc() : memref<64x96xf32>
  linalg.transpose ins(%a : memref<96x64xf32>) outs(%t : memref<64x96xf32>) permutation = [1, 0]
  %c = memref.alloc() : memref<64x48xf32>
  linalg.fill ins(%cst : f32) outs(%c : memref<64x48xf32>)
  linalg.matmul ins(%t, %b : memref<64x96xf32>, memref<96x48xf32>) outs(%c : memref<64x48xf32>)
  return %c : memref<64x48xf32>
}

// -----

// Transposed weights (x @ W^T) of a batched lhs folded into rows.
// CHECK-LABEL: func.func @transposed_rhs
// CHECK-SAME: (%[[X:.*]]: memref<256x64xf32>, %[[W:.*]]: memref<48x64xf32>)
// CHECK-NOT: linalg.transpose
// CHECK: %[[CW:.*]] = memref.cast %[[W]] : memref<48x64xf32> to memref<*xf32>
// CHECK: call @paddle_onednn_matmul(%{{.*}}, %[[CW]], {{.*}}, %c33_i64{{(_[0-9]+)?}}, %c18_i64{{(_[0-9]+)?}}, %c33_i64
func.func @transposed_rhs(%x: memref<256x64xf32>, %w: memref<48x64xf32>) -> memref<256x48xf32> {
  %cst = arith.constant 0.0 : f32
  %t = memref.alloc() : memref<64x48xf32>
  linalg.transpose ins(%w : memref<48x64xf32>) outs(%t : memref<64x48xf32>) permutation = [1, 0]
  %c = memref.alloc() : memref<256x48xf32>
  linalg.fill ins(%cst : f32) outs(%c : memref<256x48xf32>)
  linalg.matmul ins(%x, %t : memref<256x64xf32>, memref<64x48xf32>) outs(%c : memref<256x48xf32>)
  return %c : memref<256x48xf32>
}

// -----

// Kept: the transposed buffer has another reader (a second matmul), or the
// source is written between the transpose and the matmul.
// CHECK-LABEL: func.func @transpose_kept
// CHECK: linalg.transpose
// CHECK: call @paddle_onednn_matmul({{.*}}, %c33_i64{{(_[0-9]+)?}}, %c33_i64{{(_[0-9]+)?}}, %c33_i64
// CHECK: call @paddle_onednn_matmul({{.*}}, %c33_i64{{(_[0-9]+)?}}, %c33_i64{{(_[0-9]+)?}}, %c33_i64
// CHECK: linalg.transpose
// CHECK: call @paddle_onednn_matmul({{.*}}, %c33_i64{{(_[0-9]+)?}}, %c33_i64{{(_[0-9]+)?}}, %c33_i64
func.func @transpose_kept(%a: memref<96x64xf32>, %b: memref<96x48xf32>, %s: memref<96x64xf32>)
    -> (memref<64x48xf32>, memref<64x48xf32>, memref<64x48xf32>) {
  %cst = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %t = memref.alloc() : memref<64x96xf32>
  linalg.transpose ins(%a : memref<96x64xf32>) outs(%t : memref<64x96xf32>) permutation = [1, 0]
  %c = memref.alloc() : memref<64x48xf32>
  linalg.fill ins(%cst : f32) outs(%c : memref<64x48xf32>)
  linalg.matmul ins(%t, %b : memref<64x96xf32>, memref<96x48xf32>) outs(%c : memref<64x48xf32>)
  %d = memref.alloc() : memref<64x48xf32>
  linalg.fill ins(%cst : f32) outs(%d : memref<64x48xf32>)
  linalg.matmul ins(%t, %b : memref<64x96xf32>, memref<96x48xf32>) outs(%d : memref<64x48xf32>)
  %u = memref.alloc() : memref<64x96xf32>
  linalg.transpose ins(%s : memref<96x64xf32>) outs(%u : memref<64x96xf32>) permutation = [1, 0]
  linalg.fill ins(%one : f32) outs(%s : memref<96x64xf32>)
  %e = memref.alloc() : memref<64x48xf32>
  linalg.fill ins(%cst : f32) outs(%e : memref<64x48xf32>)
  linalg.matmul ins(%u, %b : memref<64x96xf32>, memref<96x48xf32>) outs(%e : memref<64x48xf32>)
  return %c, %d, %e : memref<64x48xf32>, memref<64x48xf32>, memref<64x48xf32>
}
