// RUN: paddle-opt %s --split-input-file --paddle-cpu-pipeline="vector-bits=512" --mlir-print-ir-after=paddle-tile-and-vectorize -o /dev/null 2>&1 | FileCheck %s

// The reductions inside a fused group's tile loop are vector code
// (docs/fusion.md, "Vectorized reductions"). softmax with attention's scale:
// paddle-lower-fusion's tile of 32 rows (an scf.parallel after
// bufferization) reduces each row's max and sum of exps into vectors of
// 64 lanes with one vector.reduction per row, then normalises the tile in
// vectors. No scalar reduction generic is left.
// CHECK-LABEL: func.func @softmax_rows
// CHECK-NOT: iterator_types
// CHECK: scf.parallel (%{{.*}}, %{{.*}}) = ({{.*}}) to ({{.*}}) step (%{{.*}}, %c32)
// CHECK: scf.for
// CHECK: memref.expand_shape {{.*}} output_shape [1, 1, 2, 64]
// CHECK: vector.load {{.*}} vector<64xf32>
// CHECK: arith.mulf {{.*}} : vector<
// CHECK: arith.maximumf {{.*}} : vector<64xf32>
// CHECK: vector.reduction <maximumf>
// CHECK: scf.for
// CHECK: vector.load {{.*}} vector<64xf32>
// CHECK-NOT: math.exp
// CHECK: arith.addf {{.*}} : vector<64xf32>
// CHECK: vector.reduction <add>
// CHECK: scf.parallel
// CHECK: arith.divf {{.*}} : vector<16xf32>
// CHECK: vector.store
// CHECK-NOT: iterator_types
// CHECK: return
func.func @softmax_rows(%x: tensor<8x128x128xf32>) -> tensor<8x128x128xf32> {
  %c = paddle.constant dense<0.125> : tensor<f32>
  %t = paddle.mul %x, %c : tensor<8x128x128xf32>, tensor<f32> -> tensor<8x128x128xf32>
  %p = paddle.softmax %t axis = -1 : tensor<8x128x128xf32> -> tensor<8x128x128xf32>
  return %p : tensor<8x128x128xf32>
}

// -----

// layer_norm with the residual add: tiles of 4 rows; each row's sum and sum
// of squared deviations run over 12 chunks of 64 lanes, 4 chunks per step of
// a loop that carries the accumulator in registers.
// CHECK-LABEL: func.func @layer_norm_rows
// CHECK-NOT: iterator_types
// CHECK: scf.parallel (%{{.*}}) = (%{{.*}}) to (%{{.*}}) step (%c4)
// CHECK: scf.for {{.*}} iter_args(%{{.*}} = %{{.*}}) -> (vector<1x64xf32>)
// CHECK: vector.reduction <add>
// CHECK: scf.for {{.*}} iter_args(%{{.*}} = %{{.*}}) -> (vector<1x64xf32>)
// CHECK: vector.reduction <add>
// CHECK: scf.parallel
// CHECK: math.sqrt {{.*}} : vector<
// CHECK-NOT: iterator_types
// CHECK: return
func.func @layer_norm_rows(%x: tensor<128x768xf32>, %r: tensor<128x768xf32>, %g: tensor<768xf32>, %b: tensor<768xf32>) -> tensor<128x768xf32> {
  %a = paddle.add %x, %r : tensor<128x768xf32>, tensor<128x768xf32> -> tensor<128x768xf32>
  %y = paddle.layer_norm %a scale %g bias %b axes = [-1] : tensor<128x768xf32>, tensor<768xf32>, tensor<768xf32> -> tensor<128x768xf32>
  return %y : tensor<128x768xf32>
}
