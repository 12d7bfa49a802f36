// RUN: paddle-opt --paddle-autodiff --split-input-file --verify-diagnostics %s

func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{arith.addf at}}
  %y = arith.addf %x, %x : tensor<4xf32>
  return %y : tensor<4xf32>
}
func.func private @f_vjp(tensor<4xf32>, tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)
    attributes {paddle.vjp_of = @f, paddle.wrt = array<i64: 0>}

// -----

// The message names the op and its file:line:col.
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error-re @+1 {{arith.mulf at {{.*}}autodiff-errors.mlir:{{[0-9]+}}:{{[0-9]+}} has no gradient rule (differentiating @f for @f_vjp)}}
  %y = arith.mulf %x, %x : tensor<4xf32>
  %z = paddle.tanh %y : tensor<4xf32> -> tensor<4xf32>
  return %z : tensor<4xf32>
}
func.func private @f_vjp(tensor<4xf32>, tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)
    attributes {paddle.vjp_of = @f, paddle.wrt = array<i64: 0>}

// -----

func.func @g(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = paddle.exp %x : tensor<4xf32> -> tensor<4xf32>
  return %y : tensor<4xf32>
}
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{@f makes a call, which paddle-autodiff does not differentiate: inline calls first (--inline)}}
  %y = func.call @g(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}
func.func private @f_vjp(tensor<4xf32>, tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)
    attributes {paddle.vjp_of = @f, paddle.wrt = array<i64: 0>}

// -----

func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = paddle.exp %x : tensor<4xf32> -> tensor<4xf32>
  return %y : tensor<4xf32>
}
// expected-error @+1 {{type of @f_vjp does not match the gradient request of @f: expected (tensor<4xf32>, tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) (arguments of @f, one cotangent per result; results of @f, one gradient per wrt argument), got (tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)}}
func.func private @f_vjp(tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)
    attributes {paddle.vjp_of = @f, paddle.wrt = array<i64: 0>}

// -----

func.func @f(%x: tensor<4xf32>, %n: tensor<4xi32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}
// expected-error @+1 {{paddle.wrt argument 1 of @f has type 'tensor<4xi32>'; only floating-point tensors can be differentiated}}
func.func private @f_vjp(tensor<4xf32>, tensor<4xi32>, tensor<4xf32>) -> (tensor<4xf32>, tensor<4xi32>)
    attributes {paddle.vjp_of = @f, paddle.wrt = array<i64: 1>}

// -----

func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}
// expected-error @+1 {{paddle.wrt index 3 is out of range: @f has 1 arguments}}
func.func private @f_vjp(tensor<4xf32>, tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)
    attributes {paddle.vjp_of = @f, paddle.wrt = array<i64: 3>}

// -----

// expected-error @+1 {{@missing (paddle.vjp_of) is not a function of the module}}
func.func private @f_vjp(tensor<4xf32>, tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)
    attributes {paddle.vjp_of = @missing, paddle.wrt = array<i64: 0>}

// -----

func.func private @ext(tensor<4xf32>) -> tensor<4xf32>
// expected-error @+1 {{@ext has no body to differentiate}}
func.func private @f_vjp(tensor<4xf32>, tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)
    attributes {paddle.vjp_of = @ext, paddle.wrt = array<i64: 0>}

// -----

// expected-error @+1 {{gradient requests form a cycle through @a}}
func.func private @a(tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>)
    attributes {paddle.vjp_of = @b, paddle.wrt = array<i64: 0>}
func.func private @b(tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>)
    attributes {paddle.vjp_of = @a, paddle.wrt = array<i64: 0>}

// -----

func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}
// expected-error @+1 {{gradient request needs paddle.wrt = array<i64: ...>}}
func.func private @f_vjp(tensor<4xf32>, tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)
    attributes {paddle.vjp_of = @f}

// -----

func.func @f(%x: tensor<?x?xf32>) -> tensor<?xf32> {
  // expected-error @+2 {{gradient of reduce_mean needs a static size in dim 1}}
  // expected-error @+1 {{could not build the gradient of paddle.reduce_mean for @f_vjp}}
  %y = paddle.reduce_mean %x axes = [1] : tensor<?x?xf32> -> tensor<?xf32>
  return %y : tensor<?xf32>
}
func.func private @f_vjp(tensor<?x?xf32>, tensor<?xf32>) -> (tensor<?xf32>, tensor<?x?xf32>)
    attributes {paddle.vjp_of = @f, paddle.wrt = array<i64: 0>}

// -----

// Mixed-precision ops (what paddle-convert-precision writes) have no
// gradient rule: differentiate the f32 model first.
func.func @f(%x: tensor<2x2xbf16>) -> tensor<2x2xf32> {
  // expected-error @+2 {{gradient of matmul with 'bf16' operands and an 'f32' result is not supported; differentiate before converting precision}}
  // expected-error @+1 {{could not build the gradient of paddle.matmul for @f_vjp}}
  %y = paddle.matmul %x, %x : tensor<2x2xbf16>, tensor<2x2xbf16> -> tensor<2x2xf32>
  return %y : tensor<2x2xf32>
}
func.func private @f_vjp(tensor<2x2xbf16>, tensor<2x2xf32>) -> (tensor<2x2xf32>, tensor<2x2xbf16>)
    attributes {paddle.vjp_of = @f, paddle.wrt = array<i64: 0>}
