//===- GradientShape.cpp - gradient rules of the data-movement ops --------===//
//
// Each rule moves the cotangent back where the elements came from: the
// inverse reshape or permutation, a sum over broadcast dims, zeros around a
// slice, slices of a concatenation or padding, and scatter_add / gather for
// gather / scatter_add (each other's transposes).
//
//===----------------------------------------------------------------------===//

#include "dialects/Paddle/IR/GradientUtils.h"

#include <limits>

namespace mlir::paddle {

using Grads = SmallVectorImpl<Value>;

static LogicalResult push(Grads &og, FailureOr<Value> g) {
  if (failed(g))
    return failure();
  og.push_back(*g);
  return success();
}

static LogicalResult gradientOf(ReshapeOp op, GradBuilder &gb,
                                ArrayRef<Value> rg, Grads &og) {
  return push(og, gb.reshape(rg[0], op.getX().getType().getShape()));
}

static LogicalResult gradientOf(BroadcastToOp op, GradBuilder &gb,
                                ArrayRef<Value> rg, Grads &og) {
  return push(og, gb.unbroadcast(rg[0], op.getX()));
}

static LogicalResult gradientOf(TransposeOp op, GradBuilder &gb,
                                ArrayRef<Value> rg, Grads &og) {
  ArrayRef<int64_t> perm = op.getPerm();
  SmallVector<int64_t> inverse(perm.size());
  for (auto [i, p] : llvm::enumerate(perm))
    inverse[p] = i;
  og.push_back(gb.transpose(rg[0], inverse));
  return success();
}

static LogicalResult gradientOf(SliceOp op, GradBuilder &gb, ArrayRef<Value> rg,
                                Grads &og) {
  return push(og, gb.unslice(rg[0], op.getX().getType(), op.getStart(),
                             op.getLimit(), op.getStride()));
}

static LogicalResult gradientOf(ConcatOp op, GradBuilder &gb,
                                ArrayRef<Value> rg, Grads &og) {
  auto resultType = op.getResult().getType();
  int64_t rank = resultType.getRank();
  int64_t axis = static_cast<int64_t>(op.getAxis());
  if (axis < 0)
    axis += rank;
  int64_t offset = 0;
  for (Value input : op.getInputs()) {
    int64_t size = cast<RankedTensorType>(input.getType()).getDimSize(axis);
    if (ShapedType::isDynamic(size))
      return emitError(gb.loc)
             << "gradient of concat needs static sizes along axis " << axis;
    SmallVector<int64_t> start(rank, 0), stride(rank, 1),
        limit(rank, std::numeric_limits<int64_t>::max());
    start[axis] = offset;
    limit[axis] = offset + size;
    og.push_back(gb.slice(rg[0], start, limit, stride));
    offset += size;
  }
  return success();
}

static LogicalResult gradientOf(PadOp op, GradBuilder &gb, ArrayRef<Value> rg,
                                Grads &og) {
  auto xType = op.getX().getType();
  SmallVector<int64_t> limit;
  for (auto [d, n] : llvm::enumerate(xType.getShape())) {
    if (!ShapedType::isDynamic(n)) {
      limit.push_back(op.getLow()[d] + n);
      continue;
    }
    if (op.getHigh()[d] != 0)
      return emitError(gb.loc) << "gradient of pad needs a static size in "
                                  "dim "
                               << d << ", which is padded at its end";
    limit.push_back(std::numeric_limits<int64_t>::max());
  }
  og.push_back(gb.slice(rg[0], op.getLow(), limit,
                        SmallVector<int64_t>(limit.size(), 1)));
  return success();
}

static LogicalResult gradientOf(GatherOp op, GradBuilder &gb,
                                ArrayRef<Value> rg, Grads &og) {
  // Indices normalize the same way in both ops, so in-range (and negative)
  // indices send each cotangent element back to the element it came from.
  Value zeros = gb.zerosLike(op.getX());
  og.push_back(ScatterAddOp::create(gb.b, gb.loc, zeros, op.getIndices(), rg[0],
                                    op.getAxisAttr()));
  og.push_back(nullptr);
  return success();
}

static LogicalResult gradientOf(ScatterAddOp op, GradBuilder &gb,
                                ArrayRef<Value> rg, Grads &og) {
  og.push_back(rg[0]);
  og.push_back(nullptr);
  og.push_back(
      GatherOp::create(gb.b, gb.loc, rg[0], op.getIndices(), op.getAxisAttr()));
  return success();
}

void attachShapeGradients(MLIRContext *ctx) {
  attachGradientModels<ReshapeOp, BroadcastToOp, TransposeOp, SliceOp, ConcatOp,
                       PadOp, GatherOp, ScatterAddOp>(ctx);
}

} // namespace mlir::paddle
