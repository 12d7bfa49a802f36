//===- Aot.h - ahead-of-time compilation to artifacts ------------*- C++
//-*-===//
//
// Compiles a paddle module into an artifact for the host CPU, as
// paddle-compile does (and the Python package, through
// `_core.compile_aot`):
//   mlir  the LLVM-dialect module;
//   obj   an object file with the functions and their C-interface wrappers;
//   so    a shared object with one typed entry point per function, plus OUT.h;
//   exe   a standalone program: OUT --input a.npy ... --output-dir D --bench N.
// Artifacts link the runtime statically and need only libc, libstdc++ and
// libm at run time. A library exports its functions as <prefix><name>
// (default prefix from the output's name: mlp_main for libmlp.so). Outputs
// are published together at the end, never a partial file, a device node
// written into rather than replaced, and no file left behind by an error.
// Constants are embedded in .rodata unless `sidecarWeights` moves the large
// ones to OUT.weights (docs/weights-format.md), which the artifact loads and
// checks before its first call.
//
//===----------------------------------------------------------------------===//

#ifndef PADDLE_EXECUTION_AOT_H
#define PADDLE_EXECUTION_AOT_H

#include "paddle/Pipelines/Pipelines.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/Error.h"

#include <optional>
#include <string>

namespace mlir::paddle {

enum class ArtifactKind { SharedLibrary, Executable, Object, Mlir };

/// "so", "exe", "obj" or "mlir".
std::optional<ArtifactKind> parseArtifactKind(llvm::StringRef name);

struct AotOptions {
  ArtifactKind kind = ArtifactKind::SharedLibrary;
  /// Large constants go to OUT.weights instead of the artifact.
  bool sidecarWeights = false;
  /// With sidecarWeights: constants of at least this many bytes move.
  uint64_t sidecarThreshold = 256;
  /// Prefix of the C names a shared object exports; none: from the output's
  /// name ("libmlp.so" -> "mlp_").
  std::optional<std::string> symbolPrefix;
  /// Apply the pass manager's command-line flags (--mlir-print-ir-after=...)
  /// to the pipeline: for a tool that registered them.
  bool passManagerFlags = false;
};

/// The checks of `options` that need no module (a sidecar needs a compiled
/// artifact and a regular output file, ...).
llvm::Error checkAotOptions(const AotOptions &options,
                            llvm::StringRef outputPath);

/// Lowers `module` (in place) with the CPU pipeline and `compile`'s
/// options and writes the artifact to `outputPath` (with OUT.h for a
/// library, OUT.weights for sidecar weights). Errors name the problem; on
/// an error nothing is written. Needs `cc` and `c++` on PATH to link a
/// library or an executable.
llvm::Error compileAheadOfTime(ModuleOp module, const CompileOptions &compile,
                               const AotOptions &options,
                               llvm::StringRef outputPath);

} // namespace mlir::paddle

#endif // PADDLE_EXECUTION_AOT_H
