//===- FusionOps.cpp - paddle.fusion and paddle.yield ---------------------===//

#include "dialects/Paddle/IR/PaddleOps.h"

using namespace mlir;
using namespace mlir::paddle;

YieldOp FusionOp::getYield() {
  return cast<YieldOp>(getBody().front().getTerminator());
}

LogicalResult FusionOp::verify() {
  // The patterns paddle-fuse forms groups around (docs/fusion.md).
  static constexpr llvm::StringLiteral kinds[] = {
      "elementwise", "reduction", "softmax", "layer_norm", "matmul", "conv"};
  if (!llvm::is_contained(kinds, getKind()))
    return emitOpError() << "has unknown kind \"" << getKind()
                         << "\"; expected one of elementwise, reduction, "
                            "softmax, layer_norm, matmul, conv";
  Block &body = getBody().front();
  if (body.getNumArguments() != getInputs().size())
    return emitOpError() << "has " << getInputs().size()
                         << " inputs but its body takes "
                         << body.getNumArguments() << " arguments";
  for (auto [i, input, arg] : llvm::enumerate(getInputs(), body.getArguments()))
    if (input.getType() != arg.getType())
      return emitOpError() << "input " << i << " has type " << input.getType()
                           << " but body argument " << i << " has type "
                           << arg.getType();
  YieldOp yield = getYield();
  if (yield.getValues().getTypes() != getResultTypes())
    return emitOpError() << "yields " << yield.getValues().getTypes()
                         << " but its results are " << getResultTypes();
  return success();
}
