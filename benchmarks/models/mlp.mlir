// The MLP of examples/mlp/mlp.mlir with a static batch of 64, so its
// temporaries have static sizes and paddle-plan-memory can place them.
func.func @mlp(%x: tensor<64x64xf32>,
               %w1: tensor<64x128xf32>, %b1: tensor<128xf32>,
               %w2: tensor<128x10xf32>, %b2: tensor<10xf32>)
    -> (tensor<64x10xf32>, tensor<64xi64>) {
  %h = paddle.matmul %x, %w1 : tensor<64x64xf32>, tensor<64x128xf32> -> tensor<64x128xf32>
  %hb = paddle.add %h, %b1 : tensor<64x128xf32>, tensor<128xf32> -> tensor<64x128xf32>
  %a = paddle.gelu %hb : tensor<64x128xf32> -> tensor<64x128xf32>
  %l = paddle.matmul %a, %w2 : tensor<64x128xf32>, tensor<128x10xf32> -> tensor<64x10xf32>
  %lb = paddle.add %l, %b2 : tensor<64x10xf32>, tensor<10xf32> -> tensor<64x10xf32>
  %p = paddle.softmax %lb axis = -1 : tensor<64x10xf32> -> tensor<64x10xf32>
  %c = paddle.argmax %p axis = 1 : tensor<64x10xf32> -> tensor<64xi64>
  return %p, %c : tensor<64x10xf32>, tensor<64xi64>
}
