// RUN: paddle-opt %s --paddle-outline-kernels | FileCheck %s

// Each kernel (a linalg op, a memref.copy, a loop; one inside an scf.if
// too) moves into a function of its own named apart from the module's
// symbols (@kernel is taken). Constants it uses are cloned in, so the
// loop's bounds stay static; other values become arguments; a loop's
// results become the function's. The run-time check stays in the caller.
// CHECK-LABEL: func.func @main(
// CHECK-SAME: %[[A:.*]]: memref<16xf32>, %[[B:.*]]: memref<16xf32>, %[[N:.*]]: index, %[[FLAG:.*]]: i1)
// CHECK: cf.assert %{{.*}}, "n out of range"
// CHECK-NEXT: call @[[FILL:kernel_[0-9]+]](%[[B]]) : (memref<16xf32>) -> ()
// CHECK-NEXT: call @[[COPY:kernel_[0-9]+]](%[[A]], %[[B]])
// CHECK-NEXT: call @[[PAR:kernel_[0-9]+]](%[[A]], %[[B]])
// CHECK-NEXT: %[[SUM:.*]] = call @[[FOR:kernel_[0-9]+]](%[[N]], %[[A]]) : (index, memref<16xf32>) -> f32
// CHECK-NEXT: scf.if %[[FLAG]] {
// CHECK-NEXT: func.call @[[NESTED:kernel_[0-9]+]](%[[SUM]], %[[B]])
// CHECK: return %[[SUM]] : f32
// CHECK: func.func private @kernel(%{{.*}}: f32) -> f32
// CHECK: func.func private @[[FILL]](%[[FB:.*]]: memref<16xf32>)
// CHECK-NEXT: %[[ZERO:.*]] = arith.constant 0.0
// CHECK-NEXT: linalg.fill ins(%[[ZERO]] : f32) outs(%[[FB]] : memref<16xf32>)
// CHECK-NEXT: return
// CHECK: func.func private @[[COPY]](%[[CA:.*]]: memref<16xf32>, %[[CB:.*]]: memref<16xf32>)
// CHECK-NEXT: memref.copy %[[CA]], %[[CB]]
// CHECK: func.func private @[[PAR]](
// CHECK-DAG: %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG: %[[C1:.*]] = arith.constant 1 : index
// CHECK-DAG: %[[C16:.*]] = arith.constant 16 : index
// CHECK: scf.parallel (%{{.*}}) = (%[[C0]]) to (%[[C16]]) step (%[[C1]])
// CHECK: func.func private @[[FOR]](%[[FN:.*]]: index, %{{.*}}: memref<16xf32>) -> f32
// CHECK: %[[R:.*]] = scf.for %{{.*}} = %{{.*}} to %[[FN]]
// CHECK: return %[[R]] : f32
// CHECK: func.func private @[[NESTED]](%[[V:.*]]: f32, %[[NB:.*]]: memref<16xf32>)
// CHECK-NEXT: linalg.fill ins(%[[V]] : f32) outs(%[[NB]] : memref<16xf32>)
func.func @main(%a: memref<16xf32>, %b: memref<16xf32>, %n: index, %flag: i1) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %zero = arith.constant 0.0 : f32
  %ok = arith.cmpi ult, %n, %c16 : index
  cf.assert %ok, "n out of range"
  linalg.fill ins(%zero : f32) outs(%b : memref<16xf32>)
  memref.copy %a, %b : memref<16xf32> to memref<16xf32>
  scf.parallel (%i) = (%c0) to (%c16) step (%c1) {
    %v = memref.load %a[%i] : memref<16xf32>
    memref.store %v, %b[%i] : memref<16xf32>
    scf.reduce
  }
  %sum = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero) -> f32 {
    %v = memref.load %a[%i] : memref<16xf32>
    %s = arith.addf %acc, %v : f32
    scf.yield %s : f32
  }
  scf.if %flag {
    linalg.fill ins(%sum : f32) outs(%b : memref<16xf32>)
  }
  return %sum : f32
}

func.func private @kernel(%x: f32) -> f32 {
  return %x : f32
}
