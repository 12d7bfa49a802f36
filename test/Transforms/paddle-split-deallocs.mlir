// RUN: paddle-opt %s --split-input-file --paddle-split-deallocs | FileCheck %s
// What upstream's simplification makes of it is what it makes alone:
// RUN: paddle-opt %s --split-input-file --paddle-split-deallocs --buffer-deallocation-simplification > %t.split
// RUN: paddle-opt %s --split-input-file --buffer-deallocation-simplification > %t.upstream
// RUN: diff %t.split %t.upstream
// RUN: FileCheck %s --check-prefix=SIMPLIFIED < %t.split

// Distinct allocations never alias: each gets a dealloc of its own with the
// op's retained memrefs, and the retained memref's ownership is the `or` of
// what the new ops return (what upstream's split pattern builds).
// CHECK-LABEL: func.func @fresh
// CHECK-SAME: (%[[C:.*]]: i1, %[[D:.*]]: i1, %[[E:.*]]: i1
// CHECK: %[[A:.*]] = memref.alloc()
// CHECK: %[[B:.*]] = memref.alloc()
// CHECK: %[[X:.*]] = memref.alloc()
// CHECK: %[[RA:.*]] = bufferization.dealloc (%[[A]] : memref<4xf32>) if (%[[C]]) retain (%[[X]] : memref<4xf32>)
// CHECK: %[[RB:.*]] = bufferization.dealloc (%[[B]] : memref<4xf32>) if (%[[D]]) retain (%[[X]] : memref<4xf32>)
// CHECK: %[[RX:.*]] = bufferization.dealloc (%[[X]] : memref<4xf32>) if (%[[E]]) retain (%[[X]] : memref<4xf32>)
// CHECK: %[[REST:.*]] = bufferization.dealloc retain (%[[X]] : memref<4xf32>)
// CHECK: %[[O1:.*]] = arith.ori %[[REST]], %[[RA]] : i1
// CHECK: %[[O2:.*]] = arith.ori %[[O1]], %[[RB]] : i1
// CHECK: %[[O3:.*]] = arith.ori %[[O2]], %[[RX]] : i1
// CHECK: return %[[O3]], %[[X]]
// After upstream's simplification, each allocation but the retained one is
// freed on its own.
// SIMPLIFIED-LABEL: func.func @fresh
// SIMPLIFIED-SAME: (%[[C:.*]]: i1, %[[D:.*]]: i1, %[[E:.*]]: i1
// SIMPLIFIED: %[[A:.*]] = memref.alloc()
// SIMPLIFIED: %[[B:.*]] = memref.alloc()
// SIMPLIFIED: bufferization.dealloc (%[[A]] : memref<4xf32>) if (%[[C]])
// SIMPLIFIED-NEXT: bufferization.dealloc (%[[B]] : memref<4xf32>) if (%[[D]])
// SIMPLIFIED-NEXT: return %[[E]]
func.func @fresh(%c: i1, %d: i1, %e: i1, %f: f32) -> (i1, memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %a = memref.alloc() : memref<4xf32>
  %b = memref.alloc() : memref<4xf32>
  %x = memref.alloc() : memref<4xf32>
  memref.store %f, %a[%c0] : memref<4xf32>
  memref.store %f, %b[%c0] : memref<4xf32>
  %r = bufferization.dealloc (%a, %b, %x : memref<4xf32>, memref<4xf32>, memref<4xf32>) if (%c, %d, %e) retain (%x : memref<4xf32>)
  return %r, %x : i1, memref<4xf32>
}

// -----

// The other memrefs are asked about: a view of %a keeps %a with it, a
// memref listed twice stays, and an allocation aliasing neither (%c)
// splits off.
// CHECK-LABEL: func.func @views
// CHECK: %[[A:.*]] = memref.alloc() : memref<8xf32>
// CHECK: %[[B:.*]] = memref.alloca() : memref<4xf32>
// CHECK: %[[C:.*]] = memref.alloc() : memref<2xf32>
// CHECK: memref.store
// CHECK: memref.store
// CHECK: %[[V:.*]] = memref.subview %[[A]]
// CHECK: bufferization.dealloc (%[[C]] : memref<2xf32>) if (%{{.*}})
// CHECK-NEXT: bufferization.dealloc (%[[A]], %[[B]], %[[V]], %[[B]] : {{.*}}) if (
// CHECK-NEXT: return
func.func @views(%f0: i1, %f1: i1, %f2: i1, %f3: i1, %f4: i1, %f: f32) {
  %c0 = arith.constant 0 : index
  %a = memref.alloc() : memref<8xf32>
  %b = memref.alloca() : memref<4xf32>
  %c = memref.alloc() : memref<2xf32>
  memref.store %f, %b[%c0] : memref<4xf32>
  memref.store %f, %c[%c0] : memref<2xf32>
  %v = memref.subview %a[0] [4] [1] : memref<8xf32> to memref<4xf32, strided<[1]>>
  bufferization.dealloc (%a, %b, %c, %v, %b : memref<8xf32>, memref<4xf32>, memref<2xf32>, memref<4xf32, strided<[1]>>, memref<4xf32>) if (%f0, %f1, %f2, %f3, %f4)
  return
}
