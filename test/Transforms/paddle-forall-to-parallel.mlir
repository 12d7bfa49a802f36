// RUN: paddle-opt %s --pass-pipeline='builtin.module(func.func(paddle-forall-to-parallel))' | FileCheck %s

// The loop becomes an scf.parallel as upstream's conversion makes it, and
// keeps its paddle.min_task_size (paddle-lower-fusion's tile loops).
// CHECK-LABEL: func.func @tiles
// CHECK-NOT: scf.forall
// CHECK: scf.parallel (%[[I:.*]]) = (%c0) to (%c128) step (%c4)
// CHECK: memref.subview %{{.*}}[%[[I]], 0] [4, 768]
// CHECK: } {paddle.min_task_size = 1 : i64}
func.func @tiles(%x: memref<128x768xf32>) {
  %zero = arith.constant 0.0 : f32
  scf.forall (%i) = (0) to (128) step (4) {
    %t = memref.subview %x[%i, 0] [4, 768] [1, 1] : memref<128x768xf32> to memref<4x768xf32, strided<[768, 1], offset: ?>>
    linalg.fill ins(%zero : f32) outs(%t : memref<4x768xf32, strided<[768, 1], offset: ?>>)
  } {paddle.min_task_size = 1 : i64}
  return
}
