//===- Pipelines.h - named paddle pass pipelines -----------------*- C++
//-*-===//

#ifndef PADDLE_PIPELINES_PIPELINES_H
#define PADDLE_PIPELINES_PIPELINES_H

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"

namespace mlir::paddle {

struct CpuPipelineOptions : public PassPipelineOptions<CpuPipelineOptions> {
  Option<bool> instrumentKernels{
      *this, "instrument-kernels",
      llvm::cl::desc("Record a trace event around every kernel "
                     "(paddle-instrument-kernels)"),
      llvm::cl::init(false)};
};

/// paddle -> linalg on tensors -> bufferized loops -> LLVM dialect, ready for
/// the JIT (paddle-run) or translation to LLVM IR. Registered as
/// `paddle-cpu-pipeline`, so `paddle-opt --paddle-cpu-pipeline` reproduces
/// exactly what the tools run.
void buildCpuPipeline(OpPassManager &pm,
                      const CpuPipelineOptions &options = {});

/// The textual form of the pipeline above, for messages and docs.
std::string getCpuPipelineText();

void registerPipelines();

} // namespace mlir::paddle

#endif // PADDLE_PIPELINES_PIPELINES_H
