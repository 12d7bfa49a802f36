// RUN: paddle-opt %s --paddle-donate-buffers --split-input-file --verify-diagnostics

// expected-error @+1 {{function 'range', argument 0: donated to result 2, but the function has 1 results}}
func.func @range(%x: tensor<4xf32> {paddle.aliasing_output = 2 : i64}) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}

// -----

// expected-error @+1 {{function 'twice', argument 1: result 0 is already donated to by an earlier argument}}
func.func @twice(%x: tensor<4xf32> {paddle.aliasing_output = 0 : i64},
                 %y: tensor<4xf32> {paddle.aliasing_output = 0 : i64}) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}

// -----

// expected-error @+1 {{function 'dynamic', argument 0: a donated argument needs a static shape, not tensor<?xf32>}}
func.func @dynamic(%x: tensor<?xf32> {paddle.aliasing_output = 0 : i64}) -> tensor<?xf32> {
  return %x : tensor<?xf32>
}

// -----

// expected-error @+1 {{function 'mismatch', argument 0: donated to result 0 of another type (tensor<4xf32> vs tensor<4xf64>)}}
func.func @mismatch(%x: tensor<4xf32> {paddle.aliasing_output = 0 : i64}, %y: tensor<4xf64>) -> tensor<4xf64> {
  return %y : tensor<4xf64>
}

// -----

// The verifier checks the attribute's type (test/Dialect/Paddle/invalid-attributes.mlir).
// expected-error @+1 {{'paddle.aliasing_output' must be an i64 result index, got "zero"}}
func.func @badattr(%x: tensor<4xf32> {paddle.aliasing_output = "zero"}) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}
