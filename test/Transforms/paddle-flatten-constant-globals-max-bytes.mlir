// RUN: paddle-opt %s --paddle-flatten-constant-globals="max-bytes=8" | FileCheck %s

// With max-bytes, globals up to that size are flattened and larger ones keep
// their type (the JIT moves those out of the module before translation).
// CHECK-DAG: memref.global "private" constant @small : memref<8xi8>
// CHECK-DAG: memref.global "private" constant @large : memref<3xf32> = dense<[1.000000e+00, 2.000000e+00, 3.000000e+00]>
// CHECK-LABEL: func @both
// CHECK: memref.view %{{.*}}[%{{.*}}][] : memref<8xi8> to memref<2xf32>
// CHECK: memref.get_global @large : memref<3xf32>
memref.global "private" constant @small : memref<2xf32> = dense<[1.0, 2.0]>
memref.global "private" constant @large : memref<3xf32> = dense<[1.0, 2.0, 3.0]>
func.func @both() -> (memref<2xf32>, memref<3xf32>) {
  %s = memref.get_global @small : memref<2xf32>
  %l = memref.get_global @large : memref<3xf32>
  return %s, %l : memref<2xf32>, memref<3xf32>
}
