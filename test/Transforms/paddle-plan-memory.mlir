// RUN: paddle-opt %s --paddle-plan-memory --split-input-file --verify-diagnostics | FileCheck %s

// Buffers whose lifetimes do not meet share an offset; buffers live at the
// same op never overlap. %a dies before %b is born; %b and %c meet at the
// copy from %b to %c.
// CHECK-DAG: func.func private @paddle_workspace_acquire(i64) -> memref<?xi8> attributes {llvm.emit_c_interface}
// CHECK-DAG: func.func private @paddle_workspace_release(memref<?xi8>) attributes {llvm.emit_c_interface}
// CHECK-LABEL: func.func @disjoint
// CHECK-SAME: paddle.memory = {buffers = 3 : i64, in_place = 0 : i64, lower_bound = 2048 : i64, naive = 3072 : i64, planned = 2048 : i64, positions = 12 : i64, unplanned = 0 : i64}
// CHECK: %[[BYTES:.*]] = arith.constant 2048 : i64
// One constant per distinct offset, before the acquire call.
// CHECK-DAG: %[[O0:.*]] = arith.constant 0 : index
// CHECK-DAG: %[[O1024:.*]] = arith.constant 1024 : index
// CHECK: %[[WS:.*]] = call @paddle_workspace_acquire(%[[BYTES]]) : (i64) -> memref<?xi8>
// CHECK: %[[A:.*]] = memref.view %[[WS]][%[[O0]]][] {paddle.buffer = {first = 3 : i64, id = 0 : i64, last = 4 : i64, offset = 0 : i64, size = 1024 : i64, writer = "memref.copy at {{.*}}"}} : memref<?xi8> to memref<16x16xf32>
// CHECK: %[[B:.*]] = memref.view %[[WS]][%[[O0]]][] {paddle.buffer = {first = 5 : i64, id = 1 : i64, last = 6 : i64, offset = 0 : i64, size = 1024
// CHECK: %[[C:.*]] = memref.view %[[WS]][%[[O1024]]][] {paddle.buffer = {first = 6 : i64, id = 2 : i64, last = 7 : i64, offset = 1024 : i64, size = 1024
// CHECK-NOT: memref.alloc
// CHECK-NOT: memref.dealloc
// CHECK: memref.copy %[[C]], %{{.*}}
// CHECK-NEXT: call @paddle_workspace_release(%[[WS]]) : (memref<?xi8>) -> ()
// CHECK-NEXT: return
func.func @disjoint(%in: memref<16x16xf32>, %out: memref<16x16xf32>) {
  %a = memref.alloc() {alignment = 64 : i64} : memref<16x16xf32>
  %b = memref.alloc() {alignment = 64 : i64} : memref<16x16xf32>
  %c = memref.alloc() {alignment = 64 : i64} : memref<16x16xf32>
  memref.copy %in, %a : memref<16x16xf32> to memref<16x16xf32>
  memref.copy %a, %out : memref<16x16xf32> to memref<16x16xf32>
  memref.copy %in, %b : memref<16x16xf32> to memref<16x16xf32>
  memref.copy %b, %c : memref<16x16xf32> to memref<16x16xf32>
  memref.copy %c, %out : memref<16x16xf32> to memref<16x16xf32>
  memref.dealloc %a : memref<16x16xf32>
  memref.dealloc %b : memref<16x16xf32>
  memref.dealloc %c : memref<16x16xf32>
  return
}

// -----

// Sizes are rounded up to 64 bytes; the largest buffer is placed first and
// smaller ones fill the gaps next to it.
// CHECK-LABEL: func.func @offsets
// CHECK-SAME: lower_bound = 1152 : i64, naive = 1152 : i64, planned = 1152 : i64
// CHECK: memref.view %{{.*}}[%{{.*}}][] {paddle.buffer = {{{.*}}offset = 1024 : i64, size = 12 : i64{{.*}}}} : memref<?xi8> to memref<3xf32>
// CHECK: memref.view %{{.*}}[%{{.*}}][] {paddle.buffer = {{{.*}}offset = 0 : i64, size = 1024 : i64{{.*}}}} : memref<?xi8> to memref<256xf32>
// CHECK: memref.view %{{.*}}[%{{.*}}][] {paddle.buffer = {{{.*}}offset = 1088 : i64, size = 2 : i64{{.*}}}} : memref<?xi8> to memref<2xi1>
func.func @offsets(%x: memref<3xf32>, %y: memref<256xf32>, %z: memref<2xi1>) {
  %a = memref.alloc() : memref<3xf32>
  %b = memref.alloc() : memref<256xf32>
  %c = memref.alloc() : memref<2xi1>
  memref.copy %x, %a : memref<3xf32> to memref<3xf32>
  memref.copy %y, %b : memref<256xf32> to memref<256xf32>
  memref.copy %z, %c : memref<2xi1> to memref<2xi1>
  memref.copy %a, %x : memref<3xf32> to memref<3xf32>
  memref.copy %b, %y : memref<256xf32> to memref<256xf32>
  memref.copy %c, %z : memref<2xi1> to memref<2xi1>
  memref.dealloc %a : memref<3xf32>
  memref.dealloc %b : memref<256xf32>
  memref.dealloc %c : memref<2xi1>
  return
}

