//===- Passes.td - paddle transformation passes --------------*- tablegen -*-===//

#ifndef PADDLE_TRANSFORMS_PASSES_TD
#define PADDLE_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def LowerRuntimeChecksPass
    : Pass<"paddle-lower-runtime-checks", "::mlir::ModuleOp"> {
  let summary = "Turn cf.assert into calls to the runtime's error handler.";
  let description = [{
    Compiled code checks at run time what the types cannot prove, such as two
    dynamic dims that broadcasting requires to be equal. Upstream lowers a
    failed `cf.assert` to `abort()`, which would kill the user's process. This
    pass replaces each assert, once the function is a CFG, with a branch to a
    block that calls `paddle_runtime_check_failed(message)`: the runtime then
    unwinds to the `paddle_invoke` that made the call, which returns an error
    status carrying the message. Memory the call allocated before the failure
    is not freed.

    ```mlir
    cf.assert %ok, "dims differ"
    ```
    becomes
    ```mlir
    cf.cond_br %ok, ^continue, ^fail
    ^fail:
      llvm.call @paddle_runtime_check_failed(%message) : (!llvm.ptr) -> ()
      llvm.unreachable
    ```
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect",
                           "::mlir::cf::ControlFlowDialect"];
}

def InstrumentKernelsPass
    : Pass<"paddle-instrument-kernels", "::mlir::ModuleOp"> {
  let summary = "Bracket every kernel with calls that record trace events.";
  let description = [{
    For per-kernel profiling (`paddle-run --trace`). Run on bufferized IR,
    before linalg is lowered to loops: each linalg op and `memref.copy` in a
    function body is a kernel. The pass gives each a module-wide id, brackets
    it with calls to the runtime's `paddle_trace_kernel_begin(id)` and
    `paddle_trace_kernel_end(id)`, and records the kernel names (the op name
    and its source location) by id in the module attribute
    `paddle.kernel_names`, which the JIT and paddle-compile hand to the
    runtime. Outside a traced session the calls return at once; modules
    compiled without this pass carry no instrumentation at all.

    ```mlir
    linalg.generic ... // loc("model.mlir":4:10)
    ```
    becomes
    ```mlir
    %id = arith.constant 0 : i64
    func.call @paddle_trace_kernel_begin(%id) : (i64) -> ()
    linalg.generic ...
    func.call @paddle_trace_kernel_end(%id) : (i64) -> ()
    // module attributes {paddle.kernel_names = ["linalg.generic model.mlir:4:10"]}
    ```
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::func::FuncDialect"];
}

#endif // PADDLE_TRANSFORMS_PASSES_TD
