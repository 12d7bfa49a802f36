//===- NormalizationOps.cpp - softmax and normalization paddle ops --------===//
//
// Result types are inferred in TypeInference.cpp; what remains here are the
// checks of attributes that do not affect the result type.
//
//===----------------------------------------------------------------------===//

#include "dialects/Paddle/IR/PaddleOps.h"

#include <cmath>

using namespace mlir;
using namespace mlir::paddle;

/// A negative or non-finite epsilon would turn the result into NaN (or
/// divide by zero) for constant inputs, so it is rejected up front.
static LogicalResult verifyEpsilon(Operation *op, APFloat epsilon) {
  double eps = epsilon.convertToDouble();
  if (!std::isfinite(eps) || eps < 0)
    return op->emitOpError("epsilon must be finite and non-negative, got ")
           << eps;
  return success();
}

LogicalResult LayerNormOp::verify() {
  return verifyEpsilon(*this, getEpsilon());
}

LogicalResult BatchNormInferenceOp::verify() {
  return verifyEpsilon(*this, getEpsilon());
}
