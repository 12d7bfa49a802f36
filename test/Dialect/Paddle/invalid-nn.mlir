// RUN: paddle-opt %s --split-input-file --verify-diagnostics

func.func @matmul_rank0(%a: tensor<f32>, %b: tensor<4xf32>) {
  // expected-error @+2 {{matmul operands must have rank >= 1, got 0 and 1}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = paddle.matmul %a, %b : tensor<f32>, tensor<4xf32> -> tensor<4xf32>
  return
}

// -----

func.func @matmul_contracted(%a: tensor<2x3xf32>, %b: tensor<4x5xf32>) {
  // expected-error @+2 {{matmul contracted dims differ: lhs [2, 3] has 3, rhs [4, 5] has 4}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = paddle.matmul %a, %b : tensor<2x3xf32>, tensor<4x5xf32> -> tensor<2x5xf32>
  return
}

// -----

func.func @matmul_batch(%a: tensor<3x2x4xf32>, %b: tensor<2x4x5xf32>) {
  // expected-error @+2 {{shapes [3] and [2] do not broadcast: dim 0 is 3 vs 2}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = paddle.matmul %a, %b : tensor<3x2x4xf32>, tensor<2x4x5xf32> -> tensor<3x2x5xf32>
  return
}

// -----

func.func @matmul_result(%a: tensor<2x4xf32>, %b: tensor<4xf32>) {
  // expected-error @+2 {{inferred type(s) 'tensor<2xf32>' are incompatible with return type(s) of operation 'tensor<2x1xf32>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = paddle.matmul %a, %b : tensor<2x4xf32>, tensor<4xf32> -> tensor<2x1xf32>
  return
}

// -----

func.func @matmul_types(%a: tensor<2x4xf32>, %b: tensor<4x2xf16>) {
  // expected-error @+1 {{requires the same element type for all operands}}
  %0 = "paddle.matmul"(%a, %b) : (tensor<2x4xf32>, tensor<4x2xf16>) -> tensor<2x2xf32>
  return
}

// -----

func.func @matmul_bool(%a: tensor<2x4xi1>, %b: tensor<4x2xi1>) {
  // expected-error @+1 {{operand #0 must be ranked tensor of}}
  %0 = paddle.matmul %a, %b : tensor<2x4xi1>, tensor<4x2xi1> -> tensor<2x2xi1>
  return
}

// -----

func.func @conv_rank(%x: tensor<1x4x9xf32>, %w: tensor<6x4x3x3xf32>) {
  // expected-error @+2 {{conv2d expects a rank-4 NCHW input and a rank-4 OIHW filter, got ranks 3 and 4}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = paddle.conv2d %x, %w : tensor<1x4x9xf32>, tensor<6x4x3x3xf32> -> tensor<1x6x7x7xf32>
  return
}

// -----

func.func @conv_strides_size(%x: tensor<1x4x9x9xf32>, %w: tensor<6x4x3x3xf32>) {
  // expected-error @+2 {{strides must have 2 entries, got 1}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = paddle.conv2d %x, %w {strides = array<i64: 2>} : tensor<1x4x9x9xf32>, tensor<6x4x3x3xf32> -> tensor<1x6x4x4xf32>
  return
}

// -----

func.func @conv_padding_size(%x: tensor<1x4x9x9xf32>, %w: tensor<6x4x3x3xf32>) {
  // expected-error @+2 {{padding must have 4 entries, got 2}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = paddle.conv2d %x, %w {padding = array<i64: 1, 1>} : tensor<1x4x9x9xf32>, tensor<6x4x3x3xf32> -> tensor<1x6x9x9xf32>
  return
}

// -----

func.func @conv_negative_padding(%x: tensor<1x4x9x9xf32>, %w: tensor<6x4x3x3xf32>) {
  // expected-error @+2 {{padding must be >= 0, got [0, -1, 0, 0]}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = paddle.conv2d %x, %w {padding = array<i64: 0, -1, 0, 0>} : tensor<1x4x9x9xf32>, tensor<6x4x3x3xf32> -> tensor<1x6x7x6xf32>
  return
}

// -----

