//===- AsyncParallelFor.cpp - async-parallel-for with per-loop block size -===//
//
// Upstream's async-parallel-for takes one minimum block size for every loop.
// That suits loops over elements, but a loop over matmul tiles has few,
// large iterations and must still be split. Here a loop may carry its own
// minimum (`paddle.min_task_size`); the lowering itself is upstream's.
//
// The minimum also works around a bug of upstream's lowering (LLVM 22): for a
// multi-dimensional loop whose inner trip counts are static, it rounds the
// block size up to a multiple of the inner iterations but keeps the block
// count of the unrounded size, so the last blocks start past the end, wrap
// around (the start index is taken modulo the trip counts) and run rows a
// second time. That is only wasted work for a loop that writes each element
// once from inputs it does not write, and wrong results for one that
// accumulates into its output (a row reduction) or updates in place. The
// minimum returned here is already such a multiple, and at least the block
// size upstream computes, so the rounding changes nothing.
//
// A loop inside another one's body (the loops of the ops in a fused group's
// tile, an elementwise op tiled inside it) runs sequentially on the thread
// that runs its block: the outer loop already spreads the work over the
// threads, and dispatching every inner loop from inside a task cost more
// than its work (a fused residual add + layer norm over 128x768 took 80 us
// on 1 thread and on 2; docs/architecture.md, "Threads").
//
//===----------------------------------------------------------------------===//

#include "dialects/Paddle/IR/PaddleOps.h"
#include "paddle/Transforms/Passes.h"

#include "Outlining.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Async/IR/Async.h"
#include "mlir/Dialect/Async/Transforms.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/Transforms.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/ADT/MapVector.h"

namespace mlir::paddle {
#define GEN_PASS_DEF_ASYNCPARALLELFORPASS
#include "paddle/Transforms/Passes.h.inc"
} // namespace mlir::paddle

using namespace mlir;

/// The multiple upstream rounds a block size of `op` up to: the iterations
/// of its innermost dims, over the longest run of inner dims (not the
/// outermost) whose trip counts are static with a product of at most 512.
/// 1 where there is no such run (a 1-D loop, a dynamic innermost dim).
static int64_t alignedInnerIterations(scf::ParallelOp op) {
  int64_t product = 1;
  for (unsigned i = op.getNumLoops() - 1; i >= 1; --i) {
    std::optional<int64_t> lb = getConstantIntValue(op.getLowerBound()[i]),
                           ub = getConstantIntValue(op.getUpperBound()[i]),
                           step = getConstantIntValue(op.getStep()[i]);
    if (!lb || !ub || !step || *step <= 0 || *ub <= *lb)
      break;
    int64_t trips = llvm::divideCeil(*ub - *lb, *step);
    if (product * trips > 512)
      break;
    product *= trips;
  }
  return product;
}

/// The block size upstream would pick before its rounding, at least `size`:
/// the trip count over the number of blocks it aims for (the worker count
/// times an oversharding factor, as in mlir/lib/Dialect/Async/Transforms/
/// AsyncParallelFor.cpp of LLVM 22), rounded up to a multiple of `align`.
static Value buildAlignedMinTaskSize(ImplicitLocOpBuilder &b,
                                     scf::ParallelOp op, int64_t size,
                                     int64_t align, int32_t numWorkerThreads) {
  Value tripCount;
  for (unsigned i = 0; i < op.getNumLoops(); ++i) {
    Value range = b.createOrFold<arith::SubIOp>(op.getUpperBound()[i],
                                                op.getLowerBound()[i]);
    Value trips = b.createOrFold<arith::CeilDivSIOp>(range, op.getStep()[i]);
    tripCount =
        tripCount ? b.createOrFold<arith::MulIOp>(tripCount, trips) : trips;
  }
  Value workers =
      numWorkerThreads >= 0
          ? Value(arith::ConstantIndexOp::create(b, numWorkerThreads))
          : Value(async::RuntimeNumWorkerThreadsOp::create(b));
  // Oversharding: 8 blocks per worker up to 4 workers, then 4, 2, 1, 0.8,
  // 0.6 above 4, 8, 16, 32 and 64 workers.
  Value factor =
      arith::ConstantFloatOp::create(b, b.getF32Type(), llvm::APFloat(8.0f));
  for (auto [above, scale] : {std::pair<int64_t, float>{4, 4.0f},
                              {8, 2.0f},
                              {16, 1.0f},
                              {32, 0.8f},
                              {64, 0.6f}}) {
    Value more =
        arith::CmpIOp::create(b, arith::CmpIPredicate::sgt, workers,
                              arith::ConstantIndexOp::create(b, above));
    factor = arith::SelectOp::create(
        b, more,
        arith::ConstantFloatOp::create(b, b.getF32Type(), llvm::APFloat(scale)),
        factor);
  }
  Value workersF = arith::SIToFPOp::create(
      b, b.getF32Type(),
      arith::IndexCastOp::create(b, b.getI32Type(), workers));
  Value blocks = arith::IndexCastOp::create(
      b, b.getIndexType(),
      arith::FPToSIOp::create(b, b.getI32Type(),
                              arith::MulFOp::create(b, factor, workersF)));
  blocks =
      arith::MaxSIOp::create(b, blocks, arith::ConstantIndexOp::create(b, 1));
  Value blockSize = arith::MaxSIOp::create(
      b, arith::CeilDivSIOp::create(b, tripCount, blocks),
      arith::ConstantIndexOp::create(b, size));
  Value alignValue = arith::ConstantIndexOp::create(b, align);
  return arith::MulIOp::create(
      b, arith::CeilDivSIOp::create(b, blockSize, alignValue), alignValue);
}

