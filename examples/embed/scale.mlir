// The model embedded by main.c: y = relu(x * w + b) on a dynamic batch.
func.func @forward(%x: tensor<?x4xf32>, %w: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<?x4xf32> {
  %0 = paddle.mul %x, %w : tensor<?x4xf32>, tensor<4xf32> -> tensor<?x4xf32>
  %1 = paddle.add %0, %b : tensor<?x4xf32>, tensor<4xf32> -> tensor<?x4xf32>
  %2 = paddle.relu %1 : tensor<?x4xf32> -> tensor<?x4xf32>
  return %2 : tensor<?x4xf32>
}
