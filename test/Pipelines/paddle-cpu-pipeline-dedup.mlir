// RUN: paddle-opt %s --paddle-cpu-pipeline --mlir-print-ir-after=paddle-outline-kernels,paddle-dedup-functions -o /dev/null 2>&1 | FileCheck %s
// RUN: paddle-opt %s --paddle-cpu-pipeline --mlir-print-ir-before=convert-scf-to-cf -o /dev/null 2>&1 | grep -c "func.func private @" | FileCheck %s --check-prefix=COUNT
// Two tanh on the same shape are equal kernels: paddle-outline-kernels moves
// each into a function of its own, paddle-dedup-functions keeps one and
// both calls go to it, so what async-parallel-for makes of it (a compute
// function and one with aligned loops, their recursive dispatch functions,
// the async.execute coroutines these call) is made, and compiled, once:
// 7 functions with the kernel, not 14.

// CHECK-LABEL: IR Dump After OutlineKernelsPass
// CHECK: func.func @main
// CHECK: call @[[FIRST:kernel[_0-9]*]](%arg0
// CHECK: call @[[SECOND:kernel[_0-9]*]](%arg1
// CHECK: func.func private @[[FIRST]](
// CHECK: func.func private @[[SECOND]](
// CHECK-LABEL: IR Dump After DedupFunctionsPass
// CHECK: func.func @main
// CHECK: call @[[KERNEL:kernel[_0-9]*]](%arg0
// CHECK: call @[[KERNEL]](%arg1
// CHECK-NOT: func.func private @kernel
// CHECK: func.func private @[[KERNEL]](
// CHECK-NOT: func.func private @kernel
// The second paddle-dedup-functions, after async-to-async-runtime.
// CHECK: IR Dump After DedupFunctionsPass
// COUNT: 7
func.func @main(%a: tensor<64x128xf32>, %b: tensor<64x128xf32>) -> (tensor<64x128xf32>, tensor<64x128xf32>) {
  %0 = paddle.tanh %a : tensor<64x128xf32> -> tensor<64x128xf32>
  %1 = paddle.tanh %b : tensor<64x128xf32> -> tensor<64x128xf32>
  return %0, %1 : tensor<64x128xf32>, tensor<64x128xf32>
}
