// RUN: paddle-opt %s --paddle-lower-collectives --split-input-file | FileCheck %s

// shard collectives (after shard-partition) to calls of the runtime's
// SPMD functions (paddle_runtime/spmd.h), with the mesh shape and the axes
// as constant globals.

shard.grid @mesh(shape = 2x2)

// CHECK-DAG: memref.global "private" constant @__paddle_spmd_mesh_2_2 : memref<2xi64> = dense<2>
// CHECK-DAG: memref.global "private" constant @__paddle_spmd_axes_1_0 : memref<2xi64> = dense<[1, 0]>
// CHECK-DAG: func.func private @paddle_spmd_all_reduce_f32(memref<*xf32>, memref<*xf32>, memref<*xi64>, memref<*xi64>, i32, i32) attributes {llvm.emit_c_interface}
// CHECK-DAG: func.func private @paddle_spmd_all_gather_i64(memref<*xi64>, memref<*xi64>, memref<*xi64>, memref<*xi64>, i32, i64) attributes {llvm.emit_c_interface}
// CHECK-NOT: shard.grid
// CHECK-LABEL: func.func @collectives
func.func @collectives(%x: tensor<4x6xf32>, %i: tensor<4x6xi64>) -> (tensor<4x6xf32>, tensor<4x6xf32>, tensor<8x6xi64>, tensor<2x6xf32>, tensor<8x3xf32>) {
  // all_reduce over axes [1, 0], max: dtype f32 (1), op max (2).
  // CHECK: %[[IN:.*]] = bufferization.to_buffer %{{.*}} read_only : tensor<4x6xf32> to memref<4x6xf32>
  // CHECK: %[[OUT:.*]] = memref.alloc() : memref<4x6xf32>
  // CHECK: memref.get_global @__paddle_spmd_axes_1_0
  // CHECK: call @paddle_spmd_all_reduce_f32({{.*}}, %c1_i32, %c2_i32)
  // CHECK: bufferization.to_tensor %[[OUT]] restrict writable
  %0 = shard.all_reduce %x on @mesh grid_axes = [1, 0] reduction = max : tensor<4x6xf32> -> tensor<4x6xf32>
  // An average is a sum scaled by the group size.
  // CHECK: %[[SUM:.*]] = bufferization.to_tensor
  // CHECK: paddle.div %[[SUM]], %{{.*}} : tensor<4x6xf32>, tensor<f32>
  %1 = shard.all_reduce %x on @mesh grid_axes = [0] reduction = average : tensor<4x6xf32> -> tensor<4x6xf32>
  // CHECK: call @paddle_spmd_all_gather_i64({{.*}}) :
  %2 = shard.all_gather %i on @mesh grid_axes = [0] gather_axis = 0 : tensor<4x6xi64> -> tensor<8x6xi64>
  // CHECK: call @paddle_spmd_reduce_scatter_f32({{.*}}) : (memref<*xf32>, memref<*xf32>, memref<*xi64>, memref<*xi64>, i32, i32, i64) -> ()
  %3 = shard.reduce_scatter %x on @mesh grid_axes = [1] scatter_axis = 0 : tensor<4x6xf32> -> tensor<2x6xf32>
  // CHECK: call @paddle_spmd_all_to_all_f32({{.*}}) : (memref<*xf32>, memref<*xf32>, memref<*xi64>, memref<*xi64>, i32, i64, i64) -> ()
  %4 = shard.all_to_all %x on @mesh grid_axes = [0] split_axis = 1 concat_axis = 0 : tensor<4x6xf32> -> tensor<8x3xf32>
  return %0, %1, %2, %3, %4 : tensor<4x6xf32>, tensor<4x6xf32>, tensor<8x6xi64>, tensor<2x6xf32>, tensor<8x3xf32>
}

// -----

shard.grid @mesh(shape = 2x2)

// all_slice: this device's block at its coordinate along the axis.
// CHECK-LABEL: func.func @slice_and_indices
// CHECK: %[[I:.*]] = call @paddle_spmd_process_index(%{{.*}}, %c1_i64) : (memref<*xi64>, i64) -> i64
// CHECK: %[[IX:.*]] = arith.index_cast %[[I]] : i64 to index
// CHECK: tensor.extract_slice %{{.*}}[%{{.*}}, 0] [%{{.*}}, %{{.*}}] [1, 1] : tensor<4x6xf32>
// The mesh shape is a constant.
// CHECK: %[[C2:.*]] = arith.constant 2 : index
// CHECK: return %{{.*}}, %[[C2]]
func.func @slice_and_indices(%x: tensor<4x6xf32>) -> (tensor<2x6xf32>, index) {
  %0 = shard.all_slice %x on @mesh grid_axes = [1] slice_axis = 0 : tensor<4x6xf32> -> tensor<2x6xf32>
  %s = shard.grid_shape @mesh axes = [0] : index
  return %0, %s : tensor<2x6xf32>, index
}


// -----

// Over axes of size 1 every collective is the identity: no call, no copy
// (a one-device mesh costs nothing). Axis 1 has 2 devices and keeps its.

shard.grid @mesh(shape = 1x2)

// CHECK-LABEL: func.func @unit_axes
// CHECK-SAME: (%[[X:.*]]: tensor<4x6xf32>)
// CHECK-NOT: call @paddle_spmd_all_gather
// CHECK-NOT: paddle.div
// CHECK-NOT: extract_slice
// CHECK: call @paddle_spmd_all_reduce_f32
// CHECK-NOT: call
// CHECK: return %[[X]], %[[X]], %[[X]], %[[X]], %{{.*}}
func.func @unit_axes(%x: tensor<4x6xf32>) -> (tensor<4x6xf32>, tensor<4x6xf32>, tensor<4x6xf32>, tensor<4x6xf32>, tensor<4x6xf32>) {
  %0 = shard.all_reduce %x on @mesh grid_axes = [0] reduction = average : tensor<4x6xf32> -> tensor<4x6xf32>
  %1 = shard.all_gather %x on @mesh grid_axes = [0] gather_axis = 0 : tensor<4x6xf32> -> tensor<4x6xf32>
  %2 = shard.reduce_scatter %x on @mesh grid_axes = [0] scatter_axis = 1 : tensor<4x6xf32> -> tensor<4x6xf32>
  %3 = shard.all_slice %x on @mesh grid_axes = [0] slice_axis = 0 : tensor<4x6xf32> -> tensor<4x6xf32>
  %4 = shard.all_reduce %x on @mesh grid_axes = [1] : tensor<4x6xf32> -> tensor<4x6xf32>
  return %0, %1, %2, %3, %4 : tensor<4x6xf32>, tensor<4x6xf32>, tensor<4x6xf32>, tensor<4x6xf32>, tensor<4x6xf32>
}
