// RUN: paddle-opt %s --paddle-print-memory-plan --verify-diagnostics -o /dev/null
// RUN: not paddle-opt %s --paddle-memory-report="json=%t.missing/dir/plan.json" -o /dev/null 2>&1 | FileCheck %s --check-prefix=WRITE

// expected-error @+1 {{no memory plan to report: run paddle-plan-memory first (or use the paddle-memory-report pipeline on a paddle-level model)}}
module {
  func.func @f(%x: memref<4xf32>) {
    return
  }
}

// WRITE: error: cannot write the memory plan to '{{.*}}.missing/dir/plan.json':
