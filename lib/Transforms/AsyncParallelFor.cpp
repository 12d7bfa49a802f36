//===- AsyncParallelFor.cpp - async-parallel-for with per-loop block size -===//
//
// Upstream's async-parallel-for takes one minimum block size for every loop.
// That suits loops over elements, but a loop over matmul tiles has few,
// large iterations and must still be split. Here a loop may carry its own
// minimum (`paddle.min_task_size`); the lowering itself is upstream's.
//
//===----------------------------------------------------------------------===//

#include "paddle/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Async/IR/Async.h"
#include "mlir/Dialect/Async/Transforms.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::paddle {
#define GEN_PASS_DEF_ASYNCPARALLELFORPASS
#include "paddle/Transforms/Passes.h.inc"
} // namespace mlir::paddle

using namespace mlir;

/// Set by paddle-tile-and-vectorize on the loops it makes.
static constexpr llvm::StringLiteral kMinTaskSizeAttr = "paddle.min_task_size";

namespace {
struct AsyncParallelForPass
    : paddle::impl::AsyncParallelForPassBase<AsyncParallelForPass> {
  using Base::Base;

  void runOnOperation() override {
    int64_t defaultSize = minTaskSize;
    RewritePatternSet patterns(&getContext());
    async::populateAsyncParallelForPatterns(
        patterns, asyncDispatch, numWorkerThreads,
        [defaultSize](ImplicitLocOpBuilder builder, scf::ParallelOp op) {
          int64_t size = defaultSize;
          if (auto attr = op->getAttrOfType<IntegerAttr>(kMinTaskSizeAttr))
            size = std::max<int64_t>(1, attr.getInt());
          return arith::ConstantIndexOp::create(builder, size);
        });
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace
