// RUN: paddle-opt %s --split-input-file --verify-diagnostics

func.func @bad_broadcast(%a: tensor<4x3xf32>, %b: tensor<2xf32>) {
  // expected-error @+2 {{shapes [4, 3] and [2] do not broadcast: dim 1 is 3 vs 2}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = paddle.add %a, %b : tensor<4x3xf32>, tensor<2xf32> -> tensor<4x3xf32>
  return
}

// -----

func.func @mixed_element_types(%a: tensor<4xf32>, %b: tensor<4xf64>) {
  // expected-error @+1 {{requires the same element type for all operands and results}}
  %0 = "paddle.mul"(%a, %b) : (tensor<4xf32>, tensor<4xf64>) -> tensor<4xf32>
  return
}

// -----

func.func @wrong_result_shape(%a: tensor<4x3xf32>, %b: tensor<3xf32>) {
  // expected-error @+2 {{inferred type(s) 'tensor<4x3xf32>' are incompatible with return type(s) of operation 'tensor<4x4xf32>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = paddle.sub %a, %b : tensor<4x3xf32>, tensor<3xf32> -> tensor<4x4xf32>
  return
}

// -----

func.func @float_only(%a: tensor<4xi32>) {
  // expected-error @+1 {{operand #0 must be ranked tensor of 16-bit float or bfloat16 type or 32-bit float or 64-bit float values}}
  %0 = paddle.exp %a : tensor<4xi32> -> tensor<4xi32>
  return
}

// -----

func.func @no_bool_arithmetic(%a: tensor<4xi1>) {
  // expected-error @+1 {{operand #0 must be ranked tensor of}}
  %0 = paddle.add %a, %a : tensor<4xi1>, tensor<4xi1> -> tensor<4xi1>
  return
}

// -----

func.func @no_float_bitwise(%a: tensor<4xf32>) {
  // expected-error @+1 {{operand #0 must be ranked tensor of 1-bit signless integer or 8-bit signless integer or 32-bit signless integer or 64-bit signless integer values}}
  %0 = paddle.xor %a, %a : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  return
}

// -----

func.func @compare_result_not_bool(%a: tensor<4xf32>) {
  // expected-error @+1 {{result #0 must be ranked tensor of 1-bit signless integer values}}
  %0 = paddle.compare eq, %a, %a : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  return
}

// -----

func.func @compare_element_types(%a: tensor<4xf32>, %b: tensor<4xf16>) {
  // expected-error @+1 {{requires the same element type for all operands}}
  %0 = paddle.compare eq, %a, %b : tensor<4xf32>, tensor<4xf16> -> tensor<4xi1>
  return
}

// -----

func.func @select_branch_types(%c: tensor<4xi1>, %a: tensor<4xf32>, %b: tensor<4xi32>) {
  // expected-error @+2 {{on_true and on_false have different element types 'f32' and 'i32'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = paddle.select %c, %a, %b : tensor<4xi1>, tensor<4xf32>, tensor<4xi32> -> tensor<4xf32>
  return
}

// -----

func.func @select_cond_type(%c: tensor<4xf32>, %a: tensor<4xf32>) {
  // expected-error @+1 {{operand #0 must be ranked tensor of 1-bit signless integer values}}
  %0 = paddle.select %c, %a, %a : tensor<4xf32>, tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  return
}

// -----

func.func @cast_shape(%a: tensor<4xf32>) {
  // expected-error @+1 {{all non-scalar operands/results must have the same shape and base type}}
  %0 = paddle.cast %a : tensor<4xf32> -> tensor<5xi32>
  return
}

// -----

func.func @unranked(%a: tensor<*xf32>) {
  // expected-error @+1 {{operand #0 must be ranked tensor}}
  %0 = "paddle.neg"(%a) : (tensor<*xf32>) -> tensor<*xf32>
  return
}

// -----

func.func @unsupported_element(%a: tensor<4xi16>) {
  // expected-error @+1 {{operand #0 must be ranked tensor}}
  %0 = "paddle.neg"(%a) : (tensor<4xi16>) -> tensor<4xi16>
  return
}

// -----

func.func @iota_dim() {
  // expected-error @+1 {{dimension 2 is out of range for rank 2}}
  %0 = paddle.iota dim = 2 : tensor<2x3xi32>
  return
}

// -----

func.func @iota_negative_dim() {
  // expected-error @+1 {{dimension -1 is out of range for rank 2}}
  %0 = "paddle.iota"() {dimension = -1 : i64} : () -> tensor<2x3xi32>
  return
}

// -----

func.func @iota_sizes(%n: index) {
  // expected-error @+1 {{expects one size operand per dynamic dim: 1 dynamic dims, 0 sizes}}
  %0 = paddle.iota dim = 0 : tensor<?xi32>
  return
}

// -----

func.func @iota_bool() {
  // expected-error @+1 {{result #0 must be ranked tensor of}}
  %0 = paddle.iota dim = 0 : tensor<4xi1>
  return
}

// -----

func.func @constant_type() {
  // expected-error @+2 {{inferred type(s) 'tensor<2xf32>' are incompatible with return type(s) of operation 'tensor<3xf32>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = "paddle.constant"() {value = dense<[1.0, 2.0]> : tensor<2xf32>} : () -> tensor<3xf32>
  return
}

// -----

func.func @constant_splat_overflow() {
  // expected-error @+1 {{'paddle.constant' op result #0 has shape [9223372036854775807, 9223372036854775807] of 'f32': more than 2^63 - 1 bytes}}
  %0 = paddle.constant dense<1.0> : tensor<9223372036854775807x9223372036854775807xf32>
  return
}

// -----

func.func @iota_overflow() {
  // expected-error @+1 {{'paddle.iota' op result #0 has shape [2305843009213693952] of 'i64': more than 2^63 - 1 bytes}}
  %0 = paddle.iota dim = 0 : tensor<2305843009213693952xi64>
  return
}

// -----

// A resource's data must be as large as its type says; the LLVM translation
// would read past it.
func.func @constant_resource_size() {
  // expected-error @+1 {{'paddle.constant' op value has 12 bytes of data, but 'tensor<1000000000xf32>' takes 4000000000}}
  %0 = paddle.constant dense_resource<blob1> : tensor<1000000000xf32>
  return
}

{-#
  dialect_resources: {
    builtin: {
      blob1: "0x040000000000803F0000004000004040"
    }
  }
#-}

// -----

func.func @constant_resource_missing() {
  // expected-error @+1 {{'paddle.constant' op value refers to resource '__elided__', which has no data}}
  %0 = paddle.constant dense_resource<__elided__> : tensor<3xf32>
  return
}

// -----

// Sparse elements would be expanded to every element on the way to LLVM.
func.func @constant_sparse() {
  // expected-error @+1 {{'paddle.constant' op value must be dense elements or a dense resource}}
  %0 = paddle.constant sparse<[[0], [5]], [1.0, 2.0]> : tensor<100000000000xf32>
  return
}
