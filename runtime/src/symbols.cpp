//===- symbols.cpp - the runtime functions compiled code calls ------------===//
//
// One table for both execution paths: the JIT binds each name to its address;
// paddle-compile renames references to upstream names (memrefCopy, ...) into
// the runtime's own exported names and links this library.
//
//===----------------------------------------------------------------------===//

#include "paddle_runtime/async.h"
#include "paddle_runtime/onednn.h"
#include "paddle_runtime/runtime.h"
#include "paddle_runtime/spmd.h"
#include "workspace.h"

// The oneDNN kernels are in paddle_runtime_onednn, which links oneDNN. Weak
// references keep this table from pulling that library (and libdnnl) into
// every artifact: where it is not linked, their addresses are null, and the
// JIT, the loader of .so modules and paddle-compile treat them as absent.
#pragma weak _mlir_ciface_paddle_onednn_matmul
#pragma weak _mlir_ciface_paddle_onednn_conv2d
#pragma weak _mlir_ciface_paddle_onednn_conv2d_grouped
#pragma weak _mlir_ciface_paddle_onednn_reorder
#pragma weak _mlir_ciface_paddle_onednn_max_pool2d
#pragma weak _mlir_ciface_paddle_onednn_matmul_bf16
#pragma weak _mlir_ciface_paddle_onednn_conv2d_bf16
#pragma weak _mlir_ciface_paddle_onednn_conv2d_grouped_bf16

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
    // paddle-use-onednn declares its kernels with llvm.emit_c_interface, as
    // the workspace functions above (paddle_runtime/onednn.h).
    PADDLE_SYMBOL("_mlir_ciface_paddle_onednn_matmul",
                  _mlir_ciface_paddle_onednn_matmul),
    PADDLE_SYMBOL("_mlir_ciface_paddle_onednn_conv2d",
                  _mlir_ciface_paddle_onednn_conv2d),
    PADDLE_SYMBOL("_mlir_ciface_paddle_onednn_conv2d_grouped",
                  _mlir_ciface_paddle_onednn_conv2d_grouped),
    PADDLE_SYMBOL("_mlir_ciface_paddle_onednn_reorder",
                  _mlir_ciface_paddle_onednn_reorder),
    PADDLE_SYMBOL("_mlir_ciface_paddle_onednn_max_pool2d",
                  _mlir_ciface_paddle_onednn_max_pool2d),
    PADDLE_SYMBOL("_mlir_ciface_paddle_onednn_matmul_bf16",
                  _mlir_ciface_paddle_onednn_matmul_bf16),
    PADDLE_SYMBOL("_mlir_ciface_paddle_onednn_conv2d_bf16",
                  _mlir_ciface_paddle_onednn_conv2d_bf16),
    PADDLE_SYMBOL("_mlir_ciface_paddle_onednn_conv2d_grouped_bf16",
                  _mlir_ciface_paddle_onednn_conv2d_grouped_bf16),
