// RUN: paddle-opt %s --split-input-file --pass-pipeline='builtin.module(paddle-set-target{vector-bits=512},func.func(paddle-tile-and-vectorize))' | FileCheck %s --check-prefixes=CHECK,AVX512
// RUN: paddle-opt %s --split-input-file --pass-pipeline='builtin.module(paddle-set-target{vector-bits=256},func.func(paddle-tile-and-vectorize))' | FileCheck %s --check-prefixes=CHECK,AVX2

// A static f32 matmul: output blocks over an scf.parallel that may be split
// at every iteration, K panels, register tiles (8x32 for 512-bit registers,
// 4x16 for 256-bit ones) whose accumulator rows are loaded once, carried by
// the k loop and stored once, and one FMA per accumulator row per k.
// CHECK-LABEL: func.func @matmul(
// CHECK-SAME: %[[A:[a-zA-Z0-9]+]]: memref<64x512xf32>
// CHECK-NOT: linalg.matmul
// CHECK: scf.parallel
// CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} {
// AVX512: %[[ACC0:.*]] = vector.load %{{.*}} : memref<8x32xf32, {{.*}}>, vector<32xf32>
// AVX2: %[[ACC0:.*]] = vector.load %{{.*}} : memref<4x16xf32, {{.*}}>, vector<16xf32>
// AVX512: %[[R:.*]] = scf.for %{{.*}} iter_args(%[[ACC:.*]] = %{{.*}}) -> (vector<8x32xf32>)
// AVX2: %[[R:.*]] = scf.for %{{.*}} iter_args(%[[ACC:.*]] = %{{.*}}) -> (vector<4x16xf32>)
// CHECK-NOT: vector.store
// AVX512: %[[B:.*]] = vector.load %{{.*}} : memref<1x32xf32, {{.*}}>, vector<32xf32>
// AVX2: %[[B:.*]] = vector.load %{{.*}} : memref<1x16xf32, {{.*}}>, vector<16xf32>
// CHECK: %[[AB:.*]] = vector.broadcast %{{.*}} : f32 to
// CHECK: %[[ROW:.*]] = vector.extract %[[ACC]][0]
// CHECK: vector.fma %[[AB]], %[[B]], %[[ROW]]
// CHECK: scf.yield
// CHECK: vector.extract %[[R]][0]
// CHECK: vector.store
// CHECK: } {paddle.min_task_size = 1 : i64}
func.func @matmul(%a: memref<64x512xf32>, %b: memref<512x256xf32>, %c: memref<64x256xf32>) {
  linalg.matmul ins(%a, %b : memref<64x512xf32>, memref<512x256xf32>) outs(%c : memref<64x256xf32>)
  return
}

// -----

// N a multiple of 16 but not of 32 (784 = 49 x 16): for 512-bit registers
// the tile is half as wide and twice as tall (16x16: as many accumulators
// as the 8x32 one); 256-bit registers keep their 4x16. The column block is
// the widest multiple of the tile width up to 128 that divides N (112).
// CHECK-LABEL: func.func @matmul_narrow_n(
// CHECK: scf.parallel
// CHECK: memref.subview %{{.*}} [64, 112]
// AVX512: %[[R:.*]] = scf.for %{{.*}} iter_args(%{{.*}} = %{{.*}}) -> (vector<16x16xf32>)
// AVX2: %[[R:.*]] = scf.for %{{.*}} iter_args(%{{.*}} = %{{.*}}) -> (vector<4x16xf32>)
func.func @matmul_narrow_n(%a: memref<256x64xf32>, %b: memref<64x784xf32>, %c: memref<256x784xf32>) {
  linalg.matmul ins(%a, %b : memref<256x64xf32>, memref<64x784xf32>) outs(%c : memref<256x784xf32>)
  return
}

// -----

// batch_matmul: the batch dim is a parallel dim of the block loop; the tile
// is the same contraction with a leading unit dim.
// CHECK-LABEL: func.func @batch_matmul(
// CHECK-NOT: linalg.batch_matmul
// CHECK: scf.parallel
// CHECK: scf.for {{.*}} iter_args
// CHECK: vector.fma
// CHECK: } {paddle.min_task_size = 1 : i64}
func.func @batch_matmul(%a: memref<3x16x8xf32>, %b: memref<3x8x32xf32>, %c: memref<3x16x32xf32>) {
  linalg.batch_matmul ins(%a, %b : memref<3x16x8xf32>, memref<3x8x32xf32>) outs(%c : memref<3x16x32xf32>)
  return
}

