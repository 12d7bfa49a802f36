//===- Pipelines.h - named paddle pass pipelines -----------------*- C++
//-*-===//

#ifndef PADDLE_PIPELINES_PIPELINES_H
#define PADDLE_PIPELINES_PIPELINES_H

#include "dialects/Paddle/IR/Target.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"

#include <optional>

namespace mlir::paddle {

/// The options of every compilation, parsed from and printed as option text
/// ("device=h200 library=onednn fuse=0") in one way: paddle-opt's
/// `--paddle-cpu-pipeline=...`, the tools' flags (ToolFlags.h turns each
/// option into a flag), JitModule::create and the Python package's
/// `compile(options=...)` all fill this struct. The target options (device,
/// library, precision, vector-bits) become the module's #paddle.target
/// (paddle-set-target); the rest shape the pipeline.
struct CompileOptions : public PassPipelineOptions<CompileOptions> {
  CompileOptions() = default;
  CompileOptions(const CompileOptions &other) : CompileOptions() {
    copyOptionValuesFrom(other);
  }

  TargetOptions<mlir::detail::PassOptions> target{*this};
  Option<bool> instrumentKernels{
      *this, "instrument-kernels",
      llvm::cl::desc("Record a trace event around every kernel "
                     "(paddle-instrument-kernels)"),
      llvm::cl::init(false)};
  Option<bool> tileAndVectorize{
      *this, "tile-and-vectorize",
      llvm::cl::desc("Tile and vectorize static f32 matmuls and elementwise "
                     "ops (paddle-tile-and-vectorize); off: scalar loops"),
      llvm::cl::init(true)};
  Option<bool> fuse{
      *this, "fuse",
      llvm::cl::desc("Group ops into fused kernels by the cost model "
                     "(paddle-fuse, paddle-lower-fusion); off: upstream "
                     "elementwise fusion only"),
      llvm::cl::init(true)};
  Option<int64_t> flattenMaxBytes{
      *this, "flatten-max-bytes",
      llvm::cl::desc("Flatten only constant globals of at most this many "
                     "bytes (paddle-flatten-constant-globals; 0: all)"),
      llvm::cl::init(0)};

  /// Checks the values (an unknown library, a device spec that cannot be
  /// read, ...); the error names the option.
  llvm::Error check() const;

  /// Parses option text (the syntax of pass pipeline options) over the
  /// current values; the error names the option and the problem.
  llvm::Error parse(llvm::StringRef text);

  /// The option text that parse() reads back.
  std::string str() const;

  /// Calls `fn(name, description, isFlag)` for every option, in order
  /// (isFlag: a boolean, which may be given without a value).
  void forEachOption(
      llvm::function_ref<void(llvm::StringRef, llvm::StringRef, bool)> fn)
      const;
};

/// paddle -> linalg on tensors -> bufferized loops -> LLVM dialect, ready for
/// the JIT (paddle-run) or translation to LLVM IR. Registered as
/// `paddle-cpu-pipeline`, so `paddle-opt --paddle-cpu-pipeline` reproduces
/// exactly what the tools run.
void buildCpuPipeline(OpPassManager &pm, const CompileOptions &options = {});

/// The first part of the CPU pipeline: paddle -> linalg on buffers with
/// explicit allocs, whose temporaries paddle-plan-memory has placed in one
/// workspace. What `paddle-memory-report` reports on, with `recordPlan`
/// (the plan as attributes in the IR).
void buildCpuBufferPipeline(OpPassManager &pm, bool recordPlan = false,
                            bool fuse = true);

/// The rest of the CPU pipeline: linalg on buffers -> LLVM dialect.
void buildCpuLlvmLoweringPipeline(OpPassManager &pm,
                                  const CompileOptions &options = {});

/// The textual form of the pipeline above, for messages and docs.
std::string getCpuPipelineText();

void registerPipelines();

} // namespace mlir::paddle

#endif // PADDLE_PIPELINES_PIPELINES_H
