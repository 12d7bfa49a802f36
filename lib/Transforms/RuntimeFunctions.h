//===- RuntimeFunctions.h - declaring what compiled code calls --*- C++ -*-===//

#ifndef PADDLE_LIB_TRANSFORMS_RUNTIMEFUNCTIONS_H
#define PADDLE_LIB_TRANSFORMS_RUNTIMEFUNCTIONS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"

namespace mlir::paddle {

/// Finds or declares `name` as a private function of `type` with the C
/// interface the runtime implements (runtime/src/symbols.cpp). A user
/// symbol of that name, or a declaration of another type, is an error
/// ("reserved for the runtime").
FailureOr<func::FuncOp> declareRuntimeFunction(ModuleOp module, StringRef name,
                                               FunctionType type);

} // namespace mlir::paddle

#endif // PADDLE_LIB_TRANSFORMS_RUNTIMEFUNCTIONS_H