// -----

// Elementwise with a broadcast operand: one scf.parallel over 16-wide
// vectors (8-wide for 256-bit registers) of the innermost dim; the math op
// works on the vector.
// CHECK-LABEL: func.func @add_tanh(
// CHECK-NOT: linalg.generic
// AVX512: scf.parallel {{.*}} step (%{{.*}}, %c16)
// AVX2: scf.parallel {{.*}} step (%{{.*}}, %c8)
// AVX512: %[[X:.*]] = vector.load {{.*}} : memref<1x16xf32, {{.*}}>, vector<16xf32>
// AVX512: %[[Y:.*]] = vector.load {{.*}} : memref<16xf32, {{.*}}>, vector<16xf32>
// AVX512: %[[S:.*]] = arith.addf %[[X]], %[[Y]] : vector<16xf32>
// tanh of the vector is upstream's rational approximation (clamped input,
// odd polynomial over even polynomial), not a libm call per lane.
// AVX512-NOT: math.tanh
// AVX512: %[[C:.*]] = arith.select {{.*}} : vector<16xi1>, vector<16xf32>
// AVX512: %[[P:.*]] = arith.divf {{.*}} : vector<16xf32>
// AVX512: %[[T:.*]] = arith.select {{.*}}, %[[P]] : vector<16xi1>, vector<16xf32>
// AVX512: vector.store %[[T]]
// AVX2-NOT: math.tanh
// AVX2: arith.divf {{.*}} : vector<8xf32>
// AVX512: } {paddle.min_task_size = 2048 : i64}
// AVX2: } {paddle.min_task_size = 4096 : i64}
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d1)>
func.func @add_tanh(%x: memref<64x128xf32>, %y: memref<128xf32>, %z: memref<64x128xf32>) {
  linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %y : memref<64x128xf32>, memref<128xf32>) outs(%z : memref<64x128xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.addf %a, %b : f32
    %t = math.tanh %s : f32
    linalg.yield %t : f32
  }
  return
}

// -----

// A multi-output generic (paddle-lower-fusion's multi-output fusion: a
// moment update that is also returned, with the parameter update that
// reads it) is tiled and vectorized like one with one output: each output
// is one vector store per tile.
// CHECK-LABEL: func.func @two_outputs(
// CHECK-NOT: linalg.generic
// AVX512: scf.parallel {{.*}} step (%{{.*}}, %c16)
// AVX512: %[[M:.*]] = arith.addf {{.*}} : vector<16xf32>
// AVX512: %[[P:.*]] = arith.subf {{.*}}, %{{.*}} : vector<16xf32>
// AVX512-DAG: vector.store %[[M]]
// AVX512-DAG: vector.store %[[P]]
// AVX2: scf.parallel {{.*}} step (%{{.*}}, %c8)
#id2 = affine_map<(d0, d1) -> (d0, d1)>
func.func @two_outputs(%p: memref<64x128xf32>, %m: memref<64x128xf32>, %g: memref<64x128xf32>) {
  %b = arith.constant 0.9 : f32
  %lr = arith.constant 0.01 : f32
  linalg.generic {indexing_maps = [#id2, #id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%g : memref<64x128xf32>) outs(%m, %p : memref<64x128xf32>, memref<64x128xf32>) {
  ^bb0(%gi: f32, %mi: f32, %pi: f32):
    %s = arith.mulf %mi, %b : f32
    %n = arith.addf %s, %gi : f32
    %u = arith.mulf %n, %lr : f32
    %q = arith.subf %pi, %u : f32
    linalg.yield %n, %q : f32, f32
  }
  return
}

// -----

// Left for the scalar loops: dynamic shapes, other element types, a
// transposed read, a reduction, and shapes no register tile divides.
// CHECK-LABEL: func.func @dynamic(
// CHECK: linalg.matmul
// CHECK-NOT: vector.
func.func @dynamic(%a: memref<?x?xf32>, %b: memref<?x?xf32>, %c: memref<?x?xf32>) {
  linalg.matmul ins(%a, %b : memref<?x?xf32>, memref<?x?xf32>) outs(%c : memref<?x?xf32>)
  return
}

// CHECK-LABEL: func.func @f16(
// CHECK: linalg.matmul
// CHECK-NOT: vector.
func.func @f16(%a: memref<16x16xf16>, %b: memref<16x32xf16>, %c: memref<16x32xf16>) {
  linalg.matmul ins(%a, %b : memref<16x16xf16>, memref<16x32xf16>) outs(%c : memref<16x32xf16>)
  return
}

// CHECK-LABEL: func.func @odd_n(
// CHECK: linalg.matmul
// CHECK-NOT: vector.
func.func @odd_n(%a: memref<16x16xf32>, %b: memref<16x7xf32>, %c: memref<16x7xf32>) {
  linalg.matmul ins(%a, %b : memref<16x16xf32>, memref<16x7xf32>) outs(%c : memref<16x7xf32>)
  return
}

// CHECK-LABEL: func.func @transpose(
// CHECK: linalg.generic
// CHECK-NOT: vector.
func.func @transpose(%x: memref<32x32xf32>, %z: memref<32x32xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1, d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<32x32xf32>) outs(%z : memref<32x32xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  }
  return
}

