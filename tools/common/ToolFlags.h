//===- ToolFlags.h - the compile options as command-line flags ---*- C++
//-*-===//
//
// paddle-run and paddle-compile take every compile option (CompileOptions,
// Pipelines.h) as a flag of the same name: --device, --library,
// --precision, --vector-bits, --tile-and-vectorize, --fuse, ... The flags
// are made from the options themselves, so an option is declared once; the
// values given become option text that CompileOptions parses, as
// paddle-opt's `--paddle-cpu-pipeline=...` and Python's `compile(options=)`
// do.
//
//===----------------------------------------------------------------------===//

#ifndef PADDLE_TOOLS_TOOLFLAGS_H
#define PADDLE_TOOLS_TOOLFLAGS_H

#include "paddle/Pipelines/Pipelines.h"

#include "llvm/Support/Error.h"

#include <string>

namespace mlir::paddle {

/// Registers one flag per compile option, with the option's description.
/// Call once, before llvm::cl::ParseCommandLineOptions.
void registerCompileFlags();

/// The option text of the compile flags given on the command line (after
/// ParseCommandLineOptions), e.g. "device=h200 fuse=0"; empty when none.
std::string getCompileFlagsText();

/// Parses the given compile flags into `options`. A bad value is an error
/// naming the flag, what it accepts and what was given (e.g. "--library
/// must be auto, onednn or none; got 'mkl'").
llvm::Error readCompileFlags(CompileOptions &options);

} // namespace mlir::paddle

#endif // PADDLE_TOOLS_TOOLFLAGS_H
