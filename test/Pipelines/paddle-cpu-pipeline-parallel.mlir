// RUN: paddle-opt %s --paddle-cpu-pipeline --mlir-print-ir-after=paddle-async-parallel-for -o /dev/null 2> %t
// RUN: FileCheck %s --check-prefix=ASYNC < %t
// RUN: FileCheck %s --check-prefix=ADD < %t
// RUN: FileCheck %s --check-prefix=SUM < %t
// RUN: paddle-opt %s --paddle-cpu-pipeline | FileCheck %s --check-prefix=LLVM
// The parallel dims of each linalg op become blocks run through the async
// runtime (the number of blocks asked from it at run time); reduction dims
// stay sequential inside a block; run-time checks stay in the caller, and
// each kernel is a function of its own (paddle-outline-kernels).

// ASYNC-LABEL: func.func @main
// The shape checks of the dynamic add run before any parallel work.
// ASYNC: cf.assert {{.*}}operand dim 0 does not match
// ASYNC: cf.assert {{.*}}operand dim 1 does not match
// ASYNC: call @{{kernel[_0-9]*}}(
// ASYNC: call @{{kernel[_0-9]*}}(
// ASYNC: call @{{kernel[_0-9]*}}(
// ASYNC-NOT: cf.assert

// The elementwise add + tanh: loops smaller than the minimum task size run
// serially in the caller.
// ADD: call @[[ADD:kernel[_0-9]*]](%arg0, %arg1,
// ADD: func.func private @[[ADD]](
// ADD: %[[MIN_TASK:.*]] = arith.constant 32768 : index
// ADD: async.runtime.num_worker_threads
// ADD: arith.maxsi %{{.*}}, %[[MIN_TASK]] : index
// ADD: scf.if
// ADD: func.call @[[COMPUTE:parallel_compute_fn[_0-9]*]](
// ADD: } else {
// ADD: %[[GROUP:.*]] = async.create_group
// ADD: func.call @[[DISPATCH:async_dispatch_fn[_0-9]*]](%[[GROUP]],
// ADD: async.await_all %[[GROUP]]
// ADD: func.func private @[[COMPUTE]](
// ADD-NOT: cf.assert
// ADD: scf.for
// ADD: scf.for
// ADD: arith.addf
// ADD: math.tanh
// ADD: func.func private @[[DISPATCH]](
// ADD-NOT: cf.assert
// ADD: async.execute
// ADD: async.add_to_group
// ADD: call @[[COMPUTE]](

// The reduction: one parallel dim; the summed dim is a loop in the block.
// SUM: call @[[SUM:kernel[_0-9]*]](%alloc, %alloc
// SUM: func.func private @[[SUM]](
// SUM: func.call @[[COMPUTE:parallel_compute_fn[_0-9]*]](
// SUM: func.func private @[[COMPUTE]](
// SUM-NOT: cf.assert
// SUM: scf.for
// SUM: scf.for
// SUM: arith.addf

// LLVM-LABEL: llvm.func @main
// LLVM: llvm.call @paddle_runtime_check_failed
// LLVM: llvm.call @kernel
// LLVM-LABEL: llvm.func @kernel(
// LLVM: llvm.call @mlirAsyncRuntimGetNumWorkerThreads
// LLVM: llvm.call @mlirAsyncRuntimeAwaitAllInGroup
// The async.execute bodies are LLVM coroutines, split by LLVM's optimizer.
// LLVM: llvm.func @async_execute_fn({{.*}}passthrough = ["presplitcoroutine"]
// LLVM: llvm.intr.coro.begin
// LLVM: llvm.call @mlirAsyncRuntimeExecute
// LLVM: llvm.intr.coro.suspend
// LLVM: llvm.call @mlirAsyncRuntimeEmplaceToken
func.func @main(%a: tensor<?x?xf32>, %b: tensor<?x?xf32>) -> (tensor<?x?xf32>, tensor<?xf32>) {
  %0 = paddle.add %a, %b : tensor<?x?xf32>, tensor<?x?xf32> -> tensor<?x?xf32>
  %1 = paddle.tanh %0 : tensor<?x?xf32> -> tensor<?x?xf32>
  %2 = paddle.reduce_sum %1 axes = [1] : tensor<?x?xf32> -> tensor<?xf32>
  return %1, %2 : tensor<?x?xf32>, tensor<?xf32>
}
