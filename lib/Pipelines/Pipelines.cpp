//===- Pipelines.cpp - named paddle pass pipelines ------------------------===//

#include "paddle/Pipelines/Pipelines.h"
#include "paddle/Conversion/Passes.h"
#include "paddle/CostModel/Passes.h"
#include "paddle/Sharding/Passes.h"
#include "paddle/Transforms/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/Async/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Dialect/SCF/Transforms/Passes.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

/// How async-parallel-for splits parallel loops.
static paddle::AsyncParallelForPassOptions getParallelForOptions() {
  paddle::AsyncParallelForPassOptions options;
  // Recursive splitting: the blocks are launched by the workers themselves,
  // not one by one from the calling thread.
  options.asyncDispatch = true;
  // Ask the runtime (paddle_get_num_threads) when the loop runs.
  options.numWorkerThreads = -1;
  // Iterations of the parallel dims per block at least (Passes.h says
  // why). Loops over tiles from paddle-tile-and-vectorize carry their own
  // minimum, paddle.min_task_size.
  options.minTaskSize = paddle::kElementsPerTask;
  return options;
}

void mlir::paddle::buildCpuPipeline(OpPassManager &pm,
                                    const CompileOptions &options) {
  // The target first: every pass below that needs the device, the vector
  // width, the library or the precision reads it from the module.
  pm.addPass(createSetTargetPass(options.target.getChanges()));
  // A module with a device mesh becomes the program of one device, with
  // its collectives as runtime calls (paddle-partition).
  pm.addPass(createPartitionPass());
  // bf16 inputs for matmul and conv2d where the target asks for them, on
  // paddle ops so constant weights convert once here rather than on every
  // call.
  pm.addPass(createConvertPrecisionPass());
  buildCpuBufferPipeline(pm, /*recordPlan=*/false, options.fuse);
  // Kernels are final once memory is planned: bracket them for traces.
  if (options.instrumentKernels)
    pm.addPass(createInstrumentKernelsPass());
  // Library kernels replace linalg ops on final buffers (after
  // instrumentation, so a kernel's trace event covers its library call),
  // as the target's library choice says.
  UseOneDnnPassOptions useOneDnn;
  // The choice predicts the kernel our code would get.
  useOneDnn.tileAndVectorize = options.tileAndVectorize;
  pm.addPass(createUseOneDnnPass(useOneDnn));
  buildCpuLlvmLoweringPipeline(pm, options);
}

llvm::Error mlir::paddle::CompileOptions::check() const {
  return checkTargetChanges(target.getChanges());
}

llvm::Error mlir::paddle::CompileOptions::parse(llvm::StringRef text) {
  std::string message;
  llvm::raw_string_ostream os(message);
  if (failed(parseFromString(text, os)))
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   llvm::StringRef(message).trim());
  return check();
}

std::string mlir::paddle::CompileOptions::str() const {
  std::string text;
  llvm::raw_string_ostream os(text);
  print(os);
  // print() writes "{a=1 b=2}".
  return llvm::StringRef(text).trim().drop_front().drop_back().str();
}

void mlir::paddle::CompileOptions::forEachOption(
    llvm::function_ref<void(llvm::StringRef, llvm::StringRef, bool)> fn) const {
  std::vector<llvm::cl::Option *> options;
  for (const auto &entry : OptionsMap)
    options.push_back(entry.second);
  llvm::sort(options, [](llvm::cl::Option *a, llvm::cl::Option *b) {
    return a->ArgStr < b->ArgStr;
  });
  for (llvm::cl::Option *option : options)
    fn(option->ArgStr, option->HelpStr,
       option->getValueExpectedFlag() == llvm::cl::ValueOptional);
}

