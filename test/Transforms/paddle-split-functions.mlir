// RUN: paddle-opt %s --split-input-file --paddle-split-functions="ops-per-part=2" | FileCheck %s
// RUN: paddle-opt %s --split-input-file --paddle-split-functions="ops-per-part=2" --paddle-inline-parts | FileCheck %s --check-prefix=BACK
// RUN: paddle-opt %s --split-input-file --paddle-split-functions="ops-per-part=2 max-values-across=1" | FileCheck %s --check-prefix=FEW

// A chain reading %w in every op becomes parts called in order, each
// taking %w as an argument (its few uses in the part are all bufferization
// sees there). Results written into a tensor.empty cross the cuts.
// CHECK-LABEL: func.func @chain(
// CHECK-SAME: %[[X:.*]]: tensor<4xf32>, %[[W:.*]]: tensor<4xf32>)
// CHECK-NEXT: %[[P0:.*]] = call @[[PART0:chain_part]](%[[X]], %[[W]])
// CHECK-NEXT: %[[P1:.*]] = call @chain_part_0(%[[P0]], %[[W]])
// CHECK-NEXT: %[[P2:.*]] = call @chain_part_1(%[[P1]], %[[W]])
// CHECK-NEXT: %[[P3:.*]] = call @chain_part_2(%[[P2]], %[[W]])
// CHECK-NEXT: return %[[P3]]
// CHECK: func.func private @[[PART0]](%[[A0:.*]]: tensor<4xf32>, %[[A1:.*]]: tensor<4xf32>) -> tensor<4xf32> attributes {paddle.part}
// CHECK-NEXT: %[[E:.*]] = tensor.empty
// CHECK-NEXT: %[[R:.*]] = linalg.add ins(%[[A0]], %[[A1]] : {{.*}}) outs(%[[E]]
// CHECK-NEXT: return %[[R]]
// Inlined back, the function is what it was.
// BACK-LABEL: func.func @chain(
// BACK-SAME: %[[X:.*]]: tensor<4xf32>, %[[W:.*]]: tensor<4xf32>)
// BACK-NEXT: %[[E0:.*]] = tensor.empty
// BACK-NEXT: %[[A:.*]] = linalg.add ins(%[[X]], %[[W]] : {{.*}}) outs(%[[E0]]
// BACK-NEXT: %[[E1:.*]] = tensor.empty
// BACK-NEXT: %[[B:.*]] = linalg.mul ins(%[[A]], %[[W]] : {{.*}}) outs(%[[E1]]
// BACK-NEXT: %[[E2:.*]] = tensor.empty
// BACK-NEXT: %[[C:.*]] = linalg.add ins(%[[B]], %[[W]] : {{.*}}) outs(%[[E2]]
// BACK-NEXT: %[[E3:.*]] = tensor.empty
// BACK-NEXT: %[[D:.*]] = linalg.mul ins(%[[C]], %[[W]] : {{.*}}) outs(%[[E3]]
// BACK-NEXT: return %[[D]]
// BACK-NOT: func.func
// BACK: // -----
// Every cut of the chain passes two values (the last result and %w):
// with at most one allowed, it stays whole.
// FEW-LABEL: func.func @chain(
// FEW-NOT: call
// FEW: // -----
func.func @chain(%x: tensor<4xf32>, %w: tensor<4xf32>) -> tensor<4xf32> {
  %e0 = tensor.empty() : tensor<4xf32>
  %a = linalg.add ins(%x, %w : tensor<4xf32>, tensor<4xf32>) outs(%e0 : tensor<4xf32>) -> tensor<4xf32>
  %e1 = tensor.empty() : tensor<4xf32>
  %b = linalg.mul ins(%a, %w : tensor<4xf32>, tensor<4xf32>) outs(%e1 : tensor<4xf32>) -> tensor<4xf32>
  %e2 = tensor.empty() : tensor<4xf32>
  %c = linalg.add ins(%b, %w : tensor<4xf32>, tensor<4xf32>) outs(%e2 : tensor<4xf32>) -> tensor<4xf32>
  %e3 = tensor.empty() : tensor<4xf32>
  %d = linalg.mul ins(%c, %w : tensor<4xf32>, tensor<4xf32>) outs(%e3 : tensor<4xf32>) -> tensor<4xf32>
  return %d : tensor<4xf32>
}

