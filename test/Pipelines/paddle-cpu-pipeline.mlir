// RUN: paddle-opt %s --paddle-cpu-pipeline | FileCheck %s
// The pipeline leaves nothing but the LLVM dialect (run-time check messages
// still name the paddle op).

// CHECK-NOT: {{^ *(%.* = )?"?paddle\.}}
// CHECK-NOT: linalg.
// CHECK-NOT: memref.
// CHECK-NOT: func.func
// CHECK-LABEL: llvm.func @main
// Allocations go through the runtime, which bounds them, and ask for their
// alignment: the allocated pointer is the aligned one, so the runtime hands
// the result buffer to the caller without a copy.
// CHECK-NOT: llvm.call @_mlir_memref_to_llvm_alloc(
// CHECK: %[[BUF:.*]] = llvm.call @_mlir_memref_to_llvm_aligned_alloc(
// CHECK: llvm.insertvalue %[[BUF]], %{{.*}}[0]
// CHECK-NEXT: llvm.insertvalue %[[BUF]], %{{.*}}[1]
// CHECK: llvm.fcmp
// CHECK-NOT: {{^ *(%.* = )?"?paddle\.}}
func.func @main(%a: tensor<4x?xf32>, %b: tensor<?xf32>) -> tensor<4x?xf32> {
  %0 = "paddle.add"(%a, %b) : (tensor<4x?xf32>, tensor<?xf32>) -> tensor<4x?xf32>
  %1 = paddle.relu %0 : tensor<4x?xf32> -> tensor<4x?xf32>
  return %1 : tensor<4x?xf32>
}
