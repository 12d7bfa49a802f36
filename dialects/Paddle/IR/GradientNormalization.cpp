//===- GradientNormalization.cpp - gradient rules of softmax and norms ----===//
//
// The rules recompute the normalization's statistics with paddle ops rather
// than reading them out of the op, so the gradient functions stay made of
// differentiable paddle ops (grad-of-grad).
//
//===----------------------------------------------------------------------===//

#include "dialects/Paddle/IR/GradientUtils.h"

namespace mlir::paddle {

using Grads = SmallVectorImpl<Value>;

static int64_t softmaxAxis(int64_t axis, Value x) {
  int64_t rank = cast<RankedTensorType>(x.getType()).getRank();
  return axis < 0 ? axis + rank : axis;
}

static LogicalResult gradientOf(SoftmaxOp op, GradBuilder &gb,
                                ArrayRef<Value> rg, Grads &og) {
  // dx = y * (g - sum(g * y))
  Value g = rg[0], y = op.getResult();
  int64_t axis = softmaxAxis(op.getAxis(), op.getX());
  Value s = gb.reduceSum(gb.mul(g, y), {axis}, /*keepdims=*/true);
  og.push_back(gb.mul(y, gb.sub(g, s)));
  return success();
}

static LogicalResult gradientOf(LogSoftmaxOp op, GradBuilder &gb,
                                ArrayRef<Value> rg, Grads &og) {
  // dx = g - softmax(x) * sum(g), softmax(x) = exp(y)
  Value g = rg[0], y = op.getResult();
  int64_t axis = softmaxAxis(op.getAxis(), op.getX());
  Value s = gb.reduceSum(g, {axis}, /*keepdims=*/true);
  og.push_back(gb.sub(g, gb.mul(ExpOp::create(gb.b, gb.loc, y), s)));
  return success();
}

static LogicalResult gradientOf(LayerNormOp op, GradBuilder &gb,
                                ArrayRef<Value> rg, Grads &og) {
  Value g = rg[0], x = op.getX();
  SmallVector<int64_t> axes =
      reductionAxes(op.getAxes(), op.getX().getType().getRank());
  double eps = op.getEpsilon().convertToDouble();
  Value mean = gb.reduceMean(x, axes, /*keepdims=*/true);
  Value centered = gb.sub(x, mean);
  Value var = gb.reduceMean(gb.mul(centered, centered), axes, true);
  Value rstd = RsqrtOp::create(gb.b, gb.loc, gb.add(var, gb.scalar(var, eps)));
  Value xhat = gb.mul(centered, rstd);
  Value gxhat = op.getScale() ? gb.mul(g, op.getScale()) : g;
  // dx = rstd * (gxhat - mean(gxhat) - xhat * mean(gxhat * xhat))
  Value m1 = gb.reduceMean(gxhat, axes, true);
  Value m2 = gb.reduceMean(gb.mul(gxhat, xhat), axes, true);
  og.push_back(gb.mul(rstd, gb.sub(gb.sub(gxhat, m1), gb.mul(xhat, m2))));
  if (Value scale = op.getScale()) {
    FailureOr<Value> gs = gb.unbroadcast(gb.mul(g, xhat), scale);
    if (failed(gs))
      return failure();
    og.push_back(*gs);
  }
  if (Value bias = op.getBias()) {
    FailureOr<Value> gbias = gb.unbroadcast(g, bias);
    if (failed(gbias))
      return failure();
    og.push_back(*gbias);
  }
  return success();
}

static LogicalResult gradientOf(BatchNormInferenceOp op, GradBuilder &gb,
                                ArrayRef<Value> rg, Grads &og) {
  Value g = rg[0], x = op.getX();
  int64_t rank = op.getX().getType().getRank();
  // Per-channel parameters [C] broadcast as [1, C, 1, ...].
  SmallVector<int64_t> channelShape(rank, 1);
  channelShape[1] = op.getScale().getType().getDimSize(0);
  SmallVector<int64_t> otherAxes;
  for (int64_t i = 0; i < rank; ++i)
    if (i != 1)
      otherAxes.push_back(i);
  auto perChannel = [&](Value v) { return gb.reshape(v, channelShape); };
  double eps = op.getEpsilon().convertToDouble();
  Value var = op.getVariance();
  Value inv = RsqrtOp::create(gb.b, gb.loc, gb.add(var, gb.scalar(var, eps)));
  FailureOr<Value> scaleB = perChannel(op.getScale()),
                   meanB = perChannel(op.getMean()), invB = perChannel(inv);
  if (failed(scaleB) || failed(meanB) || failed(invB))
    return failure();
  Value centered = gb.sub(x, *meanB);
  Value sumG = gb.reduceSum(g, otherAxes, /*keepdims=*/false);
  Value sumGC = gb.reduceSum(gb.mul(g, centered), otherAxes, false);
  Value scale = op.getScale();
  og.push_back(gb.mul(g, gb.mul(*scaleB, *invB)));
  og.push_back(gb.mul(sumGC, inv));
  og.push_back(sumG);
  og.push_back(gb.neg(gb.mul(sumG, gb.mul(scale, inv))));
  // d rsqrt(v + eps) = -1/2 inv^3
  Value inv3 = gb.mul(gb.mul(inv, inv), inv);
  og.push_back(gb.mul(gb.mul(sumGC, scale), gb.mul(inv3, -0.5)));
  return success();
}

void attachNormalizationGradients(MLIRContext *ctx) {
  attachGradientModels<SoftmaxOp, LogSoftmaxOp, LayerNormOp,
                       BatchNormInferenceOp>(ctx);
}

} // namespace mlir::paddle
