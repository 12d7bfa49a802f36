// RUN: paddle-opt %s --split-input-file --verify-diagnostics

func.func @reshape_two_inferred(%x: tensor<2x3xf32>) {
  // expected-error @+2 {{shape [-1, -1] has more than one -1}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = paddle.reshape %x shape = [-1, -1] : tensor<2x3xf32> -> tensor<2x3xf32>
  return
}

// -----

func.func @reshape_negative(%x: tensor<2x3xf32>) {
  // expected-error @+2 {{shape [-2, -3] has a negative size other than -1}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = paddle.reshape %x shape = [-2, -3] : tensor<2x3xf32> -> tensor<2x3xf32>
  return
}

// -----

func.func @reshape_ambiguous(%x: tensor<0x3xf32>) {
  // expected-error @+2 {{shape [0, -1] has a -1 and a zero size: the -1 is ambiguous}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = paddle.reshape %x shape = [0, -1] : tensor<0x3xf32> -> tensor<0x3xf32>
  return
}

// -----

func.func @reshape_not_divisible(%x: tensor<2x3xf32>) {
  // expected-error @+2 {{cannot reshape [2, 3] (6 elements) to [4, -1]}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = paddle.reshape %x shape = [4, -1] : tensor<2x3xf32> -> tensor<4x?xf32>
  return
}

// -----

func.func @reshape_count(%x: tensor<2x3xf32>) {
  // expected-error @+2 {{cannot reshape [2, 3] (6 elements) to [7] (7 elements)}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = paddle.reshape %x shape = [7] : tensor<2x3xf32> -> tensor<7xf32>
  return
}

// -----

func.func @reshape_wrong_result(%x: tensor<2x3xf32>) {
  // expected-error @+2 {{inferred type(s) 'tensor<3x2xf32>' are incompatible with return type(s) of operation 'tensor<2x3xf32>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = paddle.reshape %x shape = [3, 2] : tensor<2x3xf32> -> tensor<2x3xf32>
  return
}

// -----

func.func @reshape_element_type(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{requires the same element type for all operands and results}}
  %0 = "paddle.reshape"(%x) <{shape = array<i64: 6>}> : (tensor<2x3xf32>) -> tensor<6xf64>
  return
}

// -----

func.func @broadcast_smaller_rank(%x: tensor<2x3xf32>) {
  // expected-error @+2 {{cannot broadcast rank 2 to the smaller rank 1}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = paddle.broadcast_to %x shape = [3] : tensor<2x3xf32> -> tensor<3xf32>
  return
}

// -----

func.func @broadcast_negative(%x: tensor<3xf32>) {
  // expected-error @+2 {{shape [-5, 3] has a negative size other than -1}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = paddle.broadcast_to %x shape = [-5, 3] : tensor<3xf32> -> tensor<?x3xf32>
  return
}

// -----

func.func @broadcast_unaligned_inferred(%x: tensor<3xf32>) {
  // expected-error @+2 {{shape [-1, 3] has -1 at dim 0, which no dim of the operand aligns with}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = paddle.broadcast_to %x shape = [-1, 3] : tensor<3xf32> -> tensor<?x3xf32>
  return
}

// -----

func.func @broadcast_incompatible(%x: tensor<3x2xf32>) {
  // expected-error @+2 {{cannot broadcast [3, 2] to [3, 4]: dim 1 is 2 vs 4}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = paddle.broadcast_to %x shape = [3, 4] : tensor<3x2xf32> -> tensor<3x4xf32>
  return
}

// -----

func.func @transpose_size(%x: tensor<2x3xf32>) {
  // expected-error @+2 {{perm [0] has 1 entries for rank 2}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = paddle.transpose %x perm = [0] : tensor<2x3xf32> -> tensor<2xf32>
  return
}

// -----

func.func @transpose_not_permutation(%x: tensor<2x3xf32>) {
  // expected-error @+2 {{perm [1, 1] is not a permutation of 0..1}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = paddle.transpose %x perm = [1, 1] : tensor<2x3xf32> -> tensor<3x3xf32>
  return
}

// -----

func.func @transpose_out_of_range(%x: tensor<2x3xf32>) {
  // expected-error @+2 {{perm [2, 0] is not a permutation of 0..1}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = paddle.transpose %x perm = [2, 0] : tensor<2x3xf32> -> tensor<3x2xf32>
  return
}

// -----

