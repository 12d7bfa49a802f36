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

#endif // PADDLE_TRANSFORMS_PASSES_TD
