//===- NNOps.cpp - matmul, convolution, pooling, random numbers -----------===//

#include "dialects/Paddle/IR/PaddleOps.h"

#include <cmath>

using namespace mlir;
using namespace mlir::paddle;

//===----------------------------------------------------------------------===//
// Pooling
//===----------------------------------------------------------------------===//

/// A 1x1 window with stride 1 and no padding reads each element once, so
/// both poolings are the identity (the average divides by 1).
template <typename OpTy> static OpFoldResult foldIdentityPool(OpTy op) {
  auto isOnes = [](ArrayRef<int64_t> v) {
    return llvm::all_of(v, [](int64_t x) { return x == 1; });
  };
  if (op.getKernel().size() == 2 && isOnes(op.getKernel()) &&
      isOnes(op.getStrides()) &&
      llvm::all_of(op.getPadding(), [](int64_t x) { return x == 0; }) &&
      op.getInput().getType() == op.getType())
    return op.getInput();
  return {};
}

OpFoldResult MaxPool2DOp::fold(FoldAdaptor) { return foldIdentityPool(*this); }
OpFoldResult AvgPool2DOp::fold(FoldAdaptor) { return foldIdentityPool(*this); }

//===----------------------------------------------------------------------===//
// RngUniformOp
//===----------------------------------------------------------------------===//

LogicalResult RngUniformBlockOp::verify() {
  RankedTensorType type = getType();
  ArrayRef<int64_t> whole = getWholeShape();
  if (!type.hasStaticShape())
    return emitOpError("needs a static result shape, got ") << type;
  if (static_cast<int64_t>(whole.size()) != type.getRank() ||
      static_cast<int64_t>(getOffsets().size()) != type.getRank())
    return emitOpError("expects one offset and one whole size per dim of ")
           << type << ": " << getOffsets().size() << " offsets, "
           << whole.size() << " whole sizes";
  for (auto [d, size] : llvm::enumerate(whole))
    if (size < type.getDimSize(d))
      return emitOpError("whole dim ")
             << d << " of size " << size << " is smaller than the block's "
             << type.getDimSize(d);
  double low = getLow().convertToDouble(), high = getHigh().convertToDouble();
  if (!std::isfinite(low) || !std::isfinite(high) || low > high)
    return emitOpError("low and high must be finite with low <= high, got ")
           << low << " and " << high;
  return success();
}

LogicalResult RngUniformOp::verify() {
  RankedTensorType type = getType();
  if (getDynamicSizes().size() != type.getNumDynamicDims())
    return emitOpError("expects one size operand per dynamic dim: ")
           << type.getNumDynamicDims() << " dynamic dims, "
           << getDynamicSizes().size() << " sizes";
  double low = getLow().convertToDouble(), high = getHigh().convertToDouble();
  if (!std::isfinite(low) || !std::isfinite(high))
    return emitOpError("low and high must be finite, got ")
           << low << " and " << high;
  if (low > high)
    return emitOpError("low (")
           << low << ") must not exceed high (" << high << ")";
  return success();
}
