// RUN: paddle-opt %s --paddle-convert-precision=precision=f16 --verify-diagnostics

// expected-error @+1 {{paddle-convert-precision: precision must be f32 or bf16, got 'f16'}}
module {
  func.func @f(%x: tensor<2x2xf32>) -> tensor<2x2xf32> {
    %y = paddle.matmul %x, %x : tensor<2x2xf32>, tensor<2x2xf32> -> tensor<2x2xf32>
    return %y : tensor<2x2xf32>
  }
}