// -----

// No cut separates a view (%s) from its uses, a value from the op writing
// into it (%b, filled), nor the producer of a materialized value (%g)
// from the materialization; scalar constants are cloned into the parts
// using them (and stay in the function); a donated argument stays
// writable in the part writing it.
// CHECK-LABEL: func.func @blocked(
// CHECK-SAME: %[[X:.*]]: tensor<8xf32>, %[[W:.*]]: tensor<8xf32> {bufferization.writable = true})
// CHECK: %[[A:.*]] = call @[[P0:blocked_part]](%[[X]], %[[W]])
// CHECK-NEXT: %[[P1:.*]]:2 = call @[[P1F:blocked_part_0]](%[[A]], %[[W]])
// CHECK-NEXT: %[[D:.*]] = call @[[P2:blocked_part_1]](%[[P1]]#1, %[[X]])
// CHECK-NEXT: %[[M:.*]] = call @[[P3:blocked_part_2]](%[[D]], %[[W]])
// CHECK-NEXT: return %[[M]], %[[P1]]#0
// CHECK: func.func private @[[P0]](
// CHECK: func.func private @[[P1F]](%[[PA:.*]]: tensor<8xf32>, %{{.*}}: tensor<8xf32> {bufferization.writable = true})
// CHECK-NEXT: %[[ONE:.*]] = arith.constant 1.0
// CHECK-NEXT: %[[S:.*]] = tensor.extract_slice %[[PA]]
// CHECK-NEXT: tensor.empty
// CHECK-NEXT: %[[B:.*]] = linalg.mul
// CHECK-NEXT: tensor.empty
// CHECK-NEXT: %[[T:.*]] = linalg.exp ins(%[[S]]
// CHECK-NEXT: %[[F:.*]] = linalg.fill ins(%[[ONE]] : f32) outs(%[[B]]
// CHECK-NEXT: return %[[T]], %[[F]]
// CHECK: func.func private @[[P2]](%{{.*}}: tensor<8xf32>, %{{.*}}: tensor<8xf32>) -> tensor<8xf32>
// CHECK: func.func private @[[P3]](%{{.*}}: tensor<8xf32>, %[[PW:.*]]: tensor<8xf32> {bufferization.writable = true})
// CHECK-NEXT: tensor.empty
// CHECK-NEXT: %[[G:.*]] = linalg.add
// CHECK-NEXT: bufferization.materialize_in_destination %[[G]] in %[[PW]]
func.func @blocked(%x: tensor<8xf32>, %w: tensor<8xf32> {bufferization.writable = true}) -> (tensor<8xf32>, tensor<4xf32>) {
  %c1 = arith.constant 1.0 : f32
  %e0 = tensor.empty() : tensor<8xf32>
  %a = linalg.add ins(%x, %w : tensor<8xf32>, tensor<8xf32>) outs(%e0 : tensor<8xf32>) -> tensor<8xf32>
  %s = tensor.extract_slice %a[0] [4] [1] : tensor<8xf32> to tensor<4xf32>
  %e1 = tensor.empty() : tensor<8xf32>
  %b = linalg.mul ins(%a, %w : tensor<8xf32>, tensor<8xf32>) outs(%e1 : tensor<8xf32>) -> tensor<8xf32>
  %e2 = tensor.empty() : tensor<4xf32>
  %t = linalg.exp ins(%s : tensor<4xf32>) outs(%e2 : tensor<4xf32>) -> tensor<4xf32>
  %f = linalg.fill ins(%c1 : f32) outs(%b : tensor<8xf32>) -> tensor<8xf32>
  %e3 = tensor.empty() : tensor<8xf32>
  %d = linalg.mul ins(%f, %x : tensor<8xf32>, tensor<8xf32>) outs(%e3 : tensor<8xf32>) -> tensor<8xf32>
  %e4 = tensor.empty() : tensor<8xf32>
  %g = linalg.add ins(%d, %d : tensor<8xf32>, tensor<8xf32>) outs(%e4 : tensor<8xf32>) -> tensor<8xf32>
  %m = bufferization.materialize_in_destination %g in %w : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  return %m, %t : tensor<8xf32>, tensor<4xf32>
}

