// A two-layer MLP classifier in the paddle dialect: the demo model of
// scripts/demo.sh. The batch dim is dynamic; weights are arguments so the
// demo can feed the same numbers to numpy.
func.func @mlp(%x: tensor<?x64xf32>,
               %w1: tensor<64x128xf32>, %b1: tensor<128xf32>,
               %w2: tensor<128x10xf32>, %b2: tensor<10xf32>)
    -> (tensor<?x10xf32>, tensor<?xi64>) {
  %h = paddle.matmul %x, %w1 : tensor<?x64xf32>, tensor<64x128xf32> -> tensor<?x128xf32>
  %hb = paddle.add %h, %b1 : tensor<?x128xf32>, tensor<128xf32> -> tensor<?x128xf32>
  %a = paddle.gelu %hb : tensor<?x128xf32> -> tensor<?x128xf32>
  %l = paddle.matmul %a, %w2 : tensor<?x128xf32>, tensor<128x10xf32> -> tensor<?x10xf32>
  %lb = paddle.add %l, %b2 : tensor<?x10xf32>, tensor<10xf32> -> tensor<?x10xf32>
  %p = paddle.softmax %lb axis = -1 : tensor<?x10xf32> -> tensor<?x10xf32>
  %c = paddle.argmax %p axis = 1 : tensor<?x10xf32> -> tensor<?xi64>
  return %p, %c : tensor<?x10xf32>, tensor<?xi64>
}
