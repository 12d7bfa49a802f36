//===- SourceModule.h - load a module file for the tools --------*- C++ -*-===//

#ifndef PADDLE_EXECUTION_SOURCEMODULE_H
#define PADDLE_EXECUTION_SOURCEMODULE_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/SourceMgr.h"

#include <memory>

namespace mlir::paddle {

/// A parsed and verified module file. While it lives, diagnostics in the
/// context (also those of later lowering) print with the file's lines.
class SourceModule {
public:
  /// Reads `path` (.mlir or .mlirbc); errors say which file and why (the
  /// parser's own diagnostics are printed first).
  static llvm::Expected<std::unique_ptr<SourceModule>>
  load(llvm::StringRef path, MLIRContext &context);

  ModuleOp get() { return *module; }

private:
  SourceModule() = default;
  llvm::SourceMgr sourceMgr;
  std::unique_ptr<SourceMgrDiagnosticHandler> handler;
  OwningOpRef<ModuleOp> module;
};

} // namespace mlir::paddle

#endif // PADDLE_EXECUTION_SOURCEMODULE_H
