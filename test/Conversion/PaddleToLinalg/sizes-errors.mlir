// RUN: paddle-opt %s --paddle-convert-paddle-to-linalg --split-input-file --verify-diagnostics

// Function signatures and upstream ops are not paddle ops: the lowering
// checks their sizes before it computes anything from them.
// expected-error @+1 {{argument #0 has shape [9223372036854775807, 2] of 'f32': more than 2^63 - 1 bytes}}
func.func @signature(%x: tensor<9223372036854775807x2xf32>) {
  return
}

// -----

// expected-error @+1 {{result #0 has shape [3037000500, 3037000500] of 'f32': more than 2^63 - 1 bytes}}
func.func private @declaration() -> tensor<3037000500x3037000500xf32>

// -----

func.func @upstream_op() {
  // expected-error @+1 {{'tensor.empty' op result #0 has shape [4611686018427387904, 4] of 'i8': more than 2^63 - 1 bytes}}
  %0 = tensor.empty() : tensor<4611686018427387904x4xi8>
  return
}