// A row sum: rows over an scf.parallel, each row read as chunks of 4
// vectors (4x16 lanes with 512-bit registers: 256 = 4 chunks of 64, one
// step; 4x8 with 256-bit ones: 256 = 8 chunks of 32, two steps of 4 chunks)
// added lanewise into an accumulator carried in registers, and one
// vector.reduction into the row's output.
// CHECK-LABEL: func.func @row_sum(
// CHECK-NOT: linalg.generic
// CHECK: %[[ZERO:.*]] = arith.constant dense<0.000000e+00>
// CHECK: scf.parallel (%[[ROW:.*]]) =
// CHECK: %[[OUT:.*]] = memref.subview %{{.*}}[%[[ROW]]] [1] [1]
// AVX512: memref.expand_shape %{{.*}} {{\[\[}}0], [1, 2]] output_shape [1, 4, 64]
// AVX512-COUNT-4: vector.load {{.*}} vector<64xf32>
// AVX512-COUNT-3: arith.addf {{.*}} : vector<64xf32>
// AVX512: %[[ACC:.*]] = arith.addf {{.*}} : vector<64xf32>
// AVX2: memref.expand_shape %{{.*}} {{\[\[}}0], [1, 2]] output_shape [1, 8, 32]
// AVX2: %[[LOOP:.*]] = scf.for {{.*}} iter_args(%{{.*}} = %[[ZERO]]) -> (vector<1x32xf32>)
// AVX2-COUNT-4: vector.load {{.*}} vector<32xf32>
// AVX2: scf.yield
// AVX2: %[[ACC:.*]] = vector.extract %[[LOOP]][0]
// CHECK: %[[INIT:.*]] = memref.load %[[OUT]]
// CHECK: %[[SUM:.*]] = vector.reduction <add>, %[[ACC]], %[[INIT]]
// CHECK: memref.store %[[SUM]], %[[OUT]]
// CHECK: } {paddle.min_task_size = 128 : i64}
func.func @row_sum(%x: memref<32x256xf32>, %z: memref<32xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<32x256xf32>) outs(%z : memref<32xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %a, %o : f32
    linalg.yield %s : f32
  }
  return
}

// A row max of exp(x - m[row]) (softmax's shape of body): the row statistic
// is broadcast over the lanes, and exp becomes vector arithmetic (the
// max's -inf start folds away).
// CHECK-LABEL: func.func @row_max_exp(
// CHECK-NOT: linalg.generic
// CHECK: scf.parallel
// CHECK: vector.broadcast
// CHECK: arith.subf {{.*}} : vector<
// CHECK-NOT: math.exp
// CHECK: arith.maximumf {{.*}} : vector<
// CHECK: vector.reduction <maximumf>
func.func @row_max_exp(%x: memref<8x128xf32>, %m: memref<8xf32>, %z: memref<8xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]}
      ins(%x, %m : memref<8x128xf32>, memref<8xf32>) outs(%z : memref<8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %d = arith.subf %a, %b : f32
    %e = math.exp %d : f32
    %s = arith.maximumf %e, %o : f32
    linalg.yield %s : f32
  }
  return
}

