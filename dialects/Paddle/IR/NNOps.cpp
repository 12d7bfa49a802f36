//===- NNOps.cpp - NN paddle ops ------------------------------------===//

#include "dialects/Paddle/IR/PaddleOps.h"

using namespace mlir;
using namespace mlir::paddle;