// -----

// Constants stay in the function: a tensor one is a read-only argument of
// the parts using it (its global is made in the function's order).
// CHECK-LABEL: func.func @with_constant(
// CHECK-SAME: %[[X:.*]]: tensor<4xf32>)
// CHECK-NEXT: %[[K:.*]] = arith.constant dense<2.0
// CHECK-NEXT: %[[A:.*]] = call @[[P0:with_constant_part]](%[[X]], %[[K]])
// CHECK-NEXT: %[[B:.*]] = call @{{.*}}(%[[A]], %[[K]])
// CHECK-NEXT: %[[C:.*]] = call @{{.*}}(%[[B]], %[[K]])
// CHECK-NEXT: return %[[C]]
// CHECK: func.func private @[[P0]](%{{.*}}: tensor<4xf32>, %[[PK:.*]]: tensor<4xf32> {bufferization.writable = false})
// CHECK-NEXT: tensor.empty
// CHECK-NEXT: linalg.mul ins(%{{.*}}, %[[PK]] :
func.func @with_constant(%x: tensor<4xf32>) -> tensor<4xf32> {
  %k = arith.constant dense<2.0> : tensor<4xf32>
  %e0 = tensor.empty() : tensor<4xf32>
  %a = linalg.mul ins(%x, %k : tensor<4xf32>, tensor<4xf32>) outs(%e0 : tensor<4xf32>) -> tensor<4xf32>
  %e1 = tensor.empty() : tensor<4xf32>
  %b = linalg.mul ins(%a, %k : tensor<4xf32>, tensor<4xf32>) outs(%e1 : tensor<4xf32>) -> tensor<4xf32>
  %e2 = tensor.empty() : tensor<4xf32>
  %c = linalg.mul ins(%b, %k : tensor<4xf32>, tensor<4xf32>) outs(%e2 : tensor<4xf32>) -> tensor<4xf32>
  return %c : tensor<4xf32>
}

// -----

// Where every cut would separate a view from its uses, nothing is cut; a
// function of at most twice ops-per-part ops neither.
// CHECK-LABEL: func.func @views_everywhere
// CHECK-NOT: call
// CHECK-LABEL: func.func @short
// CHECK-NOT: call
// CHECK-NOT: func.func private
func.func @views_everywhere(%x: tensor<8xf32>) -> tensor<2xf32> {
  %s0 = tensor.extract_slice %x[0] [6] [1] : tensor<8xf32> to tensor<6xf32>
  %s1 = tensor.extract_slice %s0[0] [5] [1] : tensor<6xf32> to tensor<5xf32>
  %s2 = tensor.extract_slice %s1[0] [4] [1] : tensor<5xf32> to tensor<4xf32>
  %s3 = tensor.extract_slice %s2[0] [3] [1] : tensor<4xf32> to tensor<3xf32>
  %s4 = tensor.extract_slice %s3[0] [2] [1] : tensor<3xf32> to tensor<2xf32>
  return %s4 : tensor<2xf32>
}

func.func @short(%x: tensor<4xf32>) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  %a = linalg.exp ins(%x : tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  return %a : tensor<4xf32>
}
