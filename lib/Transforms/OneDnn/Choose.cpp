//===- Choose.cpp - library call or our own loops, per op -----------------===//
//
// The cost-model half of paddle-use-onednn: for an op oneDNN can run, the
// predicted time of the library call (with the copies and reorders it
// brings or saves) against our own loops, scalar or tiled as the pipeline
// will compile them, on the device the pass's `device` option names
// (docs/onednn.md, "Choosing").
//
//===----------------------------------------------------------------------===//

#include "Choose.h"

#include "../TileAndVectorize.h"
#include "OneDnnMatch.h"
#include "paddle/CostModel/CostModel.h"

#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "paddle-use-onednn"

using namespace mlir;

namespace mlir::paddle::onednn {

/// Library call or our own loops for `op`, which oneDNN can run: the
/// path the cost model predicts faster on the target's device (docs/onednn.md,
/// "Choosing"), or oneDNN with `force` (library = onednn). A conv reorders its
/// activations on every call, and `weights` too unless they are constant
/// (`constantWeights`). Dynamic dims count as 1, which keeps such ops on
/// our loops unless the static dims alone make oneDNN pay.
/// `flopsPerIteration` counts the operations of one iteration of the
/// op's loops: 2 for the multiply-add of a contraction, 1 for a pooling's
/// maximum.
bool Choice::isWorthLibraryCall(linalg::LinalgOp op, bool conv, Value weights,
                                bool constantWeights, double copyBytes,
                                double flopsPerIteration) const {
  if (force)
    return true;
  if (!spec.onednn)
    return false;
  paddle::ContractionCost cost;
  cost.copyBytes = copyBytes;
  cost.flops =
      flopsPerIteration * double(staticProduct(op.getStaticLoopRanges()));
  for (Value v : op->getOperands())
    cost.bytes += bytesOf(v);
  if (cast<MemRefType>(op.getDpsInputs()[0].getType())
          .getElementType()
          .isBF16())
    cost.inputType = paddle::SpecDType::BF16;
  if (conv) {
    cost.reorderBytes =
        bytesOf(op.getDpsInputs()[0]) + bytesOf(op.getDpsInits()[0]);
    if (!constantWeights)
      cost.reorderBytes += bytesOf(weights);
  }
  cost.tiled = tileAndVectorize && paddle::isTiledMatmul(op, vectorBits);
  std::optional<paddle::PathEstimate> t = paddle::estimatePaths(cost, spec);
  if (!t)
    return false;
  LLVM_DEBUG(llvm::dbgs() << "paddle-use-onednn: " << op->getName() << " "
                          << cost.flops << " FLOPs, "
                          << (cost.tiled ? "tiled" : "scalar") << ": onednn "
                          << t->librarySeconds * 1e6 << " us, codegen "
                          << t->codegenSeconds * 1e6 << " us\n");
  return t->libraryIsFaster();
}

} // namespace mlir::paddle::onednn
