//===- ReductionOps.cpp - Reduction paddle ops
//------------------------------------===//

#include "dialects/Paddle/IR/PaddleOps.h"

using namespace mlir;
using namespace mlir::paddle;
