//===- ToolFlags.h - pipeline flags shared by paddle-run and compile -*- C++
//-*-===//
//
// paddle-run and paddle-compile compile modules with the same CPU pipeline,
// so they take the same pipeline flags: --library, --precision,
// --tile-and-vectorize and --fuse. They are declared once, here (linking
// this library registers them with llvm::cl), and read into the options
// each tool hands to the pipeline.
//
//===----------------------------------------------------------------------===//

#ifndef PADDLE_TOOLS_TOOLFLAGS_H
#define PADDLE_TOOLS_TOOLFLAGS_H

#include "paddle/Execution/Jit.h"
#include "paddle/Pipelines/Pipelines.h"

#include "llvm/Support/Error.h"

namespace mlir::paddle {

/// The values of the shared pipeline flags.
struct PipelineFlags {
  LibraryChoice library = LibraryChoice::Auto;
  Precision precision = Precision::F32;
  bool tileAndVectorize = true;
  bool fuse = true;

  void applyTo(JitOptions &options) const;
  void applyTo(CpuPipelineOptions &options) const;
};

/// Parses the shared flags after llvm::cl::ParseCommandLineOptions; a bad
/// value is an error naming the flag, what it accepts and what was given
/// (e.g. "--library must be auto, onednn or none; got 'mkl'").
llvm::Expected<PipelineFlags> readPipelineFlags();

} // namespace mlir::paddle

#endif // PADDLE_TOOLS_TOOLFLAGS_H