func.func @conv_zero_dilation(%x: tensor<1x4x9x9xf32>, %w: tensor<6x4x3x3xf32>) {
  // expected-error @+2 {{dilations must be >= 1, got [1, 0]}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = paddle.conv2d %x, %w {dilations = array<i64: 1, 0>} : tensor<1x4x9x9xf32>, tensor<6x4x3x3xf32> -> tensor<1x6x7x9xf32>
  return
}

// -----

func.func @conv_zero_groups(%x: tensor<1x4x9x9xf32>, %w: tensor<6x4x3x3xf32>) {
  // expected-error @+2 {{groups must be >= 1, got 0}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = paddle.conv2d %x, %w {groups = 0} : tensor<1x4x9x9xf32>, tensor<6x4x3x3xf32> -> tensor<1x6x7x7xf32>
  return
}

// -----

func.func @conv_input_groups(%x: tensor<1x5x9x9xf32>, %w: tensor<6x2x3x3xf32>) {
  // expected-error @+2 {{input channels (5) are not divisible by groups (2)}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = paddle.conv2d %x, %w {groups = 2} : tensor<1x5x9x9xf32>, tensor<6x2x3x3xf32> -> tensor<1x6x7x7xf32>
  return
}

// -----

func.func @conv_output_groups(%x: tensor<1x4x9x9xf32>, %w: tensor<5x2x3x3xf32>) {
  // expected-error @+2 {{output channels (5) are not divisible by groups (2)}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = paddle.conv2d %x, %w {groups = 2} : tensor<1x4x9x9xf32>, tensor<5x2x3x3xf32> -> tensor<1x5x7x7xf32>
  return
}

// -----

func.func @conv_filter_channels(%x: tensor<1x4x9x9xf32>, %w: tensor<6x4x3x3xf32>) {
  // expected-error @+2 {{filter has 4 input channels per group, expected 2 (4 channels / 2 groups)}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = paddle.conv2d %x, %w {groups = 2} : tensor<1x4x9x9xf32>, tensor<6x4x3x3xf32> -> tensor<1x6x7x7xf32>
  return
}

// -----

func.func @conv_empty(%x: tensor<1x4x4x9xf32>, %w: tensor<6x4x3x3xf32>) {
  // expected-error @+2 {{conv2d output height would be empty: padded input size 4 is smaller than the dilated kernel size 5}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = paddle.conv2d %x, %w {dilations = array<i64: 2, 1>} : tensor<1x4x4x9xf32>, tensor<6x4x3x3xf32> -> tensor<1x6x1x7xf32>
  return
}

// -----

func.func @conv_int(%x: tensor<1x4x9x9xi32>, %w: tensor<6x4x3x3xi32>) {
  // expected-error @+1 {{operand #0 must be ranked tensor of 16-bit float or bfloat16 type or 32-bit float or 64-bit float values}}
  %0 = paddle.conv2d %x, %w : tensor<1x4x9x9xi32>, tensor<6x4x3x3xi32> -> tensor<1x6x7x7xi32>
  return
}

// -----

func.func @pool_rank(%x: tensor<3x8x8xf32>) {
  // expected-error @+2 {{pooling expects a rank-4 NCHW input, got rank 3}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = paddle.max_pool2d %x {kernel = array<i64: 2, 2>} : tensor<3x8x8xf32> -> tensor<3x7x7xf32>
  return
}

// -----

func.func @pool_kernel_size(%x: tensor<1x3x8x8xf32>) {
  // expected-error @+2 {{kernel must have 2 entries, got 3}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = paddle.avg_pool2d %x {kernel = array<i64: 2, 2, 2>} : tensor<1x3x8x8xf32> -> tensor<1x3x7x7xf32>
  return
}

// -----

func.func @pool_zero_kernel(%x: tensor<1x3x8x8xf32>) {
  // expected-error @+2 {{kernel must be >= 1, got [0, 2]}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = paddle.avg_pool2d %x {kernel = array<i64: 0, 2>} : tensor<1x3x8x8xf32> -> tensor<1x3x9x7xf32>
  return
}

// -----

func.func @pool_zero_stride(%x: tensor<1x3x8x8xf32>) {
  // expected-error @+2 {{strides must be >= 1, got [2, 0]}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = paddle.max_pool2d %x {kernel = array<i64: 2, 2>, strides = array<i64: 2, 0>} : tensor<1x3x8x8xf32> -> tensor<1x3x4x4xf32>
  return
}

