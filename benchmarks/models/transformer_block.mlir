// One pre-norm transformer block: 128 tokens of width 64, one attention
// head, MLP of width 256 with gelu.
//   h = x + (softmax(q k^T / sqrt(64)) v) wo,  q, k, v = ln1(x) wq, wk, wv
//   y = h + gelu(ln2(h) w1 + b1) w2 + b2
func.func @transformer_block(%x: tensor<128x64xf32>,
    %g1: tensor<64xf32>, %be1: tensor<64xf32>,
    %wq: tensor<64x64xf32>, %wk: tensor<64x64xf32>, %wv: tensor<64x64xf32>,
    %wo: tensor<64x64xf32>,
    %g2: tensor<64xf32>, %be2: tensor<64xf32>,
    %w1: tensor<64x256xf32>, %b1: tensor<256xf32>,
    %w2: tensor<256x64xf32>, %b2: tensor<64xf32>) -> tensor<128x64xf32> {
  %n1 = paddle.layer_norm %x scale %g1 bias %be1 axes = [-1] : tensor<128x64xf32>, tensor<64xf32>, tensor<64xf32> -> tensor<128x64xf32>
  %q = paddle.matmul %n1, %wq : tensor<128x64xf32>, tensor<64x64xf32> -> tensor<128x64xf32>
  %k = paddle.matmul %n1, %wk : tensor<128x64xf32>, tensor<64x64xf32> -> tensor<128x64xf32>
  %v = paddle.matmul %n1, %wv : tensor<128x64xf32>, tensor<64x64xf32> -> tensor<128x64xf32>
  %kt = paddle.transpose %k perm = [1, 0] : tensor<128x64xf32> -> tensor<64x128xf32>
  %s = paddle.matmul %q, %kt : tensor<128x64xf32>, tensor<64x128xf32> -> tensor<128x128xf32>
  %scale = paddle.constant dense<0.125> : tensor<f32>
  %ss = paddle.mul %s, %scale : tensor<128x128xf32>, tensor<f32> -> tensor<128x128xf32>
  %p = paddle.softmax %ss axis = -1 : tensor<128x128xf32> -> tensor<128x128xf32>
  %att = paddle.matmul %p, %v : tensor<128x128xf32>, tensor<128x64xf32> -> tensor<128x64xf32>
  %o = paddle.matmul %att, %wo : tensor<128x64xf32>, tensor<64x64xf32> -> tensor<128x64xf32>
  %h = paddle.add %x, %o : tensor<128x64xf32>, tensor<128x64xf32> -> tensor<128x64xf32>
  %n2 = paddle.layer_norm %h scale %g2 bias %be2 axes = [-1] : tensor<128x64xf32>, tensor<64xf32>, tensor<64xf32> -> tensor<128x64xf32>
  %u = paddle.matmul %n2, %w1 : tensor<128x64xf32>, tensor<64x256xf32> -> tensor<128x256xf32>
  %ub = paddle.add %u, %b1 : tensor<128x256xf32>, tensor<256xf32> -> tensor<128x256xf32>
  %a = paddle.gelu %ub : tensor<128x256xf32> -> tensor<128x256xf32>
  %d = paddle.matmul %a, %w2 : tensor<128x256xf32>, tensor<256x64xf32> -> tensor<128x64xf32>
  %db = paddle.add %d, %b2 : tensor<128x64xf32>, tensor<64xf32> -> tensor<128x64xf32>
  %y = paddle.add %h, %db : tensor<128x64xf32>, tensor<128x64xf32> -> tensor<128x64xf32>
  return %y : tensor<128x64xf32>
}
