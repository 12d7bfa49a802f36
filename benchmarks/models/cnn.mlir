// A small CNN on 8 RGB images of 32x32: (conv 3x3 + relu + max pool 2x2)
// twice, then a dense layer to 10 classes.
func.func @cnn(%x: tensor<8x3x32x32xf32>,
               %k1: tensor<16x3x3x3xf32>, %c1: tensor<16x1x1xf32>,
               %k2: tensor<32x16x3x3xf32>, %c2: tensor<32x1x1xf32>,
               %w: tensor<2048x10xf32>, %b: tensor<10xf32>) -> tensor<8x10xf32> {
  %y1 = paddle.conv2d %x, %k1 {padding = array<i64: 1, 1, 1, 1>} : tensor<8x3x32x32xf32>, tensor<16x3x3x3xf32> -> tensor<8x16x32x32xf32>
  %z1 = paddle.add %y1, %c1 : tensor<8x16x32x32xf32>, tensor<16x1x1xf32> -> tensor<8x16x32x32xf32>
  %r1 = paddle.relu %z1 : tensor<8x16x32x32xf32> -> tensor<8x16x32x32xf32>
  %p1 = paddle.max_pool2d %r1 {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>} : tensor<8x16x32x32xf32> -> tensor<8x16x16x16xf32>
  %y2 = paddle.conv2d %p1, %k2 {padding = array<i64: 1, 1, 1, 1>} : tensor<8x16x16x16xf32>, tensor<32x16x3x3xf32> -> tensor<8x32x16x16xf32>
  %z2 = paddle.add %y2, %c2 : tensor<8x32x16x16xf32>, tensor<32x1x1xf32> -> tensor<8x32x16x16xf32>
  %r2 = paddle.relu %z2 : tensor<8x32x16x16xf32> -> tensor<8x32x16x16xf32>
  %p2 = paddle.max_pool2d %r2 {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>} : tensor<8x32x16x16xf32> -> tensor<8x32x8x8xf32>
  %f = paddle.reshape %p2 shape = [8, 2048] : tensor<8x32x8x8xf32> -> tensor<8x2048xf32>
  %l = paddle.matmul %f, %w : tensor<8x2048xf32>, tensor<2048x10xf32> -> tensor<8x10xf32>
  %o = paddle.add %l, %b : tensor<8x10xf32>, tensor<10xf32> -> tensor<8x10xf32>
  return %o : tensor<8x10xf32>
}
