//===- ToolFlags.cpp - pipeline flags shared by paddle-run and compile ----===//
//
// The flags are global llvm::cl options of this file; a tool that calls
// readPipelineFlags links this object, which registers them.
//
//===----------------------------------------------------------------------===//

#include "ToolFlags.h"

#include "llvm/Support/CommandLine.h"

using namespace mlir;
using namespace mlir::paddle;
namespace cl = llvm::cl;

static cl::opt<std::string> libraryFlag(
    "library",
    cl::desc("Who runs f32 matmuls and convolutions: auto (per op, the "
             "path the cost model predicts faster), onednn (oneDNN for all "
             "it supports), none (generated code only); see docs/onednn.md"),
    cl::init("auto"));
static cl::opt<std::string> precisionFlag(
    "precision",
    cl::desc("Input precision of f32 matmuls and convolutions: f32, or bf16 "
             "(bf16 inputs, f32 accumulation and result); see docs/bf16.md"),
    cl::init("f32"));
static cl::opt<bool> tileAndVectorizeFlag(
    "tile-and-vectorize",
    cl::desc("Tile and vectorize static f32 matmuls and elementwise ops "
             "(default on; =0 compiles every op to scalar loops)"),
    cl::init(true));
static cl::opt<bool>
    fuseFlag("fuse",
             cl::desc("Group ops into fused kernels by the cost model (default "
                      "on; =0: upstream elementwise fusion only); see "
                      "docs/fusion.md"),
             cl::init(true));

llvm::Expected<PipelineFlags> mlir::paddle::readPipelineFlags() {
  auto fail = [](const llvm::Twine &message) {
    return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
  };
  PipelineFlags flags;
  std::optional<LibraryChoice> libraryChoice = parseLibraryChoice(libraryFlag);
  if (!libraryChoice)
    return fail("--library must be auto, onednn or none; got '" + libraryFlag +
                "'");
  std::optional<Precision> precisionChoice = parsePrecision(precisionFlag);
  if (!precisionChoice)
    return fail("--precision must be f32 or bf16; got '" + precisionFlag + "'");
  flags.library = *libraryChoice;
  flags.precision = *precisionChoice;
  flags.tileAndVectorize = tileAndVectorizeFlag;
  flags.fuse = fuseFlag;
  return flags;
}

void PipelineFlags::applyTo(JitOptions &options) const {
  options.library = library;
  options.precision = precision;
  options.tileAndVectorize = tileAndVectorize;
  options.fuse = fuse;
}

void PipelineFlags::applyTo(CpuPipelineOptions &options) const {
  options.library = library;
  options.precision = precision;
  options.tileAndVectorize = tileAndVectorize;
  options.fuse = fuse;
}
