//===- NormalizationOps.cpp - softmax and normalization paddle ops --------===//

#include "dialects/Paddle/IR/PaddleOps.h"

using namespace mlir;
using namespace mlir::paddle;