namespace {
/// Gives each function that upstream's patterns insert into the scratch
/// module a name unique in the whole module as soon as it is inserted, so
/// that the calls upstream builds to it afterwards use that name.
struct RenameOutlined : RewriterBase::Listener {
  RenameOutlined(ModuleOp scratch, paddle::SymbolNamer &namer)
      : scratch(scratch), namer(namer) {}

  void notifyOperationInserted(Operation *op,
                               OpBuilder::InsertPoint previous) override {
    auto func = dyn_cast<func::FuncOp>(op);
    if (func && op->getParentOp() == scratch.getOperation())
      func.setSymName(namer.unique(func.getSymName()));
  }

  ModuleOp scratch;
  paddle::SymbolNamer &namer;
};

struct AsyncParallelForPass
    : paddle::impl::AsyncParallelForPassBase<AsyncParallelForPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<scf::ParallelOp> nested;
    module->walk([&](scf::ParallelOp op) {
      if (op.getNumResults() == 0 && op->getParentOfType<scf::ParallelOp>())
        nested.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    for (scf::ParallelOp op : nested) {
      rewriter.setInsertionPoint(op);
      if (failed(scf::parallelForToNestedFors(rewriter, op)))
        return signalPassFailure();
    }
    int64_t defaultSize = minTaskSize;
    int32_t workers = numWorkerThreads;
    RewritePatternSet patterns(&getContext());
    async::populateAsyncParallelForPatterns(
        patterns, asyncDispatch, numWorkerThreads,
        [defaultSize, workers](ImplicitLocOpBuilder builder,
                               scf::ParallelOp op) -> Value {
          int64_t size = defaultSize;
          if (auto attr = op->getAttrOfType<IntegerAttr>(
                  paddle::PaddleDialect::MinTaskSizeAttrHelper::getNameStr()))
            size = std::max<int64_t>(1, attr.getInt());
          int64_t align = alignedInnerIterations(op);
          if (align <= 1)
            return arith::ConstantIndexOp::create(builder, size);
          return buildAlignedMinTaskSize(builder, op, size, align, workers);
        });
    FrozenRewritePatternSet frozen(std::move(patterns));

    // Upstream's pattern builds a symbol table of the whole module for each
    // function it outlines, and the block-count branches and async groups
    // it leaves in place of a loop make the caller's CFG and its reference
    // counting grow with every loop: a function of n loops compiled in
    // O(n^2) (docs/compile-time.md, "Scaling with the op count"). So the
    // pattern runs on a scratch module holding one function at a time: a
    // function of one loop (a kernel of paddle-outline-kernels) goes there
    // as it is; from a function of several, each loop first moves into a
    // function of its own, a call in its place. Only loops the pattern
    // rewrites (no reductions) count.
    llvm::MapVector<Operation *, SmallVector<scf::ParallelOp>> loopsOf;
    module->walk([&](scf::ParallelOp op) {
      if (op.getNumReductions() != 0)
        return;
      Operation *func = op;
      while (func->getParentOp() != module.getOperation())
        func = func->getParentOp();
      loopsOf[func].push_back(op);
    });
    if (loopsOf.empty())
      return;
    paddle::SymbolNamer namer(module);
    OwningOpRef<ModuleOp> scratch = ModuleOp::create(module.getLoc());
    RenameOutlined rename(*scratch, namer);
    GreedyRewriteConfig config;
    config.setListener(&rename);
    Block *body = module.getBody();
    auto rewrite = [&]() -> LogicalResult {
      if (failed(applyPatternsGreedily(*scratch, frozen, config)))
        return failure();
      for (Operation &op : llvm::make_early_inc_range(*scratch->getBody()))
        op.moveBefore(body, body->end());
      return success();
    };
    for (auto &[func, loops] : loopsOf) {
      if (loops.size() == 1) {
        Operation *next = func->getNextNode();
        func->moveBefore(scratch->getBody(), scratch->getBody()->end());
        if (failed(rewrite()))
          return signalPassFailure();
        // Back where it was; what upstream outlined stays at the end.
        if (next)
          func->moveBefore(next);
        continue;
      }
      for (scf::ParallelOp loop : loops) {
        paddle::outlineIntoFunction(loop.getOperation(), *scratch,
                                    namer.unique("parallel_for_fn"),
                                    [](Value) { return true; });
        if (failed(rewrite()))
          return signalPassFailure();
      }
    }
  }
};
} // namespace
