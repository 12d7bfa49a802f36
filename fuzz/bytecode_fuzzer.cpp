//===- bytecode_fuzzer.cpp - libFuzzer target for the module loader -------===//
//
// Module bytes from users (files, Python's Module.parse) go through
// paddle::sanitizeModuleBuffer before any parser sees them: nesting of text
// is bounded, and bytecode is read by the upstream reader in a child process
// and comes back written again by the bytecode writer. Every input must end
// in an error or in bytes that this process then parses without a crash
// (built with AddressSanitizer by scripts/fuzz.sh; the child is not
// instrumented for coverage, so the corpus seeds matter: valid bytecode
// files of real modules, fuzz/corpus/bytecode).
//
//===----------------------------------------------------------------------===//

#include "dialects/Paddle/IR/PaddleOps.h"
#include "paddle/Execution/SourceModule.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/InitAllDialects.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"

#include <cstddef>
#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static mlir::DialectRegistry *registry = [] {
    auto *r = new mlir::DialectRegistry;
    mlir::registerAllDialects(*r);
    r->insert<mlir::paddle::PaddleDialect>();
    return r;
  }();
  static mlir::MLIRContext *context = [] {
    auto *c = new mlir::MLIRContext(*registry,
                                    mlir::MLIRContext::Threading::DISABLED);
    c->getDiagEngine().registerHandler(
        [](mlir::Diagnostic &) { return mlir::success(); });
    return c;
  }();
  llvm::StringRef bytes(reinterpret_cast<const char *>(data), size);
  // A copy ends with the NUL that MLIR's lexer needs after text, as
  // readModuleFile's buffers do.
  auto buffer = mlir::paddle::sanitizeModuleBuffer(
      llvm::MemoryBuffer::getMemBufferCopy(bytes, "input"), *registry);
  if (!buffer) {
    llvm::consumeError(buffer.takeError());
    return 0;
  }
  // What the loader hands on is parsed here, in the instrumented process.
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(std::move(*buffer), llvm::SMLoc());
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceFile<mlir::ModuleOp>(sourceMgr,
                                            mlir::ParserConfig(context));
  return 0;
}