func.func @slice_sizes(%x: tensor<2x3xf32>) {
  // expected-error @+2 {{limit [2] has 1 entries for rank 2}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = paddle.slice %x start = [0, 0] limit = [2] stride = [1, 1] : tensor<2x3xf32> -> tensor<2x3xf32>
  return
}

// -----

func.func @slice_negative(%x: tensor<2x3xf32>) {
  // expected-error @+2 {{start and limit must be non-negative, got -1 and 3 at dim 1}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = paddle.slice %x start = [0, -1] limit = [2, 3] stride = [1, 1] : tensor<2x3xf32> -> tensor<2x3xf32>
  return
}

// -----

func.func @slice_stride(%x: tensor<2x3xf32>) {
  // expected-error @+2 {{stride must be positive, got 0 at dim 0}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = paddle.slice %x start = [0, 0] limit = [2, 3] stride = [0, 1] : tensor<2x3xf32> -> tensor<2x3xf32>
  return
}

// -----

func.func @slice_wrong_result(%x: tensor<5xf32>) {
  // expected-error @+2 {{inferred type(s) 'tensor<2xf32>' are incompatible with return type(s) of operation 'tensor<3xf32>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = paddle.slice %x start = [1] limit = [9] stride = [3] : tensor<5xf32> -> tensor<3xf32>
  return
}

// -----

func.func @concat_none() {
  // expected-error @+2 {{expects at least one input}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = "paddle.concat"() <{axis = 0 : i64}> : () -> tensor<0xf32>
  return
}

// -----

func.func @concat_rank0(%a: tensor<f32>) {
  // expected-error @+2 {{cannot concatenate rank-0 tensors}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = paddle.concat %a, %a axis = 0 : tensor<f32>, tensor<f32> -> tensor<f32>
  return
}

// -----

func.func @concat_axis(%a: tensor<2x3xf32>) {
  // expected-error @+2 {{axis -3 is out of range for rank 2}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = paddle.concat %a, %a axis = -3 : tensor<2x3xf32>, tensor<2x3xf32> -> tensor<4x3xf32>
  return
}

// -----

func.func @concat_element_types(%a: tensor<2x3xf32>, %b: tensor<2x3xi32>) {
  // expected-error @+2 {{input 1 has element type 'i32' but input 0 has 'f32'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = paddle.concat %a, %b axis = 0 : tensor<2x3xf32>, tensor<2x3xi32> -> tensor<4x3xf32>
  return
}

// -----

func.func @concat_ranks(%a: tensor<2x3xf32>, %b: tensor<3xf32>) {
  // expected-error @+2 {{input 1 has rank 1 but input 0 has rank 2}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = paddle.concat %a, %b axis = 0 : tensor<2x3xf32>, tensor<3xf32> -> tensor<5x3xf32>
  return
}

// -----

func.func @concat_sizes(%a: tensor<2x3xf32>, %b: tensor<?x4xf32>) {
  // expected-error @+2 {{input 1 has shape [?, 4] but dim 1 must be 3 as in the other inputs}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = paddle.concat %a, %b axis = 0 : tensor<2x3xf32>, tensor<?x4xf32> -> tensor<?x3xf32>
  return
}

// -----

func.func @pad_sizes(%x: tensor<2x3xf32>) {
  // expected-error @+2 {{low [1] and high [0, 0] must have 2 entries, one per dim}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = paddle.pad %x low = [1] high = [0, 0] value = 0.0 : f32 : tensor<2x3xf32> -> tensor<3x3xf32>
  return
}

// -----

func.func @pad_negative(%x: tensor<2x3xf32>) {
  // expected-error @+2 {{padding must be non-negative, got low 0 and high -1 at dim 1}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = paddle.pad %x low = [0, 0] high = [0, -1] value = 0.0 : f32 : tensor<2x3xf32> -> tensor<2x2xf32>
  return
}

// -----

func.func @pad_value_type(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{value must be an integer or float attribute of the element type 'f32', got 0 : i32}}
  %0 = paddle.pad %x low = [0, 0] high = [1, 1] value = 0 : i32 : tensor<2x3xf32> -> tensor<3x4xf32>
  return
}

// -----

func.func @pad_value_kind(%x: tensor<2xf32>) {
  // expected-error @+1 {{value must be an integer or float attribute of the element type 'f32', got dense<0.000000e+00> : tensor<1xf32>}}
  %0 = paddle.pad %x low = [0] high = [1] value = dense<0.0> : tensor<1xf32> : tensor<2xf32> -> tensor<3xf32>
  return
}

// -----

