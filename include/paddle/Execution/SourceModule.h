//===- SourceModule.h - load a module file for the tools --------*- C++ -*-===//

#ifndef PADDLE_EXECUTION_SOURCEMODULE_H
#define PADDLE_EXECUTION_SOURCEMODULE_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/SourceMgr.h"

#include <memory>

namespace mlir {
class DialectRegistry;
} // namespace mlir

namespace llvm {
class MemoryBuffer;
} // namespace llvm

namespace mlir::paddle {

/// Reads a module file (or "-", standard input) for parsing: a regular
/// file is mapped; a stream (a pipe, a FIFO) is read up to 2 GiB; a
/// directory or a device node is an error naming the path.
llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>>
readModuleFile(llvm::StringRef path);

/// Makes untrusted module bytes safe to parse (the buffer's identifier
/// names it in messages) and returns the bytes to parse. Text is returned
/// as it is once its nesting is at most SourceModule::kMaxNesting levels.
/// Bytecode must have a sound envelope (version, sections); the upstream
/// reader then reads it in a child process with a budget of time and
/// memory, and what comes back is that module written again by the
/// bytecode writer: the reader never sees a user's bytecode in this
/// process. Crashes, loops and parse errors in the child are errors here
/// (a parse error carries the child's diagnostics).
/// Text must be followed by a NUL, as MLIR's lexer needs (a MemoryBuffer
/// made with RequiresNullTerminator, or a copy).
llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>>
sanitizeModuleBuffer(std::unique_ptr<llvm::MemoryBuffer> buffer,
                     const DialectRegistry &registry);

/// A parsed and verified module file. While it lives, diagnostics in the
/// context (also those of later lowering) print with the file's lines.
class SourceModule {
public:
  /// Deepest nesting of brackets, regions and attributes a text module may
  /// have (the parser recurses per level; real models nest tens).
  static constexpr unsigned kMaxNesting = 1000;

  /// Reads `path` (.mlir or .mlirbc) through readModuleFile and
  /// checkModuleBuffer; errors say which file and why (the parser's own
  /// diagnostics are printed first).
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