// -----

// In place: linalg.exp reads %a[i] only to write %b[i], and %a dies there,
// so %b takes over %a's memory; then %c does the same with %b (elements of
// another type but the same size).
#id = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func.func @in_place
// CHECK-SAME: in_place = 2 : i64, lower_bound = 1024 : i64, naive = 3072 : i64, planned = 1024 : i64
// CHECK: %[[A:.*]] = memref.view %{{.*}}[%{{.*}}][] {paddle.buffer = {{{.*}}id = 0 : i64{{.*}}offset = 0 : i64
// CHECK: %[[B:.*]] = memref.view %{{.*}}[%{{.*}}][] {paddle.buffer = {{{.*}}id = 1 : i64, in_place_of = 0 : i64{{.*}}offset = 0 : i64{{.*}}writer = "linalg.exp
// CHECK: %[[C:.*]] = memref.view %{{.*}}[%{{.*}}][] {paddle.buffer = {{{.*}}id = 2 : i64, in_place_of = 1 : i64{{.*}}offset = 0 : i64{{.*}}writer = "linalg.generic
// CHECK: linalg.exp ins(%[[A]] : memref<16x16xf32>) outs(%[[B]] : memref<16x16xf32>)
// CHECK: linalg.generic {{.*}} ins(%[[B]] : memref<16x16xf32>) outs(%[[C]] : memref<16x16xi32>)
func.func @in_place(%in: memref<16x16xf32>, %out: memref<16x16xi32>) {
  %a = memref.alloc() : memref<16x16xf32>
  %b = memref.alloc() : memref<16x16xf32>
  %c = memref.alloc() : memref<16x16xi32>
  memref.copy %in, %a : memref<16x16xf32> to memref<16x16xf32>
  linalg.exp ins(%a : memref<16x16xf32>) outs(%b : memref<16x16xf32>)
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%b : memref<16x16xf32>) outs(%c : memref<16x16xi32>) {
  ^bb0(%x: f32, %o: i32):
    %y = arith.fptosi %x : f32 to i32
    linalg.yield %y : i32
  }
  memref.copy %c, %out : memref<16x16xi32> to memref<16x16xi32>
  memref.dealloc %a : memref<16x16xf32>
  memref.dealloc %b : memref<16x16xf32>
  memref.dealloc %c : memref<16x16xi32>
  return
}

// -----

