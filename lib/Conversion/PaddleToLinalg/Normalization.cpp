//===- Normalization.cpp - lower softmax and normalization paddle ops -----===//
//
// Statistics (max, sum, mean, variance) are reductions over the normalized
// dims into tensors of the kept dims, computed in f32 for f16/bf16. They are
// then expanded back to size-1 dims and combined with x by one broadcasting
// elementwise linalg.generic, which also applies scale and bias.
//
//===----------------------------------------------------------------------===//

#include "LoweringUtils.h"
#include "dialects/Paddle/IR/PaddleOps.h"
#include "paddle/Conversion/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/DialectConversion.h"

using namespace mlir;
using namespace mlir::paddle;

namespace {

Value cst(OpBuilder &b, Location loc, Type t, double v) {
  return buildScalarConstant(b, loc, t, v);
}

/// Reduces `x` over `dims` into a tensor of the kept dims, starting from
/// `initValue`. `keptInputs` (tensors of the kept dims) are read at the
/// current kept position; `body(x, kept..., acc)` gives the new accumulator.
Value buildStatistic(
    OpBuilder &b, Location loc, Value x, ArrayRef<int64_t> dims,
    ValueRange keptInputs, Value initValue,
    function_ref<Value(OpBuilder &, Location, ValueRange)> body) {
  auto xt = cast<RankedTensorType>(x.getType());
  int64_t rank = xt.getRank();
  SmallVector<int64_t> shape;
  SmallVector<Value> dyn;
  SmallVector<AffineExpr> kept;
  SmallVector<utils::IteratorType> iterators;
  for (int64_t d = 0; d < rank; ++d) {
    if (llvm::is_contained(dims, d)) {
      iterators.push_back(utils::IteratorType::reduction);
      continue;
    }
    iterators.push_back(utils::IteratorType::parallel);
    kept.push_back(b.getAffineDimExpr(d));
    shape.push_back(xt.getDimSize(d));
    if (xt.isDynamicDim(d))
      dyn.push_back(tensor::DimOp::create(b, loc, x, d));
  }
  auto type = RankedTensorType::get(shape, initValue.getType());
  Value empty = buildEmpty(b, loc, type, dyn);
  Value init =
      linalg::FillOp::create(b, loc, ValueRange{initValue}, ValueRange{empty})
          .getResult(0);
  AffineMap keptMap = AffineMap::get(rank, 0, kept, b.getContext());
  SmallVector<AffineMap> maps{b.getMultiDimIdentityMap(rank)};
  maps.append(keptInputs.size() + 1, keptMap);
  SmallVector<Value> inputs{x};
  inputs.append(keptInputs.begin(), keptInputs.end());
  auto generic = linalg::GenericOp::create(
      b, loc, TypeRange{type}, inputs, ValueRange{init}, maps, iterators,
      [&](OpBuilder &nb, Location nloc, ValueRange args) {
        linalg::YieldOp::create(nb, nloc, body(nb, nloc, args));
      });
  return generic.getResult(0);
}

/// Replaces `op` by `v`, casting to the written result type when it is more
/// or less static than the type of x.
void replaceWithCast(ConversionPatternRewriter &rewriter, Operation *op,
                     Value v) {
  Type resultType = op->getResult(0).getType();
  if (v.getType() != resultType)
    v = tensor::CastOp::create(rewriter, op->getLoc(), resultType, v);
  rewriter.replaceOp(op, v);
}

template <typename OpTy> struct SoftmaxLowering : OpConversionPattern<OpTy> {
  using OpConversionPattern<OpTy>::OpConversionPattern;
  static constexpr bool isLog = std::is_same_v<OpTy, LogSoftmaxOp>;

  LogicalResult
  matchAndRewrite(OpTy op, typename OpTy::Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value x = adaptor.getX();
    auto xt = cast<RankedTensorType>(x.getType());
    auto axis = normalizeAxis(std::nullopt, op.getAxis(), xt.getRank());
    if (failed(axis))
      return rewriter.notifyMatchFailure(op, "invalid axis");
    SmallVector<int64_t> dims{*axis};
    Type elt = xt.getElementType();
    Type ct = getComputeType(elt);

    Value max = buildStatistic(
        rewriter, loc, x, dims, {},
        buildReductionInit(rewriter, loc, ct, ReductionKind::Max),
        [&](OpBuilder &b, Location l, ValueRange a) {
          return buildReductionCombine(
              b, l, a[1], buildScalarCast(b, l, a[0], ct), ReductionKind::Max);
        });
    Value expandedMax = buildExpandReducedDims(rewriter, loc, max, x, dims);
    Value result;
    if (isLog) {
      // log(sum exp(x - max)) needs the exponentials only in the sum.
      Value sum = buildStatistic(
          rewriter, loc, x, dims, {max}, cst(rewriter, loc, ct, 0),
          [&](OpBuilder &b, Location l, ValueRange a) -> Value {
            Value shifted = arith::SubFOp::create(
                b, l, buildScalarCast(b, l, a[0], ct), a[1]);
            return arith::AddFOp::create(b, l, a[2],
                                         math::ExpOp::create(b, l, shifted));
          });
      result = buildBroadcastElementwise(
          rewriter, loc, xt,
          {x, expandedMax, buildExpandReducedDims(rewriter, loc, sum, x, dims)},
          [&](OpBuilder &b, Location l, ValueRange a) {
            Value shifted = arith::SubFOp::create(
                b, l, buildScalarCast(b, l, a[0], ct), a[1]);
            return buildScalarCast(
                b, l,
                arith::SubFOp::create(b, l, shifted,
                                      math::LogOp::create(b, l, a[2])),
                elt);
          });
    } else {
      // exp(x - max) is computed once and kept (in the compute type), then
      // summed and divided by the sum: computing it again in the division
      // doubled the time of a softmax (512x1024 on one core: 0.43 ms, the
      // exponentials 0.1 ms of each pass).
      Value exps = buildBroadcastElementwise(
          rewriter, loc, RankedTensorType::get(xt.getShape(), ct),
          {x, expandedMax}, [&](OpBuilder &b, Location l, ValueRange a) {
            return math::ExpOp::create(
                b, l,
                arith::SubFOp::create(b, l, buildScalarCast(b, l, a[0], ct),
                                      a[1]));
          });
      Value sum = buildStatistic(
          rewriter, loc, exps, dims, {}, cst(rewriter, loc, ct, 0),
          [&](OpBuilder &b, Location l, ValueRange a) -> Value {
            return arith::AddFOp::create(b, l, a[1], a[0]);
          });
      result = buildBroadcastElementwise(
          rewriter, loc, xt,
          {exps, buildExpandReducedDims(rewriter, loc, sum, x, dims)},
          [&](OpBuilder &b, Location l, ValueRange a) {
            return buildScalarCast(
                b, l, arith::DivFOp::create(b, l, a[0], a[1]), elt);
          });
    }
    replaceWithCast(rewriter, op, result);
    return success();
  }
};

/// (x - mean) * (1 / sqrt(var + eps)), with mean and variance taken over
/// `dims` (two passes, so the variance does not cancel), then scale and
/// bias. The reciprocal is one value per kept position, computed once
/// (paddle-lower-fusion keeps such maps out of the elementwise generic that
/// reads them broadcast): a division and a square root per element made
/// BERT's layer norms 3x slower.
struct LayerNormLowering : OpConversionPattern<LayerNormOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(LayerNormOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value x = adaptor.getX();
    auto xt = cast<RankedTensorType>(x.getType());
    auto dims = normalizeAxes(std::nullopt, op.getAxes(), xt.getRank());
    if (failed(dims))
      return rewriter.notifyMatchFailure(op, "invalid axes");
    Type elt = xt.getElementType();
    Type ct = getComputeType(elt);
    Value zero = cst(rewriter, loc, ct, 0);
    Value count = buildCount(rewriter, loc, x, *dims, ct);
    Value eps = cst(rewriter, loc, ct, op.getEpsilon().convertToDouble());

    Value sum =
        buildStatistic(rewriter, loc, x, *dims, {}, zero,
                       [&](OpBuilder &b, Location l, ValueRange a) -> Value {
                         return arith::AddFOp::create(
                             b, l, a[1], buildScalarCast(b, l, a[0], ct));
                       });
    Value mean = buildMap(rewriter, loc, sum, getElementTypeOrSelf(sum),
                          [&](OpBuilder &b, Location l, Value s) -> Value {
                            return arith::DivFOp::create(b, l, s, count);
                          });
    Value squares =
        buildStatistic(rewriter, loc, x, *dims, {mean}, zero,
                       [&](OpBuilder &b, Location l, ValueRange a) -> Value {
                         Value d = arith::SubFOp::create(
                             b, l, buildScalarCast(b, l, a[0], ct), a[1]);
                         return arith::AddFOp::create(
                             b, l, a[2], arith::MulFOp::create(b, l, d, d));
                       });
    Value invStddev = buildMap(
        rewriter, loc, squares, getElementTypeOrSelf(squares),
        [&](OpBuilder &b, Location l, Value s) -> Value {
          Value var = arith::DivFOp::create(b, l, s, count);
          Value stddev =
              math::SqrtOp::create(b, l, arith::AddFOp::create(b, l, var, eps));
          return arith::DivFOp::create(b, l, cst(b, l, ct, 1.0), stddev);
        });

    SmallVector<Value> operands{
        x, buildExpandReducedDims(rewriter, loc, mean, x, *dims),
        buildExpandReducedDims(rewriter, loc, invStddev, x, *dims)};
    Value scale = adaptor.getScale(), bias = adaptor.getBias();
    if (scale)
      operands.push_back(scale);
    if (bias)
      operands.push_back(bias);
    Value result = buildBroadcastElementwise(
        rewriter, loc, xt, operands,
        [&](OpBuilder &b, Location l, ValueRange a) {
          Value y = arith::MulFOp::create(
              b, l,
              arith::SubFOp::create(b, l, buildScalarCast(b, l, a[0], ct),
                                    a[1]),
              a[2]);
          unsigned next = 3;
          if (scale)
            y = arith::MulFOp::create(b, l, y,
                                      buildScalarCast(b, l, a[next++], ct));
          if (bias)
            y = arith::AddFOp::create(b, l, y,
                                      buildScalarCast(b, l, a[next++], ct));
          return buildScalarCast(b, l, y, elt);
        });
    replaceWithCast(rewriter, op, result);
    return success();
  }
};