func.func @gather_rank0(%x: tensor<f32>, %i: tensor<2xi32>) {
  // expected-error @+2 {{expects an operand of rank >= 1}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = paddle.gather %x, %i axis = 0 : tensor<f32>, tensor<2xi32> -> tensor<2xf32>
  return
}

// -----

func.func @gather_axis(%x: tensor<4x5xf32>, %i: tensor<2xi32>) {
  // expected-error @+2 {{axis 2 is out of range for rank 2}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = paddle.gather %x, %i axis = 2 : tensor<4x5xf32>, tensor<2xi32> -> tensor<4x2xf32>
  return
}

// -----

func.func @gather_empty_dim(%x: tensor<0x5xf32>, %i: tensor<2xi32>) {
  // expected-error @+2 {{cannot gather from dim 0 of size 0}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = paddle.gather %x, %i axis = 0 : tensor<0x5xf32>, tensor<2xi32> -> tensor<2x5xf32>
  return
}

// -----

func.func @gather_float_indices(%x: tensor<4xf32>, %i: tensor<2xf32>) {
  // expected-error @+1 {{operand #1 must be ranked tensor of 32-bit signless integer or 64-bit signless integer values}}
  %0 = paddle.gather %x, %i axis = 0 : tensor<4xf32>, tensor<2xf32> -> tensor<2xf32>
  return
}

// -----

func.func @gather_wrong_result(%x: tensor<4x5xf32>, %i: tensor<2xi64>) {
  // expected-error @+2 {{inferred type(s) 'tensor<2x5xf32>' are incompatible with return type(s) of operation 'tensor<4x2xf32>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = paddle.gather %x, %i axis = 0 : tensor<4x5xf32>, tensor<2xi64> -> tensor<4x2xf32>
  return
}

// -----

func.func @scatter_element_types(%x: tensor<5xf32>, %i: tensor<2xi32>, %u: tensor<2xf64>) {
  // expected-error @+2 {{updates have element type 'f64' but x has 'f32'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = paddle.scatter_add %x, %i, %u axis = 0 : tensor<5xf32>, tensor<2xi32>, tensor<2xf64> -> tensor<5xf32>
  return
}

// -----

func.func @scatter_rank(%x: tensor<5x3xf32>, %i: tensor<2xi32>, %u: tensor<2xf32>) {
  // expected-error @+2 {{updates have shape [2] but must have x.shape[:axis] + indices.shape + x.shape[axis+1:] = [2, 3]}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = paddle.scatter_add %x, %i, %u axis = 0 : tensor<5x3xf32>, tensor<2xi32>, tensor<2xf32> -> tensor<5x3xf32>
  return
}

// -----

func.func @scatter_shape(%x: tensor<5x3xf32>, %i: tensor<2xi32>, %u: tensor<?x4xf32>) {
  // expected-error @+2 {{updates have shape [?, 4] but must have x.shape[:axis] + indices.shape + x.shape[axis+1:] = [2, 3]}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = paddle.scatter_add %x, %i, %u axis = 0 : tensor<5x3xf32>, tensor<2xi32>, tensor<?x4xf32> -> tensor<5x3xf32>
  return
}

// -----

func.func @scatter_axis(%x: tensor<5x3xf32>, %i: tensor<2xi32>, %u: tensor<2x3xf32>) {
  // expected-error @+2 {{axis -3 is out of range for rank 2}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = paddle.scatter_add %x, %i, %u axis = -3 : tensor<5x3xf32>, tensor<2xi32>, tensor<2x3xf32> -> tensor<5x3xf32>
  return
}

// -----

func.func @scatter_rank0(%x: tensor<f32>, %i: tensor<i32>, %u: tensor<f32>) {
  // expected-error @+2 {{expects an operand of rank >= 1}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = paddle.scatter_add %x, %i, %u axis = 0 : tensor<f32>, tensor<i32>, tensor<f32> -> tensor<f32>
  return
}

// -----

func.func @reshape_overflow(%x: tensor<?xf32>) {
  // expected-error @+2 {{shape [4611686018427387904, 4] has more elements than fit in 64 bits}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = paddle.reshape %x shape = [4611686018427387904, 4] : tensor<?xf32> -> tensor<?x4xf32>
  return
}

// -----

func.func @concat_overflow(%a: tensor<9223372036854775806xi8>) {
  // expected-error @+2 {{the size along axis 0 does not fit in 64 bits}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = paddle.concat %a, %a axis = 0 : tensor<9223372036854775806xi8>, tensor<9223372036854775806xi8> -> tensor<?xi8>
  return
}

// -----

