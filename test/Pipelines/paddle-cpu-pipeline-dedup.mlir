// RUN: paddle-opt %s --paddle-cpu-pipeline --mlir-print-ir-after=paddle-dedup-functions -o /dev/null 2>&1 | FileCheck %s
// RUN: paddle-opt %s --paddle-cpu-pipeline --mlir-print-ir-after=paddle-dedup-functions -o /dev/null 2>&1 | grep -c "func.func private @" | FileCheck %s --check-prefix=COUNT
// Two tanh on the same shape outline to equal functions: a compute function
// and one with aligned loops, their recursive dispatch functions and the
// async.execute coroutines these call. paddle-dedup-functions keeps one of
// each (6 functions, not 12) and both kernels call the same ones.

// CHECK-LABEL: func.func @main
// CHECK: call @parallel_compute_fn_with_aligned_loops(
// CHECK: call @async_dispatch_fn(
// CHECK: call @parallel_compute_fn(
// CHECK: call @async_dispatch_fn_0(
// CHECK: call @parallel_compute_fn_with_aligned_loops(
// CHECK: call @async_dispatch_fn(
// CHECK: call @parallel_compute_fn(
// CHECK: call @async_dispatch_fn_0(
// CHECK-LABEL: func.func private @async_dispatch_fn(
// CHECK: call @async_execute_fn(
// CHECK-LABEL: func.func private @async_execute_fn(
// CHECK: call @async_dispatch_fn(
// COUNT: 6
func.func @main(%a: tensor<64x128xf32>, %b: tensor<64x128xf32>) -> (tensor<64x128xf32>, tensor<64x128xf32>) {
  %0 = paddle.tanh %a : tensor<64x128xf32> -> tensor<64x128xf32>
  %1 = paddle.tanh %b : tensor<64x128xf32> -> tensor<64x128xf32>
  return %0, %1 : tensor<64x128xf32>, tensor<64x128xf32>
}