// -----

func.func @pool_padding_size(%x: tensor<1x3x8x8xf32>) {
  // expected-error @+2 {{padding must have 4 entries, got 2}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = paddle.max_pool2d %x {kernel = array<i64: 2, 2>, padding = array<i64: 1, 1>} : tensor<1x3x8x8xf32> -> tensor<1x3x9x9xf32>
  return
}

// -----

func.func @pool_padding_too_large(%x: tensor<1x3x8x8xf32>) {
  // expected-error @+2 {{padding [0, 0, 2, 0] exceeds half the kernel size [3, 3]}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = paddle.max_pool2d %x {kernel = array<i64: 3, 3>, padding = array<i64: 0, 0, 2, 0>} : tensor<1x3x8x8xf32> -> tensor<1x3x8x6xf32>
  return
}

// -----

func.func @pool_empty(%x: tensor<1x3x8x2xf32>) {
  // expected-error @+2 {{pooling output width would be empty: input size 2 with padding 0 + 1 is smaller than the kernel 4}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = paddle.avg_pool2d %x {kernel = array<i64: 4, 4>, padding = array<i64: 0, 0, 0, 1>} : tensor<1x3x8x2xf32> -> tensor<1x3x5x1xf32>
  return
}

// -----

func.func @pool_result(%x: tensor<1x3x8x8xf32>) {
  // expected-error @+2 {{inferred type(s) 'tensor<1x3x4x4xf32>' are incompatible with return type(s) of operation 'tensor<1x3x3x3xf32>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = paddle.max_pool2d %x {kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>, ceil_mode} : tensor<1x3x8x8xf32> -> tensor<1x3x3x3xf32>
  return
}

// -----

func.func @avg_pool_int(%x: tensor<1x3x8x8xi32>) {
  // expected-error @+1 {{operand #0 must be ranked tensor of 16-bit float or bfloat16 type or 32-bit float or 64-bit float values}}
  %0 = paddle.avg_pool2d %x {kernel = array<i64: 2, 2>} : tensor<1x3x8x8xi32> -> tensor<1x3x7x7xi32>
  return
}

// -----

func.func @rng_sizes(%s: tensor<i64>, %n: index) {
  // expected-error @+1 {{expects one size operand per dynamic dim: 2 dynamic dims, 1 sizes}}
  %0 = paddle.rng_uniform %s [%n] : tensor<i64> -> tensor<?x?xf32>
  return
}

// -----

func.func @rng_range(%s: tensor<i64>) {
  // expected-error @+1 {{low (2.000000e+00) must not exceed high (1.000000e+00)}}
  %0 = paddle.rng_uniform %s {low = 2.0} : tensor<i64> -> tensor<4xf32>
  return
}

// -----

func.func @rng_infinite(%s: tensor<i64>) {
  // expected-error @+1 {{low and high must be finite, got 0.000000e+00 and INF}}
  %0 = paddle.rng_uniform %s {high = 0x7FF0000000000000 : f64} : tensor<i64> -> tensor<4xf32>
  return
}

// -----

func.func @rng_block_offsets(%s: tensor<i64>, %n: index) {
  // expected-error @+1 {{expects one offset and one whole size per dim of 'tensor<4x3xf32>': 1 offsets, 2 whole sizes}}
  %0 = paddle.rng_uniform_block %s [%n] of [8, 6] : tensor<i64> -> tensor<4x3xf32>
  return
}

// -----

func.func @rng_block_larger_than_whole(%s: tensor<i64>, %n: index) {
  // expected-error @+1 {{whole dim 1 of size 2 is smaller than the block's 3}}
  %0 = paddle.rng_uniform_block %s [%n, %n] of [8, 2] : tensor<i64> -> tensor<4x3xf32>
  return
}

// -----

func.func @rng_block_dynamic(%s: tensor<i64>, %n: index) {
  // expected-error @+1 {{needs a static result shape, got 'tensor<?x3xf32>'}}
  %0 = paddle.rng_uniform_block %s [%n, %n] of [8, 6] : tensor<i64> -> tensor<?x3xf32>
  return
}

// -----

