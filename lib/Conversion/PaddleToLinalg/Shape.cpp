//===- Shape.cpp - lower Shape paddle ops
//----------------------------------===//

#include "LoweringUtils.h"
#include "dialects/Paddle/IR/PaddleOps.h"
#include "paddle/Conversion/Passes.h"

#include "mlir/Transforms/DialectConversion.h"

using namespace mlir;
using namespace mlir::paddle;

void mlir::paddle::populateShapeToLinalgPatterns(RewritePatternSet &patterns) {}
