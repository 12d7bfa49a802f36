//===- Choose.h - library call or our own loops, per op ----------*- C++-*-===//
//
// The choice paddle-use-onednn makes for each op oneDNN can run: the cost
// model's prediction for the device of the module's target, or the library
// when the target says `library = onednn`. Kept apart from the rewrites
// (UseOneDnn.cpp), as IREE keeps choosing library kernels apart from lowering
// into calls.
//
//===----------------------------------------------------------------------===//

#ifndef PADDLE_TRANSFORMS_ONEDNN_CHOOSE_H
#define PADDLE_TRANSFORMS_ONEDNN_CHOOSE_H

#include "paddle/CostModel/DeviceSpec.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"

namespace mlir::paddle::onednn {

/// What the choice depends on: the module's target and the pass's options.
struct Choice {
  /// The device the choice is made for (the target's spec).
  DeviceSpec spec;
  /// Every supported op goes to the library (library = onednn).
  bool force = false;
  /// Our loops get the tiled matmul kernel where it applies (the
  /// `tile-and-vectorize` option), for the register width `vectorBits`
  /// (the target's).
  bool tileAndVectorize = true;
  int64_t vectorBits = 512;

  bool isWorthLibraryCall(linalg::LinalgOp op, bool conv, Value weights,
                          bool constantWeights, double copyBytes = 0,
                          double flopsPerIteration = 2) const;
};

} // namespace mlir::paddle::onednn

#endif // PADDLE_TRANSFORMS_ONEDNN_CHOOSE_H
