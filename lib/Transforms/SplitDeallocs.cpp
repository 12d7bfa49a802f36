//===- SplitDeallocs.cpp - one dealloc per fresh allocation ---------------===//
//
// The ownership-based deallocation pass frees everything a block owns in
// one bufferization.dealloc at its end: in the entry block of a long
// function, one op with a memref per intermediate result. Upstream's
// buffer-deallocation-simplification then asks the alias analysis about
// every pair of them before splitting the op into one dealloc per memref
// that aliases no other: 5,333 memrefs (an 8,000-op chain) took 15 s.
// Two distinct memref.alloc / memref.alloca results never alias, so this
// pass splits those off first, the same way that pattern does, asking the
// alias analysis only about the other memrefs of the op.
//
//===----------------------------------------------------------------------===//

#include "paddle/Transforms/Passes.h"

#include "mlir/Analysis/AliasAnalysis.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/DenseSet.h"

#define DEBUG_TYPE "paddle-split-deallocs"

namespace mlir::paddle {
#define GEN_PASS_DEF_SPLITDEALLOCSPASS
#include "paddle/Transforms/Passes.h.inc"
} // namespace mlir::paddle

using namespace mlir;

static bool isFreshAllocation(Value memref) {
  return memref.getDefiningOp<memref::AllocOp>() ||
         memref.getDefiningOp<memref::AllocaOp>();
}

namespace {
struct SplitDeallocsPass
    : paddle::impl::SplitDeallocsPassBase<SplitDeallocsPass> {
  void runOnOperation() override {
    SmallVector<bufferization::DeallocOp> deallocs;
    getOperation()->walk(
        [&](bufferization::DeallocOp op) { deallocs.push_back(op); });
    AliasAnalysis &aliasAnalysis = getAnalysis<AliasAnalysis>();
    IRRewriter rewriter(&getContext());
    for (bufferization::DeallocOp op : deallocs) {
      ValueRange memrefs = op.getMemrefs();
      if (memrefs.size() < 2)
        continue;
      // A memref listed twice aliases itself; the others than fresh
      // allocations are checked one by one.
      llvm::DenseSet<Value> seen, repeated;
      SmallVector<Value> others;
      for (Value memref : memrefs) {
        if (!seen.insert(memref).second)
          repeated.insert(memref);
        if (!isFreshAllocation(memref))
          others.push_back(memref);
      }
      auto aliasesNoOther = [&](Value memref) {
        return isFreshAllocation(memref) && !repeated.contains(memref) &&
               llvm::all_of(others, [&](Value other) {
                 return aliasAnalysis.alias(memref, other).isNo();
               });
      };

      Location loc = op.getLoc();
      rewriter.setInsertionPoint(op);
      SmallVector<Value> remainingMemrefs, remainingConditions;
      SmallVector<SmallVector<Value>> splitConditions;
      for (auto [memref, condition] :
           llvm::zip_equal(memrefs, op.getConditions())) {
        if (!aliasesNoOther(memref)) {
          remainingMemrefs.push_back(memref);
          remainingConditions.push_back(condition);
          continue;
        }
        auto split = bufferization::DeallocOp::create(
            rewriter, loc, memref, condition, op.getRetained());
        splitConditions.push_back(split.getUpdatedConditions());
      }
      if (splitConditions.empty())
        continue;
      auto remaining = bufferization::DeallocOp::create(
          rewriter, loc, remainingMemrefs, remainingConditions,
          op.getRetained());
      // A retained memref is owned afterwards if any of the ops says so.
      SmallVector<Value> updated = remaining.getUpdatedConditions();
      for (ArrayRef<Value> conditions : splitConditions)
        for (auto [result, condition] : llvm::zip_equal(updated, conditions))
          result = rewriter.createOrFold<arith::OrIOp>(loc, result, condition);
      rewriter.replaceOp(op, updated);
    }
  }
};
} // namespace
