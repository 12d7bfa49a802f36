//===- symbols.cpp - the runtime functions compiled code calls ------------===//
//
// One table for both execution paths: the JIT binds each name to its address;
// paddle-compile renames references to upstream names (memrefCopy, ...) into
// the runtime's own exported names and links this library.
//
//===----------------------------------------------------------------------===//

#include "paddle_runtime/runtime.h"
#include "workspace.h"

namespace {
#define PADDLE_SYMBOL(name, function)                                          \
  {name, #function, reinterpret_cast<void *>(&function)}

const paddle_runtime_symbol_t kSymbols[] = {
    PADDLE_SYMBOL("paddle_runtime_check_failed", paddle_runtime_check_failed),
    PADDLE_SYMBOL("memrefCopy", paddle_memref_copy),
    PADDLE_SYMBOL("paddle_runtime_fail", paddle_runtime_fail),
    PADDLE_SYMBOL("_mlir_memref_to_llvm_alloc", paddle_alloc),
    PADDLE_SYMBOL("_mlir_memref_to_llvm_aligned_alloc", paddle_aligned_alloc),
    PADDLE_SYMBOL("_mlir_memref_to_llvm_free", paddle_free),
    PADDLE_SYMBOL("paddle_trace_kernel_begin", paddle_trace_kernel_begin),
    PADDLE_SYMBOL("paddle_trace_kernel_end", paddle_trace_kernel_end),
    // paddle-plan-memory declares paddle_workspace_{acquire,release} with
    // llvm.emit_c_interface; FuncToLLVM defines those names as wrappers
    // that call the _mlir_ciface_ functions, which are the runtime's.
    PADDLE_SYMBOL("_mlir_ciface_paddle_workspace_acquire",
                  _mlir_ciface_paddle_workspace_acquire),
    PADDLE_SYMBOL("_mlir_ciface_paddle_workspace_release",
                  _mlir_ciface_paddle_workspace_release),
};
#undef PADDLE_SYMBOL
} // namespace

extern "C" const paddle_runtime_symbol_t *
paddle_runtime_symbols(int32_t *count) {
  *count = static_cast<int32_t>(sizeof(kSymbols) / sizeof(kSymbols[0]));
  return kSymbols;
}