func.func @pad_overflow(%x: tensor<6xf32>) {
  // expected-error @+2 {{the padded size of dim 0 does not fit in 64 bits}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = paddle.pad %x low = [9223372036854775807] high = [0] value = 0.0 : f32 : tensor<6xf32> -> tensor<?xf32>
  return
}

// -----

// Every paddle op checks that the static sizes of its types fit in memory
// arithmetic: [MAX, MAX] would be 1 element modulo 2^64.
func.func @broadcast_to_overflow(%x: tensor<f32>) {
  // expected-error @+1 {{'paddle.broadcast_to' op result #0 has shape [9223372036854775807, 9223372036854775807] of 'f32': more than 2^63 - 1 bytes}}
  %0 = paddle.broadcast_to %x shape = [9223372036854775807, 9223372036854775807] : tensor<f32> -> tensor<9223372036854775807x9223372036854775807xf32>
  return
}

// -----

// The element count fits, the bytes do not.
func.func @broadcast_to_bytes(%x: tensor<f32>) {
  // expected-error @+1 {{'paddle.broadcast_to' op result #0 has shape [4611686018427387904] of 'f32': more than 2^63 - 1 bytes}}
  %0 = paddle.broadcast_to %x shape = [4611686018427387904] : tensor<f32> -> tensor<4611686018427387904xf32>
  return
}

// -----

// A dynamic dim is checked at run time; the static part alone fits here.
func.func @broadcast_to_dynamic_fits(%x: tensor<?x1xi8>) -> tensor<?x4611686018427387904xi8> {
  %0 = paddle.broadcast_to %x shape = [-1, 4611686018427387904] : tensor<?x1xi8> -> tensor<?x4611686018427387904xi8>
  return %0 : tensor<?x4611686018427387904xi8>
}

// -----

// A dim of size 0 makes any product fit.
func.func @broadcast_to_empty(%x: tensor<f32>) -> tensor<9223372036854775807x0x9223372036854775807xf32> {
  %0 = paddle.broadcast_to %x shape = [9223372036854775807, 0, 9223372036854775807] : tensor<f32> -> tensor<9223372036854775807x0x9223372036854775807xf32>
  return %0 : tensor<9223372036854775807x0x9223372036854775807xf32>
}

// -----

func.func @operand_overflow(%x: tensor<3037000500x3037000500xf32>) {
  // expected-error @+1 {{'paddle.neg' op operand #0 has shape [3037000500, 3037000500] of 'f32': more than 2^63 - 1 bytes}}
  %0 = paddle.neg %x : tensor<3037000500x3037000500xf32> -> tensor<3037000500x3037000500xf32>
  return
}

// -----

func.func @reshape_result_overflow(%x: tensor<?xi8>) {
  // expected-error @+1 {{'paddle.reshape' op result #0 has shape [4294967296, 4294967296] of 'i8': more than 2^63 - 1 bytes}}
  %0 = paddle.reshape %x shape = [4294967296, 4294967296] : tensor<?xi8> -> tensor<4294967296x4294967296xi8>
  return
}

// -----

func.func @concat_result_overflow(%a: tensor<?x4294967296xf32>) {
  // expected-error @+1 {{'paddle.concat' op result #0 has shape [4294967296, 4294967296] of 'f32': more than 2^63 - 1 bytes}}
  %0 = paddle.concat %a, %a axis = 0 : tensor<?x4294967296xf32>, tensor<?x4294967296xf32> -> tensor<4294967296x4294967296xf32>
  return
}

// -----

func.func @pad_dynamic_overflow(%x: tensor<?xf32>) {
  // expected-error @+2 {{the padded size of dim 0 does not fit in 64 bits}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = paddle.pad %x low = [9223372036854775807] high = [1] value = 0.0 : f32 : tensor<?xf32> -> tensor<?xf32>
  return
}

// -----

func.func @gather_empty_dim_empty_result(%x: tensor<0x0xf32>, %i: tensor<2xi32>) {
  // expected-error @+2 {{cannot gather from dim 1 of size 0}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = paddle.gather %x, %i axis = 1 : tensor<0x0xf32>, tensor<2xi32> -> tensor<0x2xf32>
  return
}

// -----

func.func @gather_empty_dim_dynamic_indices(%x: tensor<0x5xf32>, %i: tensor<?xi32>) -> tensor<?x5xf32> {
  %0 = paddle.gather %x, %i axis = 0 : tensor<0x5xf32>, tensor<?xi32> -> tensor<?x5xf32>
  return %0 : tensor<?x5xf32>
}