/// The 1-D parameters are expanded to [1, C, 1, ...] and broadcast against
/// x, so a dynamic C is checked against x at run time by the broadcast.
struct BatchNormInferenceLowering : OpConversionPattern<BatchNormInferenceOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(BatchNormInferenceOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value x = adaptor.getX();
    auto xt = cast<RankedTensorType>(x.getType());
    Type elt = xt.getElementType();
    Type ct = getComputeType(elt);
    Value eps = cst(rewriter, loc, ct, op.getEpsilon().convertToDouble());

    int64_t rank = xt.getRank();
    SmallVector<int64_t> shape(rank, 1);
    SmallVector<Value> operands{x};
    for (Value p : {adaptor.getScale(), adaptor.getBias(), adaptor.getMean(),
                    adaptor.getVariance()}) {
      auto pt = cast<RankedTensorType>(p.getType());
      // A parameter of static size 1 would broadcast over a dynamic C; the
      // op wants exactly C values, so check that C is 1 at run time.
      if (pt.getDimSize(0) == 1 && xt.isDynamicDim(1)) {
        Value c = tensor::DimOp::create(rewriter, loc, x, 1);
        Value one = arith::ConstantIndexOp::create(rewriter, loc, 1);
        buildRuntimeCheck(
            rewriter, loc,
            arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::eq, c,
                                  one),
            "batch_norm_inference parameters have 1 element but x has "
            "more channels");
      }
      shape[1] = pt.getDimSize(0);
      SmallVector<OpFoldResult> sizes(rank, rewriter.getIndexAttr(1));
      sizes[1] =
          pt.isDynamicDim(0)
              ? OpFoldResult(
                    tensor::DimOp::create(rewriter, loc, p, 0).getResult())
              : OpFoldResult(rewriter.getIndexAttr(pt.getDimSize(0)));
      SmallVector<ReassociationIndices> groups{
          llvm::to_vector(llvm::seq<int64_t>(0, rank))};
      operands.push_back(tensor::ExpandShapeOp::create(
          rewriter, loc, RankedTensorType::get(shape, pt.getElementType()), p,
          groups, sizes));
    }
    Value result = buildBroadcastElementwise(
        rewriter, loc, xt, operands,
        [&](OpBuilder &b, Location l, ValueRange a) {
          SmallVector<Value> v;
          for (Value s : a)
            v.push_back(buildScalarCast(b, l, s, ct));
          // v: x, scale, bias, mean, variance.
          Value stddev = math::SqrtOp::create(
              b, l, arith::AddFOp::create(b, l, v[4], eps));
          Value y = arith::DivFOp::create(
              b, l, arith::SubFOp::create(b, l, v[0], v[3]), stddev);
          y = arith::AddFOp::create(b, l, arith::MulFOp::create(b, l, y, v[1]),
                                    v[2]);
          return buildScalarCast(b, l, y, elt);
        });
    replaceWithCast(rewriter, op, result);
    return success();
  }
};

} // namespace

void mlir::paddle::populateNormalizationToLinalgPatterns(
    RewritePatternSet &patterns) {
  MLIRContext *ctx = patterns.getContext();
  patterns.add<SoftmaxLowering<SoftmaxOp>, SoftmaxLowering<LogSoftmaxOp>,
               LayerNormLowering, BatchNormInferenceLowering>(ctx);
}
