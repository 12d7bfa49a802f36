//===- Pipelines.h - named paddle pass pipelines -----------------*- C++
//-*-===//

#ifndef PADDLE_PIPELINES_PIPELINES_H
#define PADDLE_PIPELINES_PIPELINES_H

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"

#include <optional>

namespace mlir::paddle {

/// Who runs large f32 matmuls and convolutions (docs/onednn.md).
enum class LibraryChoice {
  /// Per op, the path the cost model predicts faster (paddle-use-onednn).
  Auto,
  /// oneDNN for every op it supports.
  OneDnn,
  /// Always our own loops (artifacts do not link oneDNN).
  None,
};

/// Parses "auto", "onednn" or "none" (the tools' --library flag).
std::optional<LibraryChoice> parseLibraryChoice(llvm::StringRef text);

/// The input precision of matmul and conv2d (docs/bf16.md).
enum class Precision {
  /// f32 throughout.
  F32,
  /// bf16 inputs, f32 accumulation and result (paddle-convert-precision).
  BF16,
};

/// Parses "f32" or "bf16" (the tools' --precision flag).
std::optional<Precision> parsePrecision(llvm::StringRef text);

struct CpuPipelineOptions : public PassPipelineOptions<CpuPipelineOptions> {
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
  Option<int64_t> vectorBits{
      *this, "vector-bits",
      llvm::cl::desc("Vector register width the tiles are sized for (0: the "
                     "host CPU's, 512 with AVX-512, else 256)"),
      llvm::cl::init(0)};
  Option<bool> fuse{
      *this, "fuse",
      llvm::cl::desc("Group ops into fused kernels by the cost model "
                     "(paddle-fuse, paddle-lower-fusion); off: upstream "
                     "elementwise fusion only"),
      llvm::cl::init(true)};
  Option<LibraryChoice> library{
      *this, "library",
      llvm::cl::desc("Library kernels for matmul and conv (paddle-use-onednn)"),
      llvm::cl::init(LibraryChoice::Auto),
      llvm::cl::values(
          clEnumValN(LibraryChoice::Auto, "auto",
                     "per op, the path the cost model predicts faster"),
          clEnumValN(LibraryChoice::OneDnn, "onednn",
                     "oneDNN for every supported op"),
          clEnumValN(LibraryChoice::None, "none", "only generated code"))};
  Option<int64_t> flattenMaxBytes{
      *this, "flatten-max-bytes",
      llvm::cl::desc("Flatten only constant globals of at most this many "
                     "bytes (paddle-flatten-constant-globals; 0: all)"),
      llvm::cl::init(0)};
  Option<Precision> precision{
      *this, "precision",
      llvm::cl::desc("Input precision of f32 matmul and conv2d "
                     "(paddle-convert-precision)"),
      llvm::cl::init(Precision::F32),
      llvm::cl::values(clEnumValN(Precision::F32, "f32", "f32 throughout"),
                       clEnumValN(Precision::BF16, "bf16",
                                  "bf16 inputs, f32 accumulation"))};
};

/// paddle -> linalg on tensors -> bufferized loops -> LLVM dialect, ready for
/// the JIT (paddle-run) or translation to LLVM IR. Registered as
/// `paddle-cpu-pipeline`, so `paddle-opt --paddle-cpu-pipeline` reproduces
/// exactly what the tools run.
void buildCpuPipeline(OpPassManager &pm,
                      const CpuPipelineOptions &options = {});

/// The first part of the CPU pipeline: paddle -> linalg on buffers with
/// explicit allocs, whose temporaries paddle-plan-memory has placed in one
/// workspace. What `paddle-memory-report` reports on, with `recordPlan`
/// (the plan as attributes in the IR).
void buildCpuBufferPipeline(OpPassManager &pm, bool recordPlan = false,
                            bool fuse = true);

/// The rest of the CPU pipeline: linalg on buffers -> LLVM dialect.
void buildCpuLlvmLoweringPipeline(OpPassManager &pm,
                                  const CpuPipelineOptions &options = {});

/// The textual form of the pipeline above, for messages and docs.
std::string getCpuPipelineText();

void registerPipelines();

} // namespace mlir::paddle

#endif // PADDLE_PIPELINES_PIPELINES_H