// Not taken: a row no vector divides (7), a reduction over the outer dim,
// and a body that reads the output besides combining into it.
// CHECK-LABEL: func.func @odd_row(
// CHECK: linalg.generic
// CHECK-NOT: vector.
func.func @odd_row(%x: memref<32x7xf32>, %z: memref<32xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<32x7xf32>) outs(%z : memref<32xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %a, %o : f32
    linalg.yield %s : f32
  }
  return
}

// CHECK-LABEL: func.func @column_sum(
// CHECK: linalg.generic
// CHECK-NOT: vector.
func.func @column_sum(%x: memref<32x64xf32>, %z: memref<64xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1, d0)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<32x64xf32>) outs(%z : memref<64xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %a, %o : f32
    linalg.yield %s : f32
  }
  return
}

// CHECK-LABEL: func.func @reads_output(
// CHECK: linalg.generic
// CHECK-NOT: vector.
func.func @reads_output(%x: memref<32x64xf32>, %z: memref<32xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<32x64xf32>) outs(%z : memref<32xf32>) {
  ^bb0(%a: f32, %o: f32):
    %p = arith.mulf %a, %o : f32
    %s = arith.addf %p, %o : f32
    linalg.yield %s : f32
  }
  return
}

// CHECK-LABEL: func.func @int(
// CHECK: linalg.generic
// CHECK-NOT: vector.
func.func @int(%x: memref<32x32xi32>, %z: memref<32x32xi32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<32x32xi32>) outs(%z : memref<32x32xi32>) {
  ^bb0(%a: i32, %o: i32):
    %s = arith.addi %a, %a : i32
    linalg.yield %s : i32
  }
  return
}

// -----

// A transpose that moves the innermost dim runs in 16x16 blocks over an
// scf.parallel (each block's lines stay in L1). A whole block is vectorized:
// 16 row loads, the transpose in registers (64 two-input shuffles, 4 rounds
// of 16, not 256 lane extracts and inserts), 16 row stores. The batch dim is
// tiled by 1; partial edge blocks (40 = 16 + 16 + 8) stay scalar loops.
// CHECK-LABEL: func.func @transpose_blocks(
// CHECK: scf.parallel (%[[I:.*]], %[[J:.*]]) = {{.*}} step (%c16, %c16)
// CHECK: %[[IN:.*]] = memref.subview %{{.*}}[%[[J]], %[[I]]] [16, 16] [1, 1]
// CHECK: %[[OUT:.*]] = memref.subview %{{.*}}[%[[I]], %[[J]]] [16, 16] [1, 1]
// CHECK-COUNT-16: vector.load %[[IN]]{{.*}} vector<16xf32>
// CHECK-NOT: vector.extract
// CHECK-COUNT-64: vector.shuffle {{.*}} : vector<16xf32>, vector<16xf32>
// CHECK-NOT: vector.extract
// CHECK-NOT: linalg.transpose
// CHECK-COUNT-16: vector.store {{.*}}, %[[OUT]]
// CHECK: } {paddle.min_task_size = 128 : i64}
func.func @transpose_blocks(%x: memref<64x48xf32>, %y: memref<48x64xf32>) {
  linalg.transpose ins(%x : memref<64x48xf32>) outs(%y : memref<48x64xf32>) permutation = [1, 0]
  return
}

// CHECK-LABEL: func.func @transpose_batched_blocks(
// CHECK: scf.parallel {{.*}} to (%c2, %c32, %c40) step (%c1, %c16, %c16)
// CHECK: affine.min
// CHECK: linalg.transpose {{.*}} permutation = [0, 2, 1]
func.func @transpose_batched_blocks(%x: memref<2x40x32xf32>, %y: memref<2x32x40xf32>) {
  linalg.transpose ins(%x : memref<2x40x32xf32>) outs(%y : memref<2x32x40xf32>) permutation = [0, 2, 1]
  return
}

