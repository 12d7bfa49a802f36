// RUN: paddle-opt %s --paddle-cpu-pipeline="library=none vector-bits=512" | FileCheck %s --implicit-check-not=llvm.intr.tanh
// RUN: paddle-opt %s --paddle-cpu-pipeline="library=none tile-and-vectorize=0" | FileCheck %s --check-prefix=SCALAR
// RUN: paddle-opt %s --paddle-cpu-pipeline="library=none vector-bits=512" --mlir-print-ir-after=paddle-async-parallel-for -o /dev/null 2>&1 | FileCheck %s --check-prefix=ASYNC
// The CPU pipeline tiles and vectorizes the static f32 matmul and the
// elementwise tanh (a rational approximation) down to LLVM vector FMAs,
// divisions, loads and stores; with
// tile-and-vectorize=0 every op stays scalar loops.

// The matmul's block loop may be split at every block; the tanh's loop
// over 16-wide vectors keeps about 4096 elements per block.
// ASYNC-LABEL: func.func @main
// ASYNC-DAG: arith.constant 1 : index
// ASYNC-DAG: arith.constant 256 : index
// ASYNC: async.runtime.num_worker_threads

// CHECK-LABEL: llvm.func @main
// CHECK: llvm.call @mlirAsyncRuntimGetNumWorkerThreads
// CHECK-DAG: llvm.intr.fmuladd({{.*}}) : (vector<32xf32>, vector<32xf32>, vector<32xf32>) -> vector<32xf32>
// CHECK-DAG: llvm.fdiv {{.*}} : vector<16xf32>
// CHECK-DAG: llvm.store {{.*}} : vector<16xf32>, !llvm.ptr

// SCALAR-LABEL: llvm.func @main
// SCALAR-NOT: vector<
func.func @main(%a: tensor<64x128xf32>, %b: tensor<128x256xf32>) -> tensor<64x256xf32> {
  %0 = paddle.matmul %a, %b : tensor<64x128xf32>, tensor<128x256xf32> -> tensor<64x256xf32>
  %1 = paddle.tanh %0 : tensor<64x256xf32> -> tensor<64x256xf32>
  return %1 : tensor<64x256xf32>
}
