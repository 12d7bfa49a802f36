// RUN: paddle-opt %s --paddle-convert-paddle-to-linalg --split-input-file | FileCheck %s

// Broadcasting: the rank-1 operand drops the leading dim; the dynamic dims
// must agree at run time, which a cf.assert checks.
// CHECK-DAG: #[[$ID:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[$ROW:.*]] = affine_map<(d0, d1) -> (d1)>
// CHECK-LABEL: func @add_broadcast
// CHECK-SAME: (%[[A:.*]]: tensor<4x?xf32>, %[[B:.*]]: tensor<?xf32>)
// CHECK: %[[DA:.*]] = tensor.dim %[[A]], %{{.*}} : tensor<4x?xf32>
// CHECK: %[[DB:.*]] = tensor.dim %[[B]], %{{.*}} : tensor<?xf32>
// CHECK: %[[EQ:.*]] = arith.cmpi eq, %[[DB]], %[[DA]]
// CHECK: cf.assert %[[EQ]]
// CHECK: %[[INIT:.*]] = tensor.empty(%[[DA]]) : tensor<4x?xf32>
// CHECK: linalg.generic {indexing_maps = [#[[$ID]], #[[$ROW]], #[[$ID]]], iterator_types = ["parallel", "parallel"]}
// CHECK-SAME: ins(%[[A]], %[[B]] : tensor<4x?xf32>, tensor<?xf32>) outs(%[[INIT]] : tensor<4x?xf32>)
// CHECK: arith.addf
func.func @add_broadcast(%a: tensor<4x?xf32>, %b: tensor<?xf32>) -> tensor<4x?xf32> {
  %0 = paddle.add %a, %b : tensor<4x?xf32>, tensor<?xf32> -> tensor<4x?xf32>
  return %0 : tensor<4x?xf32>
}

// -----

// A static size-1 dim broadcasts through a constant index.
// CHECK-DAG: #[[$COL:.*]] = affine_map<(d0, d1) -> (d0, 0)>
// CHECK-LABEL: func @mul_size_one
// CHECK: linalg.generic {indexing_maps = [#[[$COL]], #{{.*}}, #{{.*}}]
// CHECK: arith.muli
func.func @mul_size_one(%a: tensor<3x1xi32>, %b: tensor<1x5xi32>) -> tensor<3x5xi32> {
  %0 = paddle.mul %a, %b : tensor<3x1xi32>, tensor<1x5xi32> -> tensor<3x5xi32>
  return %0 : tensor<3x5xi32>
}

// -----

// f16/bf16 math runs in f32.
// CHECK-LABEL: func @tanh_bf16
// CHECK: arith.extf %{{.*}} : bf16 to f32
// CHECK: math.tanh %{{.*}} : f32
// CHECK: arith.truncf %{{.*}} : f32 to bf16
func.func @tanh_bf16(%a: tensor<8xbf16>) -> tensor<8xbf16> {
  %0 = paddle.tanh %a : tensor<8xbf16> -> tensor<8xbf16>
  return %0 : tensor<8xbf16>
}

// -----

// Integer division never traps: divisors 0 and -1 are replaced before divsi.
// CHECK-LABEL: func @int_div
// CHECK: %[[SAFE:.*]] = arith.select %{{.*}}, %{{.*}}, %{{.*}} : i32
// CHECK: arith.divsi %{{.*}}, %[[SAFE]] : i32
// CHECK: arith.remsi %{{.*}}, %[[SAFE]] : i32
func.func @int_div(%a: tensor<4xi32>, %b: tensor<4xi32>) -> tensor<4xi32> {
  %0 = paddle.div %a, %b : tensor<4xi32>, tensor<4xi32> -> tensor<4xi32>
  return %0 : tensor<4xi32>
}

// -----

// CHECK-LABEL: func @compare_ne
// CHECK: arith.cmpf une
// CHECK: linalg.yield %{{.*}} : i1
func.func @compare_ne(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xi1> {
  %0 = paddle.compare ne, %a, %b : tensor<4xf32>, tensor<4xf32> -> tensor<4xi1>
  return %0 : tensor<4xi1>
}

// -----

// CHECK-LABEL: func @iota_dynamic
// CHECK-SAME: (%[[N:.*]]: index)
// CHECK: %[[E:.*]] = tensor.empty(%[[N]]) : tensor<2x?xf32>
// CHECK: linalg.generic
// CHECK: %[[I:.*]] = linalg.index 1 : index
// CHECK: arith.index_cast %[[I]] : index to i64
// CHECK: arith.sitofp %{{.*}} : i64 to f32
func.func @iota_dynamic(%n: index) -> tensor<2x?xf32> {
  %0 = paddle.iota [%n] dim = 1 : tensor<2x?xf32>
  return %0 : tensor<2x?xf32>
}

// -----

// CHECK-LABEL: func @constant
// CHECK: arith.constant dense<[1, 2]> : tensor<2xi64>
// CHECK-NOT: paddle.
func.func @constant() -> tensor<2xi64> {
  %0 = paddle.constant dense<[1, 2]> : tensor<2xi64>
  return %0 : tensor<2xi64>
}

// -----

// Splats up to 64 KiB stay constants; larger ones are filled at run time
// (LLVM would expand the initializer to every element), so 10^11 elements
// are an allocation that fails at run time, not a compile that runs out of
// memory.
// CHECK-LABEL: func @splat_constants
// CHECK-DAG: %[[SMALL:.*]] = arith.constant dense<1.000000e+00> : tensor<16384xf32>
// CHECK-DAG: %[[TWO:.*]] = arith.constant 2.000000e+00 : f32
// CHECK-DAG: %[[E1:.*]] = tensor.empty() : tensor<16385xf32>
// CHECK-DAG: %[[LARGE:.*]] = linalg.fill ins(%[[TWO]] : f32) outs(%[[E1]] : tensor<16385xf32>)
// CHECK-DAG: %[[THREE:.*]] = arith.constant 3 : i8
// CHECK-DAG: %[[E2:.*]] = tensor.empty() : tensor<100000000000xi8>
// CHECK-DAG: %[[HUGE:.*]] = linalg.fill ins(%[[THREE]] : i8) outs(%[[E2]] : tensor<100000000000xi8>)
// CHECK: return %[[SMALL]], %[[LARGE]], %[[HUGE]]
func.func @splat_constants() -> (tensor<16384xf32>, tensor<16385xf32>, tensor<100000000000xi8>) {
  %0 = paddle.constant dense<1.0> : tensor<16384xf32>
  %1 = paddle.constant dense<2.0> : tensor<16385xf32>
  %2 = paddle.constant dense<3> : tensor<100000000000xi8>
  return %0, %1, %2 : tensor<16384xf32>, tensor<16385xf32>, tensor<100000000000xi8>
}
