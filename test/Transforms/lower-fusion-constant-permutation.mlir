// RUN: paddle-opt %s --split-input-file --paddle-lower-fusion | FileCheck %s

// paddle-lower-fusion folds permutations of constants (transposed weights)
// into constants, for any whole-byte element type.

// CHECK-LABEL: func.func @transpose_3d_i32
// CHECK-NOT: linalg.transpose
// CHECK: arith.constant dense<{{\[}}{{\[}}[0, 4, 8], [12, 16, 20]], {{\[}}[1, 5, 9], [13, 17, 21]], {{\[}}[2, 6, 10], [14, 18, 22]], {{\[}}[3, 7, 11], [15, 19, 23]]]> : tensor<4x2x3xi32>
func.func @transpose_3d_i32() -> tensor<4x2x3xi32> {
  %w = arith.constant dense<[[[0, 1, 2, 3], [4, 5, 6, 7], [8, 9, 10, 11]],
                             [[12, 13, 14, 15], [16, 17, 18, 19], [20, 21, 22, 23]]]> : tensor<2x3x4xi32>
  %e = tensor.empty() : tensor<4x2x3xi32>
  %t = linalg.transpose ins(%w : tensor<2x3x4xi32>) outs(%e : tensor<4x2x3xi32>) permutation = [2, 0, 1]
  return %t : tensor<4x2x3xi32>
}

// -----

// A generic whose body only yields its input, read through a permutation.
// CHECK-LABEL: func.func @generic_copy_f16
// CHECK-NOT: linalg.generic
// CHECK: arith.constant dense<{{\[}}[1.500000e+00, 4.000000e+00], [2.500000e+00, 5.000000e+00], [-3.000000e+00, 6.000000e+00]]> : tensor<3x2xf16>
func.func @generic_copy_f16() -> tensor<3x2xf16> {
  %w = arith.constant dense<[[1.5, 2.5, -3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf16>
  %e = tensor.empty() : tensor<3x2xf16>
  %t = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1, d0)>, affine_map<(d0, d1) -> (d0, d1)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%w : tensor<2x3xf16>) outs(%e : tensor<3x2xf16>) {
  ^bb0(%in: f16, %out: f16):
    linalg.yield %in : f16
  } -> tensor<3x2xf16>
  return %t : tensor<3x2xf16>
}

// -----

// CHECK-LABEL: func.func @transpose_splat
// CHECK: arith.constant dense<2.500000e+00> : tensor<3x2xf32>
// CHECK-NOT: linalg.transpose
func.func @transpose_splat() -> tensor<3x2xf32> {
  %w = arith.constant dense<2.5> : tensor<2x3xf32>
  %e = tensor.empty() : tensor<3x2xf32>
  %t = linalg.transpose ins(%w : tensor<2x3xf32>) outs(%e : tensor<3x2xf32>) permutation = [1, 0]
  return %t : tensor<3x2xf32>
}

// -----

// A broadcast is not a permutation: it stays (folding it would store the
// constant several times over).
// CHECK-LABEL: func.func @broadcast_stays
// CHECK: linalg.generic
func.func @broadcast_stays() -> tensor<2x3xf32> {
  %w = arith.constant dense<[1.0, 2.0, 3.0]> : tensor<3xf32>
  %e = tensor.empty() : tensor<2x3xf32>
  %t = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%w : tensor<3xf32>) outs(%e : tensor<2x3xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<2x3xf32>
  return %t : tensor<2x3xf32>
}

// -----

// The permutation on the output side (the input read in order), on i8.
// CHECK-LABEL: func.func @permuted_output_i8
// CHECK-NOT: linalg.generic
// CHECK: arith.constant dense<{{\[}}[0, 3], [1, 4], [2, 5]]> : tensor<3x2xi8>
func.func @permuted_output_i8() -> tensor<3x2xi8> {
  %w = arith.constant dense<[[0, 1, 2], [3, 4, 5]]> : tensor<2x3xi8>
  %e = tensor.empty() : tensor<3x2xi8>
  %t = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1, d0)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%w : tensor<2x3xi8>) outs(%e : tensor<3x2xi8>) {
  ^bb0(%in: i8, %out: i8):
    linalg.yield %in : i8
  } -> tensor<3x2xi8>
  return %t : tensor<3x2xi8>
}