// paddle-lower-collectives declares the collectives of an SPMD function
// with llvm.emit_c_interface (paddle_runtime/spmd.h), one declaration
// per element type: an unranked memref descriptor is the same for every
// type, so all of them are one function, which reads the `dtype`.
#define PADDLE_SPMD_SYMBOLS(op)                                                \
  PADDLE_SYMBOL("_mlir_ciface_paddle_spmd_" #op "_f32",                        \
                _mlir_ciface_paddle_spmd_##op),                                \
      PADDLE_SYMBOL("_mlir_ciface_paddle_spmd_" #op "_f64",                    \
                    _mlir_ciface_paddle_spmd_##op),                            \
      PADDLE_SYMBOL("_mlir_ciface_paddle_spmd_" #op "_f16",                    \
                    _mlir_ciface_paddle_spmd_##op),                            \
      PADDLE_SYMBOL("_mlir_ciface_paddle_spmd_" #op "_bf16",                   \
                    _mlir_ciface_paddle_spmd_##op),                            \
      PADDLE_SYMBOL("_mlir_ciface_paddle_spmd_" #op "_i1",                     \
                    _mlir_ciface_paddle_spmd_##op),                            \
      PADDLE_SYMBOL("_mlir_ciface_paddle_spmd_" #op "_i8",                     \
                    _mlir_ciface_paddle_spmd_##op),                            \
      PADDLE_SYMBOL("_mlir_ciface_paddle_spmd_" #op "_i32",                    \
                    _mlir_ciface_paddle_spmd_##op),                            \
      PADDLE_SYMBOL("_mlir_ciface_paddle_spmd_" #op "_i64",                    \
                    _mlir_ciface_paddle_spmd_##op)
    PADDLE_SPMD_SYMBOLS(all_reduce),
    PADDLE_SPMD_SYMBOLS(all_gather),
    PADDLE_SPMD_SYMBOLS(reduce_scatter),
    PADDLE_SPMD_SYMBOLS(all_to_all),
#undef PADDLE_SPMD_SYMBOLS
    PADDLE_SYMBOL("_mlir_ciface_paddle_spmd_process_index",
                  _mlir_ciface_paddle_spmd_process_index),
    // The async runtime ABI of parallel loops (mlir/ExecutionEngine/
    // AsyncRuntime.h; upstream spells GetNumWorkerThreads "Runtim").
    PADDLE_SYMBOL("mlirAsyncRuntimeAddRef", paddle_async_add_ref),
    PADDLE_SYMBOL("mlirAsyncRuntimeDropRef", paddle_async_drop_ref),
    PADDLE_SYMBOL("mlirAsyncRuntimeCreateToken", paddle_async_create_token),
    PADDLE_SYMBOL("mlirAsyncRuntimeCreateValue", paddle_async_create_value),
    PADDLE_SYMBOL("mlirAsyncRuntimeCreateGroup", paddle_async_create_group),
    PADDLE_SYMBOL("mlirAsyncRuntimeAddTokenToGroup",
                  paddle_async_add_token_to_group),
    PADDLE_SYMBOL("mlirAsyncRuntimeEmplaceToken", paddle_async_emplace_token),
    PADDLE_SYMBOL("mlirAsyncRuntimeEmplaceValue", paddle_async_emplace_value),
    PADDLE_SYMBOL("mlirAsyncRuntimeSetTokenError",
                  paddle_async_set_token_error),
    PADDLE_SYMBOL("mlirAsyncRuntimeSetValueError",
                  paddle_async_set_value_error),
    PADDLE_SYMBOL("mlirAsyncRuntimeIsTokenError", paddle_async_is_token_error),
    PADDLE_SYMBOL("mlirAsyncRuntimeIsValueError", paddle_async_is_value_error),
    PADDLE_SYMBOL("mlirAsyncRuntimeIsGroupError", paddle_async_is_group_error),
    PADDLE_SYMBOL("mlirAsyncRuntimeAwaitToken", paddle_async_await_token),
    PADDLE_SYMBOL("mlirAsyncRuntimeAwaitValue", paddle_async_await_value),
    PADDLE_SYMBOL("mlirAsyncRuntimeAwaitAllInGroup",
                  paddle_async_await_all_in_group),
    PADDLE_SYMBOL("mlirAsyncRuntimeGetValueStorage",
                  paddle_async_get_value_storage),
    PADDLE_SYMBOL("mlirAsyncRuntimeExecute", paddle_async_execute),
    PADDLE_SYMBOL("mlirAsyncRuntimeAwaitTokenAndExecute",
                  paddle_async_await_token_and_execute),
    PADDLE_SYMBOL("mlirAsyncRuntimeAwaitValueAndExecute",
                  paddle_async_await_value_and_execute),
    PADDLE_SYMBOL("mlirAsyncRuntimeAwaitAllInGroupAndExecute",
                  paddle_async_await_all_in_group_and_execute),
    PADDLE_SYMBOL("mlirAsyncRuntimGetNumWorkerThreads",
                  paddle_async_num_worker_threads),
};
#undef PADDLE_SYMBOL
} // namespace

extern "C" const paddle_runtime_symbol_t *
paddle_runtime_symbols(int32_t *count) {
  *count = static_cast<int32_t>(sizeof(kSymbols) / sizeof(kSymbols[0]));
  return kSymbols;
}
