// RUN: paddle-opt %s --split-input-file --verify-diagnostics

func.func @axis_out_of_range(%x: tensor<4x3xf32>) {
  // expected-error @+2 {{axis 2 is out of range for rank 2}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = paddle.reduce_sum %x axes = [2] : tensor<4x3xf32> -> tensor<4xf32>
  return
}

// -----

func.func @negative_axis_out_of_range(%x: tensor<4x3xf32>) {
  // expected-error @+2 {{axis -3 is out of range for rank 2}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = paddle.reduce_max %x axes = [-3] : tensor<4x3xf32> -> tensor<4xf32>
  return
}

// -----

func.func @repeated_axis(%x: tensor<4x3xf32>) {
  // expected-error @+2 {{axis -1 is repeated}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = paddle.reduce_min %x axes = [1, -1] : tensor<4x3xf32> -> tensor<4xf32>
  return
}

// -----

func.func @wrong_result_shape(%x: tensor<4x3xf32>) {
  // expected-error @+2 {{inferred type(s) 'tensor<4x1xf32>' are incompatible with return type(s) of operation 'tensor<4xf32>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = paddle.reduce_prod %x axes = [1] keepdims : tensor<4x3xf32> -> tensor<4xf32>
  return
}

// -----

func.func @wrong_result_element_type(%x: tensor<4x3xf32>) {
  // expected-error @+1 {{requires the same element type for all operands and results}}
  %0 = paddle.reduce_sum %x : tensor<4x3xf32> -> tensor<f64>
  return
}

// -----

func.func @mean_of_ints(%x: tensor<4x3xi32>) {
  // expected-error @+1 {{operand #0 must be ranked tensor of 16-bit float or bfloat16 type or 32-bit float or 64-bit float values}}
  %0 = paddle.reduce_mean %x : tensor<4x3xi32> -> tensor<i32>
  return
}

// -----

func.func @sum_of_bools(%x: tensor<4xi1>) {
  // expected-error @+1 {{operand #0 must be ranked tensor of}}
  %0 = paddle.reduce_sum %x : tensor<4xi1> -> tensor<i1>
  return
}

// -----

func.func @argmax_axis_out_of_range(%x: tensor<4x3xf32>) {
  // expected-error @+2 {{axis 5 is out of range for rank 2}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = paddle.argmax %x axis = 5 : tensor<4x3xf32> -> tensor<4xi64>
  return
}

// -----

func.func @argmax_result_not_i64(%x: tensor<4x3xf32>) {
  // expected-error @+1 {{result #0 must be ranked tensor of 64-bit signless integer values}}
  %0 = paddle.argmax %x axis = 1 : tensor<4x3xf32> -> tensor<4xi32>
  return
}

// -----

func.func @argmax_wrong_shape(%x: tensor<4x3xf32>) {
  // expected-error @+2 {{inferred type(s) 'tensor<3xi64>' are incompatible with return type(s) of operation 'tensor<4xi64>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = paddle.argmax %x axis = 0 : tensor<4x3xf32> -> tensor<4xi64>
  return
}

// -----

// max, min and argmax of nothing have no value (numpy raises).
func.func @max_of_nothing(%x: tensor<0x3xf32>) {
  // expected-error @+1 {{'paddle.reduce_max' op reduces dim 0 of size 0, which has no maximum (numpy raises)}}
  %0 = paddle.reduce_max %x axes = [0] : tensor<0x3xf32> -> tensor<3xf32>
  return
}

// -----

// Even when the result is empty too, as numpy.
func.func @min_of_nothing(%x: tensor<0x0xi32>) {
  // expected-error @+1 {{'paddle.reduce_min' op reduces dim 1 of size 0, which has no minimum (numpy raises)}}
  %0 = paddle.reduce_min %x axes = [-1] : tensor<0x0xi32> -> tensor<0xi32>
  return
}

// -----

func.func @max_of_nothing_all_axes(%x: tensor<2x0xf32>) {
  // expected-error @+1 {{'paddle.reduce_max' op reduces dim 1 of size 0, which has no maximum (numpy raises)}}
  %0 = paddle.reduce_max %x : tensor<2x0xf32> -> tensor<f32>
  return
}

// -----

func.func @argmax_of_nothing(%x: tensor<3x0xf32>) {
  // expected-error @+1 {{'paddle.argmax' op reduces dim 1 of size 0, which has no largest element (numpy raises)}}
  %0 = paddle.argmax %x axis = -1 : tensor<3x0xf32> -> tensor<3xi64>
  return
}

// -----

// With an identity, or allow_empty, reducing nothing has a value; so does
// reducing a non-empty dim of an empty tensor.
func.func @reductions_of_nothing(%x: tensor<0x3xf32>) -> (tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<0xf32>, tensor<0xi64>) {
  %0 = paddle.reduce_sum %x axes = [0] : tensor<0x3xf32> -> tensor<3xf32>
  %1 = paddle.reduce_mean %x axes = [0] : tensor<0x3xf32> -> tensor<3xf32>
  %2 = paddle.reduce_max %x axes = [0] allow_empty : tensor<0x3xf32> -> tensor<3xf32>
  %3 = paddle.reduce_min %x axes = [0] allow_empty : tensor<0x3xf32> -> tensor<3xf32>
  %4 = paddle.reduce_max %x axes = [1] : tensor<0x3xf32> -> tensor<0xf32>
  %5 = paddle.argmax %x axis = 1 : tensor<0x3xf32> -> tensor<0xi64>
  return %0, %1, %2, %3, %4, %5 : tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<0xf32>, tensor<0xi64>
}