// Rows kept whole (the innermost dim stays innermost): an elementwise copy
// with the outer dims permuted, vectorized along the rows (16 or 8 lanes)
// like any elementwise op. A dim shorter than a block: left as it is.
// CHECK-LABEL: func.func @transpose_not_blocked(
// CHECK: scf.parallel (%[[I:.*]], %[[J:.*]], %[[K:.*]]) = {{.*}} to (%c8, %c4, %c32) step (%c1, %c1, %c[[W:16|8]])
// CHECK: %[[IN:.*]] = memref.subview %{{.*}}[%[[J]], %[[I]], %[[K]]] [1, 1, [[W]]]
// CHECK: %[[OUT:.*]] = memref.subview %{{.*}}[%[[I]], %[[J]], %[[K]]] [1, 1, [[W]]]
// CHECK: %[[V:.*]] = vector.load %[[IN]]{{.*}} vector<[[W]]xf32>
// CHECK: vector.store %[[V]], %[[OUT]]
// CHECK-NOT: permutation = [1, 0, 2]
// CHECK: linalg.transpose {{.*}} permutation = [1, 0]
func.func @transpose_not_blocked(%x: memref<4x8x32xf32>, %y: memref<8x4x32xf32>,
                                 %a: memref<8x64xf32>, %b: memref<64x8xf32>) {
  linalg.transpose ins(%x : memref<4x8x32xf32>) outs(%y : memref<8x4x32xf32>) permutation = [1, 0, 2]
  linalg.transpose ins(%a : memref<8x64xf32>) outs(%b : memref<64x8xf32>) permutation = [1, 0]
  return
}

// -----

// A copy from a strided view whose rows are contiguous (a slice of a
// stacked tensor) is an elementwise copy, vectorized along the rows; the
// runtime library's generic copy would move it one element at a time. A
// copy between contiguous buffers stays a memcpy (memref.copy).
// CHECK-LABEL: func.func @copies(
// CHECK: scf.parallel
// CHECK: vector.load {{.*}}strided<[768, 768, 1], offset: ?>>, vector<{{16|8}}xf32>
// CHECK: vector.store
// CHECK-NOT: memref.copy %{{.*}}strided
// CHECK: memref.copy %{{.*}}, %{{.*}} : memref<4x8xf32> to memref<4x8xf32>
func.func @copies(%x: memref<3x128x1x768xf32>, %y: memref<128x1x768xf32>,
                  %a: memref<4x8xf32>, %b: memref<4x8xf32>) {
  %s = memref.subview %x[1, 0, 0, 0] [1, 128, 1, 768] [1, 1, 1, 1] : memref<3x128x1x768xf32> to memref<128x1x768xf32, strided<[768, 768, 1], offset: 98304>>
  memref.copy %s, %y : memref<128x1x768xf32, strided<[768, 768, 1], offset: 98304>> to memref<128x1x768xf32>
  memref.copy %a, %b : memref<4x8xf32> to memref<4x8xf32>
  return
}

// -----

// An elementwise op that writes bf16 (bias + relu, then the cast of
// --precision bf16) is vectorized like an f32 one: the arithmetic is f32 and
// the truncf works on vectors. bf16 arithmetic stays as it is.
// CHECK-LABEL: func.func @writes_bf16(
// CHECK: scf.parallel
// CHECK: arith.truncf %{{.*}} : vector<{{16|8}}xf32> to vector<{{16|8}}xbf16>
// CHECK: vector.store %{{.*}} : memref<{{.*}}xbf16{{.*}}>, vector<{{16|8}}xbf16>
// CHECK-LABEL: func.func @bf16_arithmetic(
// CHECK-NOT: vector<
// CHECK: linalg.generic
// CHECK-NOT: vector<
// CHECK: arith.sitofp {{.*}} : i32 to bf16
func.func @writes_bf16(%x: memref<64x256xf32>, %b: memref<256xf32>, %y: memref<64x256xbf16>) {
  %zero = arith.constant 0.0 : f32
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>, affine_map<(i, j) -> (i, j)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%x, %b : memref<64x256xf32>, memref<256xf32>) outs(%y : memref<64x256xbf16>) {
  ^bb0(%in: f32, %bias: f32, %out: bf16):
    %s = arith.addf %in, %bias : f32
    %r = arith.maximumf %s, %zero : f32
    %t = arith.truncf %r : f32 to bf16
    linalg.yield %t : bf16
  }
  return
}
func.func @bf16_arithmetic(%x: memref<64x256xbf16>, %y: memref<64x256xbf16>,
                            %i: memref<64x256xi32>) {
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<64x256xbf16>) outs(%y : memref<64x256xbf16>) {
  ^bb0(%in: bf16, %out: bf16):
    %s = arith.addf %in, %in : bf16
    linalg.yield %s : bf16
  }
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%i : memref<64x256xi32>) outs(%y : memref<64x256xbf16>) {
  ^bb0(%in: i32, %out: bf16):
    %s = arith.sitofp %in : i32 to bf16
    linalg.yield %s : bf16
  }
  return
}
