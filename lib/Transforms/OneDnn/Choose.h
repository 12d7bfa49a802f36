//===- Choose.h - library call or our own loops, per op ----------*- C++-*-===//
//
// The choice paddle-use-onednn makes for each op oneDNN can run: the cost
// model's prediction for the device the `device` option names, or the
// library with `force`. Kept apart from the rewrites (UseOneDnn.cpp), as
// IREE keeps choosing library kernels apart from lowering into calls.
//
//===----------------------------------------------------------------------===//

#ifndef PADDLE_TRANSFORMS_ONEDNN_CHOOSE_H
#define PADDLE_TRANSFORMS_ONEDNN_CHOOSE_H

#include "paddle/CostModel/DeviceSpec.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"

namespace mlir::paddle::onednn {

/// What the choice depends on: the pass's options and the device.
struct Choice {
  /// The device the choice is made for (the `device` option).
  DeviceSpec spec;
  /// Every supported op goes to the library (the `force` option).
  bool force = false;
  /// Our loops get the tiled matmul kernel where it applies (the
  /// `tile-and-vectorize` option), for the register width `vectorBits`
  /// (0: the host CPU's).
  bool tileAndVectorize = true;
  int64_t vectorBits = 0;

  bool isWorthLibraryCall(linalg::LinalgOp op, bool conv, Value weights,
                          bool constantWeights, double copyBytes = 0,
                          double flopsPerIteration = 2) const;
};

} // namespace mlir::paddle::onednn

#endif // PADDLE_TRANSFORMS_ONEDNN_CHOOSE_H
