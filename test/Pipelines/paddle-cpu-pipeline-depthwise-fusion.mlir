// RUN: paddle-opt %s --split-input-file --paddle-cpu-pipeline=library=onednn --mlir-print-ir-after=paddle-use-onednn -o /dev/null 2>&1 | FileCheck %s
// RUN: paddle-opt %s --split-input-file --paddle-cpu-pipeline=library=onednn --mlir-print-ir-after=paddle-use-onednn -o /dev/null 2>&1 | grep -c "call @paddle_onednn_conv2d_grouped" | FileCheck %s --check-prefix=GROUPED

// MobileNetV2's expand and depthwise convs (paddle-use-onednn,
// fuse-depthwise): a depthwise 3x3 conv whose input only a 1x1 conv writes
// folds into that conv's call as a depthwise post-op (kind 13; stride 2.0
// is 0x4000000000000000 = 4611686018427387904). The splat biases are
// scalar shifts (kind 1, y * 1.0 + 0.25 and y * 1.0 - 0.5). The program:
// flags 5 (constant 1x1 weights and depthwise filter), 5 post-ops: the 1x1
// shift, clip 0..6 (kind 3), depthwise (filter, operand 0), its shift,
// clip. The call has one state word; the two calls' programs and states
// are gone. Only the last two functions keep a grouped conv call each.

// GROUPED: 2

// CHECK-NOT: memref<10xi64>
// CHECK-DAG: memref.global "private" constant @__paddle_onednn_program{{[_0-9]*}} : memref<22xi64> = dense<[5, 5, 1, -1, 4607182418800017408, 4598175219545276416, 3, -1, 0, 4618441417868443648, 13, 0, 4611686018427387904, 0, 1, -1, 4607182418800017408, -4620693217682128896, 3, -1, 0, 4618441417868443648]>
// CHECK-DAG: memref.global "private" @__paddle_onednn_state{{[_0-9]*}} : memref<1xi64> = dense<0>
// CHECK-NOT: memref<10xi64>
// CHECK-LABEL: func.func @expand_depthwise(
// CHECK-NOT: call @paddle_onednn_conv2d_grouped
// CHECK: memref.get_global @__paddle_onednn_state{{[_0-9]*}} : memref<1xi64>
// CHECK: memref.get_global @__paddle_onednn_program{{[_0-9]*}} : memref<22xi64>
// CHECK: call @paddle_onednn_conv2d(
// CHECK-NOT: call @paddle_onednn_conv2d_grouped
// CHECK: return
func.func @expand_depthwise(%x: tensor<1x16x12x12xf32>) -> tensor<1x96x6x6xf32> {
  %we = paddle.constant dense<0.5> : tensor<96x16x1x1xf32>
  %be = paddle.constant dense<0.25> : tensor<96xf32>
  %wd = paddle.constant dense<0.125> : tensor<96x1x3x3xf32>
  %bd = paddle.constant dense<-0.5> : tensor<96xf32>
  %zero = paddle.constant dense<0.0> : tensor<f32>
  %six = paddle.constant dense<6.0> : tensor<f32>
  %e = paddle.conv2d %x, %we : tensor<1x16x12x12xf32>, tensor<96x16x1x1xf32> -> tensor<1x96x12x12xf32>
  %ber = paddle.reshape %be shape = [1, -1, 1, 1] : tensor<96xf32> -> tensor<1x96x1x1xf32>
  %ea = paddle.add %e, %ber : tensor<1x96x12x12xf32>, tensor<1x96x1x1xf32> -> tensor<1x96x12x12xf32>
  %em = paddle.maximum %ea, %zero : tensor<1x96x12x12xf32>, tensor<f32> -> tensor<1x96x12x12xf32>
  %er = paddle.minimum %em, %six : tensor<1x96x12x12xf32>, tensor<f32> -> tensor<1x96x12x12xf32>
  %d = paddle.conv2d %er, %wd {groups = 96 : i64, padding = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : tensor<1x96x12x12xf32>, tensor<96x1x3x3xf32> -> tensor<1x96x6x6xf32>
  %bdr = paddle.reshape %bd shape = [1, -1, 1, 1] : tensor<96xf32> -> tensor<1x96x1x1xf32>
  %da = paddle.add %d, %bdr : tensor<1x96x6x6xf32>, tensor<1x96x1x1xf32> -> tensor<1x96x6x6xf32>
  %dm = paddle.maximum %da, %zero : tensor<1x96x6x6xf32>, tensor<f32> -> tensor<1x96x6x6xf32>
  %dr = paddle.minimum %dm, %six : tensor<1x96x6x6xf32>, tensor<f32> -> tensor<1x96x6x6xf32>
  return %dr : tensor<1x96x6x6xf32>
}

// -----

// Not folded: the expanded activation is also a result, so it must be
// stored.
// CHECK-LABEL: func.func @expanded_is_returned(
// CHECK: call @paddle_onednn_conv2d(
// CHECK: call @paddle_onednn_conv2d_grouped(
func.func @expanded_is_returned(%x: tensor<1x16x12x12xf32>) -> (tensor<1x96x12x12xf32>, tensor<1x96x12x12xf32>) {
  %we = paddle.constant dense<0.5> : tensor<96x16x1x1xf32>
  %wd = paddle.constant dense<0.125> : tensor<96x1x3x3xf32>
  %e = paddle.conv2d %x, %we : tensor<1x16x12x12xf32>, tensor<96x16x1x1xf32> -> tensor<1x96x12x12xf32>
  %d = paddle.conv2d %e, %wd {groups = 96 : i64, padding = array<i64: 1, 1, 1, 1>} : tensor<1x96x12x12xf32>, tensor<96x1x3x3xf32> -> tensor<1x96x12x12xf32>
  return %e, %d : tensor<1x96x12x12xf32>, tensor<1x96x12x12xf32>
}

// -----

// Not folded: the conv before the depthwise one is 3x3, not 1x1.
// CHECK-LABEL: func.func @not_after_1x1(
// CHECK: call @paddle_onednn_conv2d(
// CHECK: call @paddle_onednn_conv2d_grouped(
func.func @not_after_1x1(%x: tensor<1x16x12x12xf32>) -> tensor<1x96x12x12xf32> {
  %we = paddle.constant dense<0.5> : tensor<96x16x3x3xf32>
  %wd = paddle.constant dense<0.125> : tensor<96x1x3x3xf32>
  %e = paddle.conv2d %x, %we {padding = array<i64: 1, 1, 1, 1>} : tensor<1x16x12x12xf32>, tensor<96x16x3x3xf32> -> tensor<1x96x12x12xf32>
  %d = paddle.conv2d %e, %wd {groups = 96 : i64, padding = array<i64: 1, 1, 1, 1>} : tensor<1x96x12x12xf32>, tensor<96x1x3x3xf32> -> tensor<1x96x12x12xf32>
  return %d : tensor<1x96x12x12xf32>
}
