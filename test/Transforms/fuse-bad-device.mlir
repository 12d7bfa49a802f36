// RUN: not paddle-opt %s --paddle-fuse="device=no-such-device" 2>&1 | FileCheck %s
// CHECK: error: paddle-fuse: {{.*}}no-such-device
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = paddle.neg %x : tensor<4xf32> -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