// Not in place: %b[i, j] reads %a[j, i], which an earlier iteration may
// already have overwritten.
#id = affine_map<(d0, d1) -> (d0, d1)>
#t = affine_map<(d0, d1) -> (d1, d0)>
// CHECK-LABEL: func.func @transposed_not_in_place
// CHECK-SAME: in_place = 0 : i64, lower_bound = 2048 : i64, naive = 2048 : i64, planned = 2048 : i64
// CHECK-DAG: offset = 0 : i64
// CHECK-DAG: offset = 1024 : i64
func.func @transposed_not_in_place(%in: memref<16x16xf32>, %out: memref<16x16xf32>) {
  %a = memref.alloc() : memref<16x16xf32>
  %b = memref.alloc() : memref<16x16xf32>
  memref.copy %in, %a : memref<16x16xf32> to memref<16x16xf32>
  linalg.generic {indexing_maps = [#t, #id], iterator_types = ["parallel", "parallel"]}
      ins(%a : memref<16x16xf32>) outs(%b : memref<16x16xf32>) {
  ^bb0(%x: f32, %o: f32):
    linalg.yield %x : f32
  }
  memref.copy %b, %out : memref<16x16xf32> to memref<16x16xf32>
  memref.dealloc %a : memref<16x16xf32>
  memref.dealloc %b : memref<16x16xf32>
  return
}

// -----

// Not in place: %a is still read after the op that writes %b; and a
// reduction reads many elements of %c for each of %d.
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
// CHECK-LABEL: func.func @still_live_not_in_place
// CHECK-SAME: in_place = 0 : i64, lower_bound = 2048 : i64, naive = 2112 : i64, planned = 2048 : i64
// CHECK: offset = 0 : i64, size = 1024
// CHECK: offset = 1024 : i64, size = 1024
func.func @still_live_not_in_place(%in: memref<16x16xf32>, %out: memref<16x16xf32>, %sum: memref<16xf32>) {
  %a = memref.alloc() : memref<16x16xf32>
  %b = memref.alloc() : memref<16x16xf32>
  %d = memref.alloc() : memref<16xf32>
  memref.copy %in, %a : memref<16x16xf32> to memref<16x16xf32>
  linalg.exp ins(%a : memref<16x16xf32>) outs(%b : memref<16x16xf32>)
  memref.copy %a, %out : memref<16x16xf32> to memref<16x16xf32>
  linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%b : memref<16x16xf32>) outs(%d : memref<16xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %s = arith.addf %x, %acc : f32
    linalg.yield %s : f32
  }
  memref.copy %d, %sum : memref<16xf32> to memref<16xf32>
  memref.dealloc %a : memref<16x16xf32>
  memref.dealloc %b : memref<16x16xf32>
  memref.dealloc %d : memref<16xf32>
  return
}

// -----

// Buffers that leave the function, directly or through a view, or whose
// size is only known at run time, stay allocs; so do allocs in nested
// regions. Nothing is planned here, so no workspace is taken.
// CHECK-NOT: paddle_workspace_acquire
// CHECK-LABEL: func.func @unplanned
// CHECK-SAME: paddle.memory = {buffers = 0 : i64, in_place = 0 : i64, lower_bound = 0 : i64, naive = 0 : i64, planned = 0 : i64, positions = 9 : i64, unplanned = 5 : i64}
// CHECK: memref.alloc() {paddle.unplanned = "returned"} : memref<16xf32>
// CHECK: memref.alloc() {paddle.unplanned = "passed to a call: func.call at {{.*}}"} : memref<4x4xf32>
// CHECK: memref.alloc(%{{.*}}) {paddle.unplanned = "dynamic shape"} : memref<?xf32>
// CHECK: memref.alloc() {paddle.unplanned = "passed on by a terminator: scf.yield at {{.*}}"} : memref<16xf32>
// CHECK: memref.alloc() {paddle.unplanned = "not in the function's entry block"} : memref<8xf32>
func.func private @consume(memref<16xf32>)
func.func @unplanned(%n: index, %flag: i1) -> (memref<16xf32>, memref<16xf32>) {
  %r = memref.alloc() : memref<16xf32>
  %s = memref.alloc() : memref<4x4xf32>
  %v = memref.collapse_shape %s [[0, 1]] : memref<4x4xf32> into memref<16xf32>
  func.call @consume(%v) : (memref<16xf32>) -> ()
  %d = memref.alloc(%n) : memref<?xf32>
  memref.dealloc %d : memref<?xf32>
  %y = memref.alloc() : memref<16xf32>
  %z = scf.if %flag -> memref<16xf32> {
    %inner = memref.alloc() : memref<8xf32>
    memref.dealloc %inner : memref<8xf32>
    scf.yield %y : memref<16xf32>
  } else {
    scf.yield %y : memref<16xf32>
  }
  return %r, %z : memref<16xf32>, memref<16xf32>
}

// -----

// A use inside a loop counts at the loop: %a and %b, both used in the same
// loop, are live together there. Views count as uses of their source.
// CHECK-LABEL: func.func @nested_regions
// CHECK-SAME: lower_bound = 2048 : i64, naive = 2048 : i64, planned = 2048 : i64
// CHECK: memref.view {{.*}}first = 4 : i64, id = 0 : i64, last = 6 : i64, offset = 0 : i64
// CHECK: memref.view {{.*}}first = 6 : i64, id = 1 : i64, last = 7 : i64, offset = 1024 : i64
// CHECK: %[[SUB:.*]] = memref.subview
// CHECK: scf.for
// CHECK: memref.copy %[[SUB]]
func.func @nested_regions(%in: memref<16x16xf32>, %out: memref<16x16xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %a = memref.alloc() : memref<16x16xf32>
  %b = memref.alloc() : memref<16x16xf32>
  memref.copy %in, %a : memref<16x16xf32> to memref<16x16xf32>
  %sub = memref.subview %a[0, 0] [16, 16] [1, 1] : memref<16x16xf32> to memref<16x16xf32, strided<[16, 1]>>
  scf.for %i = %c0 to %n step %c1 {
    memref.copy %sub, %b : memref<16x16xf32, strided<[16, 1]>> to memref<16x16xf32>
  }
  memref.copy %b, %out : memref<16x16xf32> to memref<16x16xf32>
  memref.dealloc %a : memref<16x16xf32>
  memref.dealloc %b : memref<16x16xf32>
  return
}

// -----

// Calls to other functions are fine as long as no planned buffer is passed;
// the workspace is given back before every return.
// CHECK-LABEL: func.func @calls_and_returns
// CHECK: %[[WS:.*]] = call @paddle_workspace_acquire
// CHECK: call @callee(%{{.*}}) : (memref<16xf32>) -> ()
// CHECK: cf.cond_br
// CHECK: call @paddle_workspace_release(%[[WS]])
// CHECK-NEXT: return
// CHECK: call @paddle_workspace_release(%[[WS]])
// CHECK-NEXT: return
func.func private @callee(memref<16xf32>)
func.func @calls_and_returns(%x: memref<16xf32>, %flag: i1) {
  %a = memref.alloc() : memref<16xf32>
  memref.copy %x, %a : memref<16xf32> to memref<16xf32>
  func.call @callee(%x) : (memref<16xf32>) -> ()
  memref.copy %a, %x : memref<16xf32> to memref<16xf32>
  memref.dealloc %a : memref<16xf32>
  cf.cond_br %flag, ^bb1, ^bb2
^bb1:
  return
^bb2:
  return
}

// -----

// The runtime's names are reserved.
// expected-error @+1 {{'paddle_workspace_acquire' is reserved for the runtime: expected an external declaration of type '(i64) -> memref<?xi8>'}}
func.func @paddle_workspace_acquire(%n: i64) -> memref<?xi8> {
  %m = memref.alloc() : memref<64xi8>
  %c = memref.cast %m : memref<64xi8> to memref<?xi8>
  return %c : memref<?xi8>
}
func.func @user(%x: memref<16xf32>) {
  %a = memref.alloc() : memref<16xf32>
  memref.copy %x, %a : memref<16xf32> to memref<16xf32>
  memref.dealloc %a : memref<16xf32>
  return
}

// -----

// The lowered deallocation only compares addresses: that is no use, so %a
// is still planned and dead by the time %b is born.
// CHECK-LABEL: func.func @address_compare
// CHECK-SAME: lower_bound = 64 : i64, naive = 128 : i64, planned = 64 : i64
// CHECK: memref.extract_aligned_pointer_as_index
func.func @address_compare(%x: memref<16xf32>) -> index {
  %a = memref.alloc() : memref<16xf32>
  %b = memref.alloc() : memref<16xf32>
  memref.copy %x, %a : memref<16xf32> to memref<16xf32>
  memref.copy %x, %b : memref<16xf32> to memref<16xf32>
  %p = memref.extract_aligned_pointer_as_index %a : memref<16xf32> -> index
  memref.dealloc %a : memref<16xf32>
  memref.dealloc %b : memref<16xf32>
  return %p : index
}

// -----

// A conv input's zero padding (paddle.zero_pad) keeps its source live up to
// the conv that reads the padded copy, so the conv's output is not placed
// over the source and paddle-use-onednn can fold the copy into the call
// (the conv then reads the source). Without the marker %src would die at
// the padding and %o would take its offset.
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// CHECK-LABEL: func.func @pad_source_lives_to_conv
// CHECK: memref.view %{{.*}}[%{{.*}}][] {paddle.buffer = {first = 2 : i64, id = 0 : i64, last = 7 : i64, offset = 1600 : i64, size = 1024
// CHECK: memref.view %{{.*}}[%{{.*}}][] {paddle.buffer = {first = 4 : i64, id = 1 : i64, last = 7 : i64, offset = 0 : i64, size = 1600
// CHECK: memref.view %{{.*}}[%{{.*}}][] {paddle.buffer = {first = 6 : i64, id = 2 : i64, last = 8 : i64, offset = 2624 : i64, size = 1024
func.func @pad_source_lives_to_conv(%x: memref<1x4x8x8xf32>, %f: memref<4x4x3x3xf32>, %r: memref<1x4x8x8xf32>) {
  %zero = arith.constant 0.0 : f32
  %src = memref.alloc() : memref<1x4x8x8xf32>
  memref.copy %x, %src : memref<1x4x8x8xf32> to memref<1x4x8x8xf32>
  %p = memref.alloc() : memref<1x4x10x10xf32>
  linalg.generic {indexing_maps = [#id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      outs(%p : memref<1x4x10x10xf32>) attrs = {paddle.zero_pad = array<i64: 1, 1, 1, 1>} {
  ^bb0(%o: f32):
    %n = linalg.index 0 : index
    %c = linalg.index 1 : index
    %h = linalg.index 2 : index
    %w = linalg.index 3 : index
    %v = memref.load %src[%n, %c, %h, %w] : memref<1x4x8x8xf32>
    linalg.yield %v : f32
  }
  %o = memref.alloc() : memref<1x4x8x8xf32>
  linalg.fill ins(%zero : f32) outs(%o : memref<1x4x8x8xf32>)
  linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
    ins(%p, %f : memref<1x4x10x10xf32>, memref<4x4x3x3xf32>) outs(%o : memref<1x4x8x8xf32>)
  memref.copy %o, %r : memref<1x4x8x8xf32> to memref<1x4x8x8xf32>
  memref.dealloc %src : memref<1x4x8x8xf32>
  memref.dealloc %p : memref<1x4x10x10xf32>
  memref.dealloc %o : memref<1x4x8x8xf32>
  return
}

// -----

// The same for a max pooling's -inf padding (paddle.max_pool_pad): %src
// lives up to the pooling, so its output %o does not take %src's offset.
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// CHECK-LABEL: func.func @max_pool_pad_source_lives_to_pool
// CHECK: memref.view %{{.*}}[%{{.*}}][] {paddle.buffer = {first = 2 : i64, id = 0 : i64, last = 8 : i64, offset = 1600 : i64, size = 1024
// CHECK: memref.view %{{.*}}[%{{.*}}][] {paddle.buffer = {first = 4 : i64, id = 1 : i64, last = 8 : i64, offset = 0 : i64, size = 1600
// CHECK: memref.view %{{.*}}[%{{.*}}][] {paddle.buffer = {first = 6 : i64, id = 2 : i64, last = 9 : i64, offset = 2624 : i64, size = 256
func.func @max_pool_pad_source_lives_to_pool(%x: memref<1x4x8x8xf32>, %r: memref<1x4x4x4xf32>) {
  %ninf = arith.constant 0xFF800000 : f32
  %src = memref.alloc() : memref<1x4x8x8xf32>
  memref.copy %x, %src : memref<1x4x8x8xf32> to memref<1x4x8x8xf32>
  %p = memref.alloc() : memref<1x4x10x10xf32>
  linalg.generic {indexing_maps = [#id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      outs(%p : memref<1x4x10x10xf32>) attrs = {paddle.max_pool_pad = array<i64: 1, 1, 1, 1>} {
  ^bb0(%o: f32):
    %n = linalg.index 0 : index
    %c = linalg.index 1 : index
    %h = linalg.index 2 : index
    %w = linalg.index 3 : index
    %v = memref.load %src[%n, %c, %h, %w] : memref<1x4x8x8xf32>
    linalg.yield %v : f32
  }
  %o = memref.alloc() : memref<1x4x4x4xf32>
  linalg.fill ins(%ninf : f32) outs(%o : memref<1x4x4x4xf32>)
  %window = memref.alloca() : memref<3x3xf32>
  linalg.pooling_nchw_max {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
    ins(%p, %window : memref<1x4x10x10xf32>, memref<3x3xf32>) outs(%o : memref<1x4x4x4xf32>)
  memref.copy %o, %r : memref<1x4x4x4xf32> to memref<1x4x4x4xf32>
  memref.dealloc %src : memref<1x4x8x8xf32>
  memref.dealloc %p : memref<1x4x10x10xf32>
  memref.dealloc %o : memref<1x4x4x4xf32>
  return
}

// -----

// A parallel loop's small per-iteration temporaries (a fused group's row
// statistics) go on the stack: 32 iterations of 2 x 64 bytes fit in 64 KiB.
// A loop of dynamic trip count, one whose iterations would take more, and
// one inside another loop (whose iterations would each take the bound
// again before the stack is freed) keep their heap temporaries.
// CHECK-LABEL: func.func @loop_temporaries
// CHECK: scf.parallel
// CHECK: memref.alloca() {alignment = 64 : i64} : memref<4xf32>
// CHECK: memref.alloca() {alignment = 64 : i64} : memref<4xf32>
// CHECK-NOT: memref.dealloc
// CHECK: scf.parallel
// CHECK: memref.alloc() {alignment = 64 : i64{{.*}}} : memref<4xf32>
// CHECK: memref.dealloc
// CHECK: scf.parallel
// CHECK: memref.alloc() {alignment = 64 : i64{{.*}}} : memref<1024xf32>
// CHECK: memref.dealloc
// CHECK: scf.for
// CHECK: scf.parallel
// CHECK: memref.alloc() {alignment = 64 : i64{{.*}}} : memref<4xf32>
// CHECK: memref.dealloc
func.func @loop_temporaries(%x: memref<128xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c4 = arith.constant 4 : index
  %c128 = arith.constant 128 : index
  %zero = arith.constant 0.0 : f32
  scf.parallel (%i) = (%c0) to (%c128) step (%c4) {
    %a = memref.alloc() {alignment = 64 : i64} : memref<4xf32>
    %b = memref.alloc() {alignment = 64 : i64} : memref<4xf32>
    linalg.fill ins(%zero : f32) outs(%a : memref<4xf32>)
    memref.copy %a, %b : memref<4xf32> to memref<4xf32>
    memref.dealloc %a : memref<4xf32>
    memref.dealloc %b : memref<4xf32>
    scf.reduce
  }
  scf.parallel (%i) = (%c0) to (%n) step (%c4) {
    %a = memref.alloc() {alignment = 64 : i64} : memref<4xf32>
    linalg.fill ins(%zero : f32) outs(%a : memref<4xf32>)
    memref.dealloc %a : memref<4xf32>
    scf.reduce
  }
  scf.parallel (%i) = (%c0) to (%c128) step (%c4) {
    %a = memref.alloc() {alignment = 64 : i64} : memref<1024xf32>
    linalg.fill ins(%zero : f32) outs(%a : memref<1024xf32>)
    memref.dealloc %a : memref<1024xf32>
    scf.reduce
  }
  scf.for %j = %c0 to %n step %c4 {
    scf.parallel (%i) = (%c0) to (%c128) step (%c4) {
      %a = memref.alloc() {alignment = 64 : i64} : memref<4xf32>
      linalg.fill ins(%zero : f32) outs(%a : memref<4xf32>)
      memref.dealloc %a : memref<4xf32>
      scf.reduce
    }
  }
  return
}

// -----

// Buffers above 1 TiB stay allocs: the allocator reports running out of
// memory for them, where two 2^62-byte buffers at planned offsets would
// wrap the workspace size around 2^63.
// CHECK-LABEL: func.func @too_large
// CHECK-SAME: buffers = 1 : i64
// CHECK-SAME: planned = 1024 : i64
// CHECK-SAME: unplanned = 2 : i64
// CHECK: memref.alloc() {paddle.unplanned = "larger than 1 TiB"} : memref<4611686018427387904xi8>
// CHECK: memref.alloc() {paddle.unplanned = "larger than 1 TiB"} : memref<4611686018427387904xi8>
func.func @too_large() {
  %i = arith.constant 1 : i8
  %f = arith.constant 1.0 : f32
  %a = memref.alloc() : memref<4611686018427387904xi8>
  %b = memref.alloc() : memref<4611686018427387904xi8>
  %c = memref.alloc() : memref<256xf32>
  linalg.fill ins(%i : i8) outs(%a : memref<4611686018427387904xi8>)
  linalg.fill ins(%i : i8) outs(%b : memref<4611686018427387904xi8>)
  linalg.fill ins(%f : f32) outs(%c : memref<256xf32>)
  memref.dealloc %a : memref<4611686018427387904xi8>
  memref.dealloc %b : memref<4611686018427387904xi8>
  memref.dealloc %c : memref<256xf32>
  return
}
