// RUN: paddle-opt %s --split-input-file --paddle-async-parallel-for="num-workers=1" | FileCheck %s

// Upstream's lowering rounds the block size of a loop with static inner dims
// up to a multiple of the inner iterations (64 here), but takes the block
// count from the unrounded size: with one worker it aims for 8 blocks of
// 768 / 8 = 96 iterations, rounds them to 128 and launches 8, the last two
// starting past the end and wrapping around to rows 0-3 (an accumulating
// body like this one then adds twice). paddle-async-parallel-for hands it a
// minimum that is already rounded: 6 blocks of 128.
// CHECK-LABEL: func.func @accumulate_rows
// CHECK: async.create_group %c5
// CHECK: call @async_dispatch_fn{{(_[0-9]+)?}}(%{{.*}}, %c0, %c6, %c128, %c12, %c64,
func.func @accumulate_rows(%out: memref<12x64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c12 = arith.constant 12 : index
  %c64 = arith.constant 64 : index
  %one = arith.constant 1.0 : f32
  scf.parallel (%i, %j) = (%c0, %c0) to (%c12, %c64) step (%c1, %c1) {
    %v = memref.load %out[%i, %j] : memref<12x64xf32>
    %s = arith.addf %v, %one : f32
    memref.store %s, %out[%i, %j] : memref<12x64xf32>
    scf.reduce
  } {paddle.min_task_size = 32 : i64}
  return
}

// A 1-D loop has nothing to round: blocks of max(1000 / 8, 100) = 125.
// CHECK-LABEL: func.func @one_dim
// CHECK: call @async_dispatch_fn{{(_[0-9]+)?}}(%{{.*}}, %c0, %c8, %c125, %c1000,
func.func @one_dim(%out: memref<1000xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c1000 = arith.constant 1000 : index
  %one = arith.constant 1.0 : f32
  scf.parallel (%i) = (%c0) to (%c1000) step (%c1) {
    %v = memref.load %out[%i] : memref<1000xf32>
    %s = arith.addf %v, %one : f32
    memref.store %s, %out[%i] : memref<1000xf32>
    scf.reduce
  } {paddle.min_task_size = 100 : i64}
  return
}

// Inner dims of more than 512 iterations are not rounded to: 4 x 600
// iterations make 8 blocks of 300.
// CHECK-LABEL: func.func @wide_rows
// CHECK: call @async_dispatch_fn{{(_[0-9]+)?}}(%{{.*}}, %c0, %c8, %c300, %c4, %c600,
func.func @wide_rows(%out: memref<4x600xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c600 = arith.constant 600 : index
  %one = arith.constant 1.0 : f32
  scf.parallel (%i, %j) = (%c0, %c0) to (%c4, %c600) step (%c1, %c1) {
    %v = memref.load %out[%i, %j] : memref<4x600xf32>
    %s = arith.addf %v, %one : f32
    memref.store %s, %out[%i, %j] : memref<4x600xf32>
    scf.reduce
  } {paddle.min_task_size = 100 : i64}
  return
}

// A loop inside another one's body (a fused group's tile: its ops' loops)
// runs sequentially inside the outer loop's blocks: only the outer loop is
// dispatched, and the inner one becomes scf.for loops.
// CHECK-LABEL: func.func @nested
// CHECK-COUNT-1: async.create_group
// CHECK-NOT: async.create_group
// CHECK-LABEL: func.func private @parallel_compute_fn(
// CHECK-NOT: async.
// CHECK: memref.store
// CHECK-NEXT: }
func.func @nested(%out: memref<64x32xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c32 = arith.constant 32 : index
  %c64 = arith.constant 64 : index
  %one = arith.constant 1.0 : f32
  scf.parallel (%t) = (%c0) to (%c64) step (%c4) {
    scf.parallel (%i, %j) = (%c0, %c0) to (%c4, %c32) step (%c1, %c1) {
      %r = arith.addi %t, %i : index
      memref.store %one, %out[%r, %j] : memref<64x32xf32>
      scf.reduce
    }
    scf.reduce
  } {paddle.min_task_size = 1 : i64}
  return
}

// -----

// A function of several loops: each moves into a function of its own (a
// call in its place) before upstream's lowering, so the caller stays one
// call per loop. The functions outlined get names no other symbol has
// (@parallel_compute_fn and @parallel_for_fn are taken), and every call
// and the dispatch functions' recursion refer to the function made for
// the same loop.
// CHECK-LABEL: func.func @two_loops
// CHECK-NEXT: call @[[FILL:parallel_for_fn_[0-9]+]](%arg0)
// CHECK-NEXT: call @[[COPY:parallel_for_fn_[0-9]+]](%arg0, %arg1)
// CHECK-NEXT: return
// CHECK: func.func private @parallel_compute_fn(%{{.*}}: index)
// CHECK: func.func private @parallel_for_fn()
// CHECK: func.func private @[[FILL]](
// CHECK: func.call @[[FILL_COMPUTE:parallel_compute_fn_[0-9]+]](%c0, %c125,
// CHECK: func.call @[[FILL_DISPATCH:async_dispatch_fn[_0-9]*]](%{{.*}}, %c0, %c8, %c125,
// CHECK: func.func private @[[FILL_COMPUTE]](
// CHECK: memref.store %cst
// CHECK: func.func private @[[FILL_DISPATCH]](
// CHECK: async.execute
// CHECK: func.call @[[FILL_DISPATCH]](
// CHECK: call @[[FILL_COMPUTE]](
// CHECK: func.func private @[[COPY]](
// CHECK: func.call @[[COPY_COMPUTE:parallel_compute_fn_[0-9]+]](%c0, %c250,
// CHECK: func.call @[[COPY_DISPATCH:async_dispatch_fn[_0-9]*]](%{{.*}}, %c0, %c4, %c250,
// CHECK: func.func private @[[COPY_COMPUTE]](
// CHECK: memref.load
// CHECK: func.func private @[[COPY_DISPATCH]](
// CHECK: async.execute
// CHECK: func.call @[[COPY_DISPATCH]](
// CHECK: call @[[COPY_COMPUTE]](
func.func @two_loops(%a: memref<1000xf32>, %b: memref<1000xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c1000 = arith.constant 1000 : index
  %one = arith.constant 1.0 : f32
  scf.parallel (%i) = (%c0) to (%c1000) step (%c1) {
    memref.store %one, %a[%i] : memref<1000xf32>
    scf.reduce
  } {paddle.min_task_size = 100 : i64}
  scf.parallel (%i) = (%c0) to (%c1000) step (%c1) {
    %v = memref.load %a[%i] : memref<1000xf32>
    memref.store %v, %b[%i] : memref<1000xf32>
    scf.reduce
  } {paddle.min_task_size = 250 : i64}
  return
}

func.func private @parallel_compute_fn(%x: index) {
  return
}

func.func private @parallel_for_fn() {
  return
}
