// RUN: paddle-opt %s --split-input-file --verify-diagnostics

func.func @softmax_axis_out_of_range(%x: tensor<4x3xf32>) {
  // expected-error @+2 {{axis -3 is out of range for rank 2}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = paddle.softmax %x axis = -3 : tensor<4x3xf32> -> tensor<4x3xf32>
  return
}

// -----

func.func @softmax_of_scalar(%x: tensor<f32>) {
  // expected-error @+2 {{expects an operand of rank at least 1}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = paddle.log_softmax %x axis = 0 : tensor<f32> -> tensor<f32>
  return
}

// -----

func.func @softmax_of_ints(%x: tensor<4xi32>) {
  // expected-error @+1 {{operand #0 must be ranked tensor of 16-bit float or bfloat16 type or 32-bit float or 64-bit float values}}
  %0 = paddle.softmax %x axis = 0 : tensor<4xi32> -> tensor<4xi32>
  return
}

// -----

func.func @softmax_wrong_shape(%x: tensor<4x3xf32>) {
  // expected-error @+2 {{inferred type(s) 'tensor<4x3xf32>' are incompatible with return type(s) of operation 'tensor<4x4xf32>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = paddle.softmax %x axis = 1 : tensor<4x3xf32> -> tensor<4x4xf32>
  return
}

// -----

func.func @layer_norm_no_axes(%x: tensor<4x3xf32>) {
  // expected-error @+2 {{axes must name at least one dim}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = paddle.layer_norm %x axes = [] : tensor<4x3xf32> -> tensor<4x3xf32>
  return
}

// -----

func.func @layer_norm_repeated_axis(%x: tensor<4x3xf32>) {
  // expected-error @+2 {{axis 1 is repeated}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = paddle.layer_norm %x axes = [-1, 1] : tensor<4x3xf32> -> tensor<4x3xf32>
  return
}

// -----

func.func @layer_norm_axis_out_of_range(%x: tensor<4x3xf32>) {
  // expected-error @+2 {{axis 2 is out of range for rank 2}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = paddle.layer_norm %x axes = [2] : tensor<4x3xf32> -> tensor<4x3xf32>
  return
}

// -----

func.func @layer_norm_scale_rank(%x: tensor<3xf32>, %g: tensor<1x3xf32>) {
  // expected-error @+2 {{scale of shape [1, 3] has a higher rank than x of shape [3]}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = paddle.layer_norm %x scale %g axes = [0] : tensor<3xf32>, tensor<1x3xf32> -> tensor<3xf32>
  return
}

// -----

func.func @layer_norm_scale_incompatible(%x: tensor<4x3xf32>, %g: tensor<4xf32>) {
  // expected-error @+2 {{shapes [4, 3] and [4] do not broadcast: dim 1 is 3 vs 4}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = paddle.layer_norm %x scale %g axes = [1] : tensor<4x3xf32>, tensor<4xf32> -> tensor<4x3xf32>
  return
}

// -----

func.func @layer_norm_bias_enlarges(%x: tensor<1x3xf32>, %b: tensor<4x3xf32>) {
  // expected-error @+2 {{bias of shape [4, 3] does not broadcast to x of shape [1, 3]}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = paddle.layer_norm %x bias %b axes = [1] : tensor<1x3xf32>, tensor<4x3xf32> -> tensor<1x3xf32>
  return
}

// -----

func.func @layer_norm_mixed_types(%x: tensor<4x3xf32>, %g: tensor<3xf16>) {
  // expected-error @+1 {{requires the same element type for all operands and results}}
  %0 = paddle.layer_norm %x scale %g axes = [1] : tensor<4x3xf32>, tensor<3xf16> -> tensor<4x3xf32>
  return
}

// -----

func.func @batch_norm_rank(%x: tensor<4xf32>, %p: tensor<4xf32>) {
  // expected-error @+2 {{x must have rank at least 2 ([N, C, ...]), got rank 1}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = paddle.batch_norm_inference %x, %p, %p, %p, %p : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  return
}

// -----

func.func @batch_norm_param_rank(%x: tensor<2x3xf32>, %p: tensor<3xf32>, %q: tensor<1x3xf32>) {
  // expected-error @+2 {{mean must be a 1-D tensor, got 'tensor<1x3xf32>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = paddle.batch_norm_inference %x, %p, %p, %q, %p : tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<1x3xf32>, tensor<3xf32> -> tensor<2x3xf32>
  return
}

// -----

func.func @batch_norm_channels(%x: tensor<2x3x5xf32>, %p: tensor<3xf32>, %q: tensor<5xf32>) {
  // expected-error @+2 {{variance has 5 elements but x has 3 channels (dim 1)}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = paddle.batch_norm_inference %x, %p, %p, %p, %q : tensor<2x3x5xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<5xf32> -> tensor<2x3x5xf32>
  return
}

// -----

func.func @batch_norm_mixed_types(%x: tensor<2x3xf32>, %p: tensor<3xf32>, %q: tensor<3xf64>) {
  // expected-error @+1 {{requires the same element type for all operands and results}}
  %0 = paddle.batch_norm_inference %x, %p, %q, %p, %p : tensor<2x3xf32>, tensor<3xf32>, tensor<3xf64>, tensor<3xf32>, tensor<3xf32> -> tensor<2x3xf32>
  return
}

// -----

func.func @layer_norm_negative_epsilon(%x: tensor<4x3xf32>) {
  // expected-error @+1 {{'paddle.layer_norm' op epsilon must be finite and non-negative, got -1.000000e-05}}
  %0 = paddle.layer_norm %x axes = [1] {epsilon = -1.0e-5 : f64} : tensor<4x3xf32> -> tensor<4x3xf32>
  return
}

// -----

func.func @batch_norm_nan_epsilon(%x: tensor<2x3xf32>, %p: tensor<3xf32>) {
  // expected-error @+1 {{'paddle.batch_norm_inference' op epsilon must be finite and non-negative, got nan}}
  %0 = paddle.batch_norm_inference %x, %p, %p, %p, %p {epsilon = 0x7FF8000000000000 : f64} : tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32> -> tensor<2x3xf32>
  return
}
