//===- Jit.h - compile a paddle module and call it in process ----*- C++
//-*-===//
//
// The JIT used by paddle-run (and the Python package): runs the CPU pipeline
// on a module, compiles it with ORC's LLJIT (in parts, on several threads)
// and exposes each public function as a runtime signature plus packed entry
// point, so calls go through the same runtime code as ahead-of-time
// artifacts.
//
//===----------------------------------------------------------------------===//

#ifndef PADDLE_EXECUTION_JIT_H
#define PADDLE_EXECUTION_JIT_H

#include "paddle/Execution/Signature.h"
#include "paddle/Pipelines/Pipelines.h"
#include "paddle_runtime/runtime.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/Error.h"

#include <memory>
#include <string>
#include <vector>

namespace llvm::orc {
class LLJIT;
} // namespace llvm::orc
namespace mlir {
namespace paddle {

/// One callable function of a JIT-compiled module.
using JitFunction = FunctionSignature;

/// How JitModule::create turns LLVM IR into code (what the module is
/// compiled for and with which pipeline options is CompileOptions').
struct JitOptions {
  /// LLVM optimization level (0-3) of the JIT's optimizer and code generator.
  unsigned optLevel = 3;
  /// Threads LLVM compiles on, each a part of the module; 0: one per core.
  unsigned compileThreads = 0;
  /// Apply the pass manager's command-line flags (--mlir-print-ir-after=...)
  /// to the pipeline: for a tool that registered them
  /// (mlir::registerPassManagerCLOptions).
  bool passManagerFlags = false;
};

class JitModule {
public:
  /// Lowers `module` (in place) with the CPU pipeline and `compile`'s
  /// options, and JIT-compiles it. Every public function must take and
  /// return ranked tensors of supported element types; errors name the
  /// function and argument.
  static llvm::Expected<std::unique_ptr<JitModule>>
  create(ModuleOp module, const CompileOptions &compile = {},
         const JitOptions &options = {});
  ~JitModule();

  /// The function named `name`, or, when `name` is empty and the module has
  /// exactly one public function, that one.
  llvm::Expected<const JitFunction *> lookup(llvm::StringRef name) const;

  const std::vector<JitFunction> &functions() const { return functions_; }
  /// Bytes of the large constants (the weights), which the code reads from
  /// a block this module holds outside its code and data sections.
  uint64_t constantBytes() const { return constantBytes_; }
  /// The parts the module was split into, compiled at once.
  unsigned compileParts() const { return compileParts_; }
  /// Names of the instrumented kernels, by id.
  const std::vector<std::string> &kernelNames() const { return kernelNames_; }

  /// A runtime executable over this module's functions, which owns the
  /// module from now on (paddle_executable_free releases the code).
  static llvm::Expected<paddle_executable_t>
  toExecutable(std::unique_ptr<JitModule> module);

private:
  class ConstantStorage;
  JitModule();
  /// The large constants, which the compiled code reads in place (declared
  /// before the engine, so the code goes first).
  std::unique_ptr<ConstantStorage> constants_;
  uint64_t constantBytes_ = 0;
  unsigned compileParts_ = 1;
  std::unique_ptr<llvm::orc::LLJIT> lljit_;
  std::vector<JitFunction> functions_;
  std::vector<std::string> kernelNames_;
};

} // namespace paddle
} // namespace mlir

#endif // PADDLE_EXECUTION_JIT_H
