// RUN: paddle-opt %s --paddle-lower-runtime-checks --split-input-file --verify-diagnostics | FileCheck %s

// CHECK-DAG: llvm.func @paddle_runtime_check_failed(!llvm.ptr)
// CHECK-DAG: llvm.mlir.global internal constant @[[$MSG:paddle_check_message_1]]("dims differ\00")
// CHECK-LABEL: func @check
// CHECK-SAME: (%[[OK:.*]]: i1, %[[X:.*]]: i32)
// CHECK: cf.cond_br %[[OK]], ^[[CONT:.*]], ^[[FAIL:.*]]
// CHECK: ^[[FAIL]]:
// CHECK: %[[P:.*]] = llvm.mlir.addressof @[[$MSG]] : !llvm.ptr
// CHECK: llvm.call @paddle_runtime_check_failed(%{{.*}}) : (!llvm.ptr) -> ()
// CHECK-NEXT: llvm.unreachable
// CHECK: ^[[CONT]]:
// CHECK-NEXT: return %[[X]]
func.func @check(%ok: i1, %x: i32) -> i32 {
  cf.assert %ok, "dims differ"
  return %x : i32
}

// -----

func.func @nested(%ok: i1, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.for %i = %c0 to %n step %c1 {
    // expected-error @+1 {{paddle-lower-runtime-checks expects cf.assert directly in a function body (run it after convert-scf-to-cf)}}
    cf.assert %ok, "in a loop"
  }
  return
}