void mlir::paddle::buildCpuBufferPipeline(OpPassManager &pm, bool recordPlan,
                                          bool fuse) {
  // Equal paddle ops computed twice become one before fusion groups them
  // into regions CSE no longer sees into: a traced training step holds the
  // forward twice (once for the loss, once inside the gradient's trace),
  // 17 of the 65 matmuls of the benchmark's transformer step.
  pm.addPass(createCSEPass());
  // Layout and scalar rewrites (attention's head split, its q/k scales)
  // while the ops still say what they mean.
  pm.addNestedPass<func::FuncOp>(createSimplifyPass());
  // paddle -> linalg on tensors, cleaned up and fused: the cost model groups
  // the paddle ops (paddle-fuse), and each group becomes fused linalg ops or
  // a tile loop with its ops fused inside (paddle-lower-fusion).
  if (fuse)
    pm.addNestedPass<func::FuncOp>(createFusePass());
  pm.addPass(createConvertPaddleToLinalgPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  if (fuse)
    pm.addNestedPass<func::FuncOp>(createLowerFusionPass());
  else
    pm.addPass(createLinalgElementwiseOpFusionPass());

  // Tensors -> buffers. Function boundaries get plain row-major memrefs,
  // which is the runtime's calling convention.
  bufferization::OneShotBufferizePassOptions bufferize;
  bufferize.bufferizeFunctionBoundaries = true;
  bufferize.functionBoundaryTypeConversion =
      bufferization::LayoutMapOption::IdentityLayoutMap;
  pm.addPass(createDonateBuffersPass());
  // Bufferization's analysis is quadratic in the uses of a value within a
  // function: a long function is bufferized in parts (docs/compile-time.md,
  // "Scaling with the op count").
  pm.addPass(createSplitFunctionsPass());
  // Producers write straight into the buffers their results end up in
  // (donated arguments, slices of a concatenation) instead of a temporary.
  pm.addPass(bufferization::createEmptyTensorEliminationPass());
  pm.addPass(bufferization::createOneShotBufferizePass(bufferize));
  pm.addPass(createInlinePartsPass());
  pm.addPass(createDropDonatedResultsPass());
  // Tile loops of fused groups -> scf.parallel, which the LLVM lowering
  // spreads over the threads like every other parallel loop.
  pm.addNestedPass<func::FuncOp>(createForallToParallelPass());
  pm.addPass(createCanonicalizerPass());
  // Upstream's buffer-deallocation-pipeline, with paddle-split-deallocs
  // before its simplification (quadratic in the memrefs a block frees).
  memref::ExpandReallocPassOptions expandRealloc;
  expandRealloc.emitDeallocs = false;
  pm.addPass(memref::createExpandReallocPass(expandRealloc));
  pm.addPass(createCanonicalizerPass());
  pm.addPass(bufferization::createOwnershipBasedBufferDeallocationPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createSplitDeallocsPass());
  pm.addPass(bufferization::createBufferDeallocationSimplificationPass());
  pm.addPass(bufferization::createLowerDeallocationsPass());
  pm.addPass(createCSEPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createConvertBufferizationToMemRefPass());
  // Static temporaries -> one workspace per call at planned offsets.
  PlanMemoryPassOptions plan;
  plan.recordPlan = recordPlan;
  pm.addPass(createPlanMemoryPass(plan));
}

void mlir::paddle::buildCpuLlvmLoweringPipeline(OpPassManager &pm,
                                                const CompileOptions &options) {
  // Each kernel in a function of its own, and equal kernels (the same op
  // on the same shapes, as the repeated layers of a model make) kept once:
  // what follows runs once per distinct kernel, on small functions
  // (docs/compile-time.md, "Scaling with the op count").
  pm.addPass(createOutlineKernelsPass());
  pm.addPass(createDedupFunctionsPass());
  // Loops -> LLVM dialect. The parallel dims of each linalg op become one
  // scf.parallel (reduction dims stay sequential scf.for inside it), which
  // async-parallel-for splits into blocks that the runtime's thread pool
  // runs (runtime.h, "Threads"); the block count is asked from the runtime at
  // run time. Run-time checks sit before the loops, so they stay on the
  // calling thread.
  // Static f32 matmuls and elementwise ops first become tiled vector code
  // whose outer tile loop is an scf.parallel (docs/architecture.md,
  // "Tiling and vectorization").
  if (options.tileAndVectorize)
    pm.addNestedPass<func::FuncOp>(createTileAndVectorizePass());
  pm.addPass(createConvertLinalgToParallelLoopsPass());
  pm.addPass(paddle::createAsyncParallelForPass(getParallelForOptions()));
  pm.addPass(createAsyncToAsyncRuntimePass());
  // Equal kernels (the same op on the same shapes, as repeated blocks of a
  // model make) outline to equal functions: keep one of each, so LLVM
  // optimizes and compiles it once (docs/compile-time.md).
  pm.addPass(createDedupFunctionsPass());
  pm.addPass(createSCFToControlFlowPass());
  pm.addPass(createAsyncRuntimeRefCountingPass());
  pm.addPass(createAsyncRuntimeRefCountingOptPass());
  pm.addPass(createLowerRuntimeChecksPass());
  // Weights as flat byte arrays: cheap to translate to LLVM IR and to emit
  // (docs/compile-time.md). After paddle-use-onednn, which finds weights
  // through their get_globals.
  FlattenConstantGlobalsPassOptions flatten;
  flatten.maxBytes = options.flattenMaxBytes;
  pm.addPass(createFlattenConstantGlobalsPass(flatten));
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  arith::ArithExpandOpsPassOptions expand;
  expand.includeBf16 = true;
  pm.addPass(arith::createArithExpandOpsPass(expand));
  // Async runtime ops -> LLVM coroutines and calls to the runtime's async
  // ABI; LLVM's CoroSplit (in the JIT's and paddle-compile's optimizer)
  // lowers the coroutines.
  pm.addPass(createConvertAsyncToLLVMPass());
  // Allocations go through the runtime (paddle_aligned_alloc/paddle_free),
  // which bounds what one call may hold and reports running out of memory.
  // They ask for the alignment itself rather than rounding a malloc'd
  // pointer up: a result whose aligned pointer is its allocated one is
  // handed to the caller as is, any other is copied out (paddle_invoke).
  // With malloc, a 4 MiB result came back 16 bytes past a page and was
  // copied on every call: a 1M-element add took 0.33 ms instead of 0.17.
  FinalizeMemRefToLLVMConversionPassOptions memrefToLLVM;
  memrefToLLVM.useGenericFunctions = true;
  memrefToLLVM.useAlignedAlloc = true;
  pm.addPass(createFinalizeMemRefToLLVMConversionPass(memrefToLLVM));
  pm.addPass(createConvertMathToFuncs());
  pm.addPass(createConvertMathToLLVMPass());
  pm.addPass(createConvertMathToLibmPass());
  // Tiled vector code (paddle-tile-and-vectorize) -> LLVM vectors; its
  // vector.insert chains start from ub.poison. After math-to-libm, which
  // unrolls vector math without an LLVM intrinsic (erf, ...) into
  // vector.extract / vector.insert around scalar libm calls.
  // Reductions of a vector (the last step of a vectorized row reduction)
  // as a tree of lanewise ops rather than one lane after the other: the
  // row's sum is already reassociated (docs/fusion.md, "Vectorized
  // reductions").
  ConvertVectorToLLVMPassOptions vectorToLLVM;
  vectorToLLVM.reassociateFPReductions = true;
  pm.addPass(createConvertVectorToLLVMPass(vectorToLLVM));
  pm.addPass(createUBToLLVMConversionPass());
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createConvertControlFlowToLLVMPass());
  pm.addPass(createConvertFuncToLLVMPass());
  pm.addPass(createConvertIndexToLLVMPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
}

std::string mlir::paddle::getCpuPipelineText() {
  OpPassManager pm("builtin.module");
  buildCpuPipeline(pm);
  std::string text;
  llvm::raw_string_ostream os(text);
  pm.printAsTextualPipeline(os);
  return text;
}

void mlir::paddle::registerPipelines() {
  PassPipelineRegistration<>(
      "paddle-spmd-pipeline",
      "Partition a module with shardings into the program of one device of "
      "its mesh (what paddle-partition runs on a module with a shard.grid)",
      [](OpPassManager &pm) { buildSpmdPipeline(pm); });
  PassPipelineRegistration<CompileOptions>(
      "paddle-cpu-pipeline",
      "Lower paddle to the LLVM dialect for CPU execution (what paddle-run "
      "and paddle-compile run)",
      [](OpPassManager &pm, const CompileOptions &options) {
        buildCpuPipeline(pm, options);
      });

  struct MemoryReportOptions : public PassPipelineOptions<MemoryReportOptions> {
    Option<std::string> json{*this, "json",
                             llvm::cl::desc("Also write the plan as JSON to "
                                            "this file")};
  };
  PassPipelineRegistration<MemoryReportOptions>(
      "paddle-memory-report",
      "Plan the memory of a paddle-level model as the CPU pipeline does and "
      "print the plan (json=PATH also writes it as JSON)",
      [](OpPassManager &pm, const MemoryReportOptions &options) {
        buildCpuBufferPipeline(pm, /*recordPlan=*/true);
        PrintMemoryPlanPassOptions print;
        print.json = options.json;
        pm.addPass(createPrintMemoryPlanPass(print));
      });
}