func.func @rng_seed_type(%s: tensor<i32>) {
  // expected-error @+1 {{operand #0 must be 0D tensor of 64-bit signless integer values}}
  %0 = paddle.rng_uniform %s : tensor<i32> -> tensor<4xf32>
  return
}

// -----

func.func @rng_int_result(%s: tensor<i64>) {
  // expected-error @+1 {{result #0 must be ranked tensor of 16-bit float or bfloat16 type or 32-bit float or 64-bit float values}}
  %0 = paddle.rng_uniform %s : tensor<i64> -> tensor<4xi32>
  return
}

// -----

func.func @conv_huge_padding(%x: tensor<1x3x8x8xf32>, %w: tensor<3x3x1x1xf32>) {
  // expected-error @+2 {{padding entries must be < 2^31, got [9223372036854775807, 0, 1, 0]}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = paddle.conv2d %x, %w {padding = array<i64: 9223372036854775807, 0, 1, 0>} : tensor<1x3x8x8xf32>, tensor<3x3x1x1xf32> -> tensor<1x3x8x8xf32>
  return
}

// -----

func.func @conv_huge_groups(%x: tensor<1x3x8x8xf32>, %w: tensor<3x3x1x1xf32>) {
  // expected-error @+2 {{groups must be < 2^31, got 4611686018427387904}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = paddle.conv2d %x, %w {groups = 4611686018427387904} : tensor<1x3x8x8xf32>, tensor<3x3x1x1xf32> -> tensor<1x3x8x8xf32>
  return
}

// -----

// Only f16 and bf16 may widen to an f32 result.
func.func @matmul_widen_f64(%a: tensor<2x3xbf16>, %b: tensor<3x4xbf16>) {
  // expected-error @+2 {{inferred type(s) 'tensor<2x4xbf16>' are incompatible with return type(s) of operation 'tensor<2x4xf64>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = paddle.matmul %a, %b : tensor<2x3xbf16>, tensor<3x4xbf16> -> tensor<2x4xf64>
  return
}

// -----

func.func @matmul_widen_f32(%a: tensor<2x3xf32>, %b: tensor<3x4xf32>) {
  // expected-error @+2 {{inferred type(s) 'tensor<2x4xf32>' are incompatible with return type(s) of operation 'tensor<2x4xbf16>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = paddle.matmul %a, %b : tensor<2x3xf32>, tensor<3x4xf32> -> tensor<2x4xbf16>
  return
}


// -----

func.func @conv_widen_f64(%x: tensor<1x2x5x5xbf16>, %w: tensor<3x2x3x3xbf16>) {
  // expected-error @+2 {{inferred type(s) 'tensor<1x3x3x3xbf16>' are incompatible with return type(s) of operation 'tensor<1x3x3x3xf64>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = paddle.conv2d %x, %w : tensor<1x2x5x5xbf16>, tensor<3x2x3x3xbf16> -> tensor<1x3x3x3xf64>
  return
}

// -----

func.func @rng_overflow(%s: tensor<i64>) {
  // expected-error @+1 {{'paddle.rng_uniform' op result #0 has shape [4611686018427387904] of 'f32': more than 2^63 - 1 bytes}}
  %0 = paddle.rng_uniform %s : tensor<i64> -> tensor<4611686018427387904xf32>
  return
}

// -----

// The dilated window would wrap around: (2^31 - 1) * (2^33 - 1) + 1.
func.func @conv_window_overflow(%x: tensor<1x1x4x4xf32>, %w: tensor<1x1x8589934592x1xf32>) {
  // expected-error @+2 {{conv2d height sizes do not fit in 64 bits}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = paddle.conv2d %x, %w {dilations = array<i64: 2147483647, 1>} : tensor<1x1x4x4xf32>, tensor<1x1x8589934592x1xf32> -> tensor<1x1x?x4xf32>
  return
}

// -----

func.func @pool_size_overflow(%x: tensor<1x1x9223372036854775807x1xi8>) {
  // expected-error @+2 {{pooling output height does not fit in 64 bits}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = paddle.max_pool2d %x {kernel = array<i64: 2, 1>, strides = array<i64: 1, 1>, padding = array<i64: 1, 0, 1, 0>} : tensor<1x1x9223372036854775807x1xi8> -> tensor<1x1x?x1xi8>
  return
}
