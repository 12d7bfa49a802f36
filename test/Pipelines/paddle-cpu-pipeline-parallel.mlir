// RUN: paddle-opt %s --paddle-cpu-pipeline --mlir-print-ir-after=paddle-async-parallel-for -o /dev/null 2>&1 | FileCheck %s --check-prefix=ASYNC
// RUN: paddle-opt %s --paddle-cpu-pipeline | FileCheck %s --check-prefix=LLVM
// The parallel dims of each linalg op become blocks run through the async
// runtime (the number of blocks asked from it at run time); reduction dims
// stay sequential inside a block; run-time checks stay in the caller.

// ASYNC-LABEL: func.func @main
// Loops smaller than the minimum task size run serially in the caller.
// ASYNC: %[[MIN_TASK:.*]] = arith.constant 32768 : index
// The shape checks of the dynamic add run before any parallel work.
// ASYNC: cf.assert {{.*}}operand dim 0 does not match
// ASYNC: cf.assert {{.*}}operand dim 1 does not match
// ASYNC: async.runtime.num_worker_threads
// ASYNC: arith.maxsi %{{.*}}, %[[MIN_TASK]] : index
// ASYNC: scf.if
// ASYNC: func.call @parallel_compute_fn
// ASYNC: } else {
// ASYNC: %[[GROUP:.*]] = async.create_group
// ASYNC: func.call @async_dispatch_fn{{.*}}(%[[GROUP]],
// ASYNC: async.await_all %[[GROUP]]
// The reduction: one parallel dim; the summed dim is a loop in the block.
// ASYNC-LABEL: func.func private @parallel_compute_fn(
// ASYNC-NOT: cf.assert
// ASYNC: scf.for
// ASYNC: scf.for
// ASYNC: arith.addf
// ASYNC-LABEL: func.func private @async_dispatch_fn(
// ASYNC-NOT: cf.assert
// ASYNC: async.execute
// ASYNC: async.add_to_group
// ASYNC: call @parallel_compute_fn(
// The elementwise add + tanh (after the fill of the sum's accumulator).
// ASYNC-LABEL: func.func private @parallel_compute_fn_1(
// ASYNC-NOT: cf.assert
// ASYNC: scf.for
// ASYNC: scf.for
// ASYNC: arith.addf
// ASYNC: math.tanh

// LLVM-LABEL: llvm.func @main
// LLVM: llvm.call @paddle_runtime_check_failed
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
