//===- ForallToParallel.cpp - scf.forall -> scf.parallel, attributes kept -===//
//
// Upstream's conversion (scf::forallToParallelLoop) builds a new loop; the
// discardable attributes of the old one (paddle.min_task_size) are copied
// over, so the passes after bufferization still see them.
//
//===----------------------------------------------------------------------===//

#include "paddle/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/Transforms.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::paddle {
#define GEN_PASS_DEF_FORALLTOPARALLELPASS
#include "paddle/Transforms/Passes.h.inc"
} // namespace mlir::paddle

using namespace mlir;

namespace {
struct ForallToParallelPass
    : paddle::impl::ForallToParallelPassBase<ForallToParallelPass> {
  void runOnOperation() override {
    SmallVector<scf::ForallOp> loops;
    getOperation().walk([&](scf::ForallOp op) { loops.push_back(op); });
    IRRewriter rewriter(&getContext());
    for (scf::ForallOp forall : loops) {
      SmallVector<NamedAttribute> kept(forall->getDiscardableAttrs());
      rewriter.setInsertionPoint(forall);
      scf::ParallelOp parallel;
      if (failed(scf::forallToParallelLoop(rewriter, forall, &parallel))) {
        forall.emitError("paddle-forall-to-parallel: cannot convert the loop "
                         "(it has results)");
        return signalPassFailure();
      }
      for (NamedAttribute attr : kept)
        parallel->setAttr(attr.getName(), attr.getValue());
    }
  }
};
} // namespace
