//===- GradientReduction.cpp - gradient rules of the reductions -----------===//
//
// The cotangent of a reduction is expanded back over the reduced dims. max
// and min share it evenly among the elements that tie for the extremum, so
// the rule is the average of the one-sided derivatives at ties.
//
//===----------------------------------------------------------------------===//

#include "dialects/Paddle/IR/GradientUtils.h"

namespace mlir::paddle {

using Grads = SmallVectorImpl<Value>;

template <typename OpTy> static SmallVector<int64_t> axesOf(OpTy op) {
  return reductionAxes(op.getAxes(), op.getX().getType().getRank());
}

static LogicalResult push(Grads &og, FailureOr<Value> g) {
  if (failed(g))
    return failure();
  og.push_back(*g);
  return success();
}

static LogicalResult gradientOf(ReduceSumOp op, GradBuilder &gb,
                                ArrayRef<Value> rg, Grads &og) {
  return push(og,
              gb.expandReduced(rg[0], op.getX(), axesOf(op), op.getKeepdims()));
}

static LogicalResult gradientOf(ReduceMeanOp op, GradBuilder &gb,
                                ArrayRef<Value> rg, Grads &og) {
  SmallVector<int64_t> axes = axesOf(op);
  int64_t count = 1;
  for (int64_t a : axes) {
    int64_t n = op.getX().getType().getDimSize(a);
    if (ShapedType::isDynamic(n))
      return emitError(gb.loc)
             << "gradient of reduce_mean needs a static size in dim " << a;
    count *= n;
  }
  Value scaled = gb.mul(rg[0], 1.0 / static_cast<double>(count));
  return push(og, gb.expandReduced(scaled, op.getX(), axes, op.getKeepdims()));
}

static LogicalResult gradientOf(ReduceProdOp op, GradBuilder &gb,
                                ArrayRef<Value> rg, Grads &og) {
  // d prod / d x_i = prod / x_i (needs non-zero elements).
  FailureOr<Value> e = gb.expandReduced(
      gb.mul(rg[0], op.getResult()), op.getX(), axesOf(op), op.getKeepdims());
  if (failed(e))
    return failure();
  og.push_back(gb.div(*e, op.getX()));
  return success();
}

template <typename OpTy>
static LogicalResult extremumGradient(OpTy op, GradBuilder &gb,
                                      ArrayRef<Value> rg, Grads &og) {
  SmallVector<int64_t> axes = axesOf(op);
  Value x = op.getX();
  FailureOr<Value> y =
      gb.expandReduced(op.getResult(), x, axes, op.getKeepdims());
  FailureOr<Value> g = gb.expandReduced(rg[0], x, axes, op.getKeepdims());
  if (failed(y) || failed(g))
    return failure();
  Type et = op.getX().getType().getElementType();
  Value hits = gb.convert(gb.compare(CompareDirection::EQ, x, *y), et);
  Value count = gb.reduceSum(hits, axes, /*keepdims=*/true);
  og.push_back(gb.div(gb.mul(*g, hits), count));
  return success();
}

static LogicalResult gradientOf(ReduceMaxOp op, GradBuilder &gb,
                                ArrayRef<Value> rg, Grads &og) {
  return extremumGradient(op, gb, rg, og);
}

static LogicalResult gradientOf(ReduceMinOp op, GradBuilder &gb,
                                ArrayRef<Value> rg, Grads &og) {
  return extremumGradient(op, gb, rg, og);
}

void attachReductionGradients(MLIRContext *ctx) {
  attachGradientModels<ReduceSumOp, ReduceMeanOp, ReduceProdOp, ReduceMaxOp,
                       ReduceMinOp>(ctx);
}

} // namespace mlir::paddle
