// RUN: paddle-opt %s --paddle-donate-buffers --split-input-file | FileCheck %s
// RUN: paddle-opt %s --split-input-file --paddle-convert-paddle-to-linalg --paddle-donate-buffers \
// RUN:   --eliminate-empty-tensors --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" \
// RUN:   --paddle-drop-donated-results --canonicalize | FileCheck %s --check-prefix=BUF

// The donated argument receives result 0; the other argument is read-only.
// CHECK-LABEL: func @step
// CHECK-SAME: (%[[W:.*]]: tensor<4xf32> {bufferization.writable = true, paddle.aliasing_output = 0 : i64},
// CHECK-SAME: %[[G:.*]]: tensor<4xf32> {bufferization.writable = false})
// CHECK-SAME: attributes {paddle.donated_results = array<i64: 0>}
// CHECK: %[[NEW:.*]] = paddle.sub %[[W]], %[[G]]
// CHECK: %[[M:.*]] = bufferization.materialize_in_destination %[[NEW]] in %[[W]]
// CHECK: return %[[M]], %[[M]]

// After bufferization the update is written into the argument in place and
// the function returns the other result only: here the update again, as the
// argument's buffer (which the deallocation pipeline later clones).
// BUF-LABEL: func @step
// BUF-SAME: (%[[W:.*]]: memref<4xf32>, %[[G:.*]]: memref<4xf32>) -> memref<4xf32>
// BUF-NOT: memref.alloc
// BUF: linalg.generic {{.*}} ins(%[[W]], %[[G]] : {{.*}}) outs(%[[W]] : memref<4xf32>)
// BUF: return %[[W]]
func.func @step(%w: tensor<4xf32> {paddle.aliasing_output = 0 : i64},
                %g: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %new = paddle.sub %w, %g : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  return %new, %new : tensor<4xf32>, tensor<4xf32>
}

// -----

// A result used only by the return is computed in the donated buffer itself.
// BUF-LABEL: func @inplace
// BUF-SAME: (%[[W:.*]]: memref<4xf32>, %[[G:.*]]: memref<4xf32>) -> memref<f32>
// BUF-NOT: memref.alloc() {{.*}} : memref<4xf32>
// BUF: linalg.generic {{.*}} ins(%[[W]], %[[G]] : {{.*}}) outs(%[[W]] : memref<4xf32>)
// BUF-NOT: memref.copy {{.*}}, %[[W]]
func.func @inplace(%w: tensor<4xf32> {paddle.aliasing_output = 1 : i64},
                   %g: tensor<4xf32>) -> (tensor<f32>, tensor<4xf32>) {
  %new = paddle.sub %w, %g : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  %s = paddle.reduce_sum %g axes = [0] : tensor<4xf32> -> tensor<f32>
  return %s, %new : tensor<f32>, tensor<4xf32>
}

// -----

// Without donation every tensor argument is read-only.
// CHECK-LABEL: func @plain
// CHECK-SAME: (%{{.*}}: tensor<4xf32> {bufferization.writable = false})
// CHECK-NOT: paddle.donated_results
func.func @plain(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = paddle.exp %x : tensor<4xf32> -> tensor<4xf32>
  return %y : tensor<4xf32>
}

