// RUN: paddle-opt %s --paddle-flatten-constant-globals --split-input-file --allow-unregistered-dialect | FileCheck %s

// A rank-4 f32 weight becomes one i8 array with the same bytes, in the same
// order (little-endian f32: 1.0 = 0x3F800000, 2.0 = 0x40000000, ...); each
// get_global becomes a view with the original type. The alignment stays.
// CHECK: memref.global "private" constant @w : memref<16xi8> = dense<[0, 0, -128, 63, 0, 0, 0, 64, 0, 0, 64, 64, 0, 0, -128, 64]> {alignment = 64 : i64}
// CHECK-LABEL: func @rank4
// CHECK: %[[ZERO:.*]] = arith.constant 0 : index
// CHECK-NEXT: %[[BYTES:.*]] = memref.get_global @w : memref<16xi8>
// CHECK-NEXT: %[[W:.*]] = memref.view %[[BYTES]][%[[ZERO]]][] : memref<16xi8> to memref<1x2x1x2xf32>
// CHECK: %[[V:.*]] = memref.load %[[W]]
// CHECK: return %[[V]]
memref.global "private" constant @w : memref<1x2x1x2xf32> = dense<[[[[1.0, 2.0]], [[3.0, 4.0]]]]> {alignment = 64 : i64}
func.func @rank4(%i: index) -> f32 {
  %w = memref.get_global @w : memref<1x2x1x2xf32>
  %v = memref.load %w[%i, %i, %i, %i] : memref<1x2x1x2xf32>
  return %v : f32
}

// -----

// Rank 1 too (the code generator writes i8 arrays as one block); without an
// alignment attribute the global gets 16. Every get_global is rewritten.
// CHECK: memref.global "private" constant @v : memref<6xi8> = dense<[1, 0, 2, 0, 3, 0]> {alignment = 16 : i64}
// CHECK-LABEL: func @rank1_twice
// CHECK-COUNT-2: memref.view %{{.*}}[%{{.*}}][] : memref<6xi8> to memref<3xi16>
// CHECK-NOT: memref.get_global @v : memref<3xi16>
memref.global "private" constant @v : memref<3xi16> = dense<[1, 2, 3]>
func.func @rank1_twice() -> (memref<3xi16>, memref<3xi16>) {
  %a = memref.get_global @v : memref<3xi16>
  %b = memref.get_global @v : memref<3xi16>
  return %a, %b : memref<3xi16>, memref<3xi16>
}

// -----

// Left as they are: splats, mutable and public globals, i1 (bit-packed in
// the attribute), globals without a dense value, and globals
// used by something other than memref.get_global.
// CHECK: memref.global "private" constant @splat : memref<4x4xf32> = dense<1.000000e+00>
// CHECK: memref.global "private" @mutable : memref<2x2xf32> = dense<
// CHECK: memref.global constant @public : memref<2x2xf32> = dense<
// CHECK: memref.global "private" constant @bits : memref<2x2xi1> = dense<
// CHECK: memref.global "private" @uninit : memref<2x2xf32> = uninitialized
// CHECK: memref.global "private" constant @other : memref<2x2xf32> = dense<
// CHECK-NOT: memref.view
memref.global "private" constant @splat : memref<4x4xf32> = dense<1.0>
memref.global "private" @mutable : memref<2x2xf32> = dense<[[1.0, 2.0], [3.0, 4.0]]>
memref.global constant @public : memref<2x2xf32> = dense<[[1.0, 2.0], [3.0, 4.0]]>
memref.global "private" constant @bits : memref<2x2xi1> = dense<[[true, false], [false, true]]>
memref.global "private" @uninit : memref<2x2xf32> = uninitialized
memref.global "private" constant @other : memref<2x2xf32> = dense<[[1.0, 2.0], [3.0, 4.0]]>
func.func @kept() {
  %0 = memref.get_global @splat : memref<4x4xf32>
  %1 = memref.get_global @mutable : memref<2x2xf32>
  %2 = memref.get_global @public : memref<2x2xf32>
  %3 = memref.get_global @bits : memref<2x2xi1>
  %4 = memref.get_global @uninit : memref<2x2xf32>
  %5 = memref.get_global @other : memref<2x2xf32>
  "test.use_symbol"() {ref = @other} : () -> ()
  return
}
