// RUN: paddle-opt %s --split-input-file --paddle-lower-fusion --verify-diagnostics

// The lowering needs linalg in the group.
func.func @paddle_left(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{paddle-lower-fusion: the group still holds paddle ops; run paddle-convert-paddle-to-linalg first}}
  %0 = paddle.fusion "elementwise"(%x : tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    %1 = paddle.neg %a : tensor<4xf32> -> tensor<4xf32>
    paddle.yield %1 : tensor<4xf32>
  }
  return %0 : tensor<4xf32>
}

// -----

func.func @argument_type(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'paddle.fusion' op input 0 has type 'tensor<4xf32>' but body argument 0 has type 'tensor<4xf64>'}}
  %0 = paddle.fusion "elementwise"(%x : tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf64>):
    %1 = paddle.cast %a : tensor<4xf64> -> tensor<4xf32>
    paddle.yield %1 : tensor<4xf32>
  }
  return %0 : tensor<4xf32>
}

// -----

func.func @argument_count(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'paddle.fusion' op has 1 inputs but its body takes 0 arguments}}
  %0 = paddle.fusion "elementwise"(%x : tensor<4xf32>) -> tensor<4xf32> {
    %c = paddle.constant dense<1.0> : tensor<4xf32>
    paddle.yield %c : tensor<4xf32>
  }
  return %0 : tensor<4xf32>
}

// -----

func.func @yield_type(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'paddle.fusion' op yields 'tensor<4xf64>' but its results are 'tensor<4xf32>'}}
  %0 = paddle.fusion "elementwise"(%x : tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    %1 = paddle.cast %a : tensor<4xf32> -> tensor<4xf64>
    paddle.yield %1 : tensor<4xf64>
  }
  return %0 : tensor<4xf32>
}


// -----

func.func @unknown_kind(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'paddle.fusion' op has unknown kind "elementwize"; expected one of elementwise, reduction, softmax, layer_norm, matmul, conv}}
  %0 = paddle.fusion "elementwize"(%x : tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    %1 = paddle.neg %a : tensor<4xf32> -> tensor<4xf32>
    paddle.yield %1 : tensor<4xf32>
  }
  return %0 : tensor<4xf32>
}
