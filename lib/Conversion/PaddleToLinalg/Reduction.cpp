//===- Reduction.cpp - lower reduction paddle ops -------------------------===//
//
// Each reduction is one linalg.generic whose reduced dims are `reduction`
// iterators, accumulating into a tensor of the kept dims filled with the
// neutral value (linalg.fill). f16/bf16 accumulate in f32 and are truncated
// once at the end. keepdims re-inserts the size-1 dims with
// tensor.expand_shape.
//
//===----------------------------------------------------------------------===//

#include "LoweringUtils.h"
#include "dialects/Paddle/IR/PaddleOps.h"
#include "paddle/Conversion/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/DialectConversion.h"

using namespace mlir;
using namespace mlir::paddle;

namespace {

using ReductionBody = function_ref<SmallVector<Value>(
    OpBuilder &b, Location loc, Value x, ValueRange accs)>;

/// The type of `x` with the dims in `dims` dropped, with element type `elt`.
RankedTensorType keptType(RankedTensorType x, ArrayRef<int64_t> dims,
                          Type elt) {
  SmallVector<int64_t> shape;
  for (int64_t d = 0; d < x.getRank(); ++d)
    if (!llvm::is_contained(dims, d))
      shape.push_back(x.getDimSize(d));
  return RankedTensorType::get(shape, elt);
}

/// A tensor of the kept dims of `x` filled with `value`.
Value buildFilledKept(OpBuilder &b, Location loc, Value x,
                      ArrayRef<int64_t> dims, Value value) {
  auto xt = cast<RankedTensorType>(x.getType());
  SmallVector<Value> dyn;
  for (int64_t d = 0; d < xt.getRank(); ++d)
    if (!llvm::is_contained(dims, d) && xt.isDynamicDim(d))
      dyn.push_back(tensor::DimOp::create(b, loc, x, d));
  Value empty = buildEmpty(b, loc, keptType(xt, dims, value.getType()), dyn);
  return linalg::FillOp::create(b, loc, ValueRange{value}, ValueRange{empty})
      .getResult(0);
}

/// linalg.generic reducing `x` over `dims` into `inits` (tensors of the kept
/// dims); `body` combines an element of x with the accumulators.
SmallVector<Value> buildReduction(OpBuilder &b, Location loc, Value x,
                                  ArrayRef<int64_t> dims, ValueRange inits,
                                  ReductionBody body) {
  int64_t rank = cast<RankedTensorType>(x.getType()).getRank();
  SmallVector<AffineExpr> kept;
  SmallVector<utils::IteratorType> iterators;
  for (int64_t d = 0; d < rank; ++d) {
    bool reduced = llvm::is_contained(dims, d);
    iterators.push_back(reduced ? utils::IteratorType::reduction
                                : utils::IteratorType::parallel);
    if (!reduced)
      kept.push_back(b.getAffineDimExpr(d));
  }
  SmallVector<AffineMap> maps{b.getMultiDimIdentityMap(rank)};
  for (size_t i = 0; i < inits.size(); ++i)
    maps.push_back(AffineMap::get(rank, 0, kept, b.getContext()));
  auto generic = linalg::GenericOp::create(
      b, loc, inits.getTypes(), ValueRange{x}, inits, maps, iterators,
      [&](OpBuilder &nb, Location nloc, ValueRange args) {
        linalg::YieldOp::create(nb, nloc,
                                body(nb, nloc, args[0], args.drop_front()));
      });
  return SmallVector<Value>(generic.getResults());
}

/// Turns `reduced` (the kept dims of x) into a value of `resultType`: puts
/// back the reduced dims with size 1 when `keepdims`, then casts to the
/// written result type (which may be more or less static than inferred).
Value finishReduction(OpBuilder &b, Location loc, Value x, Value reduced,
                      ArrayRef<int64_t> dims, bool keepdims, Type resultType) {
  if (keepdims)
    reduced = buildExpandReducedDims(b, loc, reduced, x, dims);
  if (reduced.getType() != resultType)
    reduced = tensor::CastOp::create(b, loc, resultType, reduced);
  return reduced;
}

/// max, min and argmax have no value over nothing (numpy raises): a
/// run-time check that each dynamic reduced dim of `x` is not empty (the
/// verifier rejects static ones).
void buildNonEmptyCheck(OpBuilder &b, Location loc, Value x,
                        ArrayRef<int64_t> dims, StringRef what) {
  auto xt = cast<RankedTensorType>(x.getType());
  for (int64_t d : dims) {
    if (!xt.isDynamicDim(d))
      continue;
    Value size = tensor::DimOp::create(b, loc, x, d);
    Value nonEmpty =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sgt, size,
                              arith::ConstantIndexOp::create(b, loc, 0));
    buildRuntimeCheck(b, loc, nonEmpty,
                      "reduces dim " + Twine(d) + " of size 0, which has no " +
                          what + " (numpy raises)");
  }
}

template <typename OpTy>
FailureOr<SmallVector<int64_t>> getReducedDims(OpTy op) {
  return normalizeAxes(std::nullopt, op.getAxes(),
                       op.getX().getType().getRank());
}

template <typename OpTy> constexpr ReductionKind kindOf();
template <> constexpr ReductionKind kindOf<ReduceSumOp>() {
  return ReductionKind::Sum;
}
template <> constexpr ReductionKind kindOf<ReduceMeanOp>() {
  return ReductionKind::Sum;
}
template <> constexpr ReductionKind kindOf<ReduceProdOp>() {
  return ReductionKind::Prod;
}
template <> constexpr ReductionKind kindOf<ReduceMaxOp>() {
  return ReductionKind::Max;
}
template <> constexpr ReductionKind kindOf<ReduceMinOp>() {
  return ReductionKind::Min;
}

/// reduce_sum / prod / max / min / mean.
template <typename OpTy> struct ReduceLowering : OpConversionPattern<OpTy> {
  using OpConversionPattern<OpTy>::OpConversionPattern;
  LogicalResult
  matchAndRewrite(OpTy op, typename OpTy::Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto dims = getReducedDims(op);
    if (failed(dims))
      return rewriter.notifyMatchFailure(op, "invalid axes");
    Value x = adaptor.getX();
    Type elt = op.getX().getType().getElementType();
    Type ct = getComputeType(elt);
    constexpr ReductionKind kind = kindOf<OpTy>();
    if constexpr (kind == ReductionKind::Max || kind == ReductionKind::Min)
      if (!op.getAllowEmpty())
        buildNonEmptyCheck(rewriter, loc, x, *dims,
                           kind == ReductionKind::Max ? "maximum" : "minimum");
    Value init = buildFilledKept(rewriter, loc, x, *dims,
                                 buildReductionInit(rewriter, loc, ct, kind));
    Value acc =
        buildReduction(rewriter, loc, x, *dims, init,
                       [&](OpBuilder &b, Location l, Value v, ValueRange accs) {
                         v = buildScalarCast(b, l, v, ct);
                         return SmallVector<Value>{
                             buildReductionCombine(b, l, accs[0], v, kind)};
                       })[0];
    bool isMean = std::is_same_v<OpTy, ReduceMeanOp>;
    if (isMean || ct != elt) {
      Value count = isMean ? buildCount(rewriter, loc, x, *dims, ct) : Value();
      acc = buildMap(rewriter, loc, acc, elt,
                     [&](OpBuilder &b, Location l, Value v) {
                       if (count)
                         v = arith::DivFOp::create(b, l, v, count);
                       return buildScalarCast(b, l, v, elt);
                     });
    }
    rewriter.replaceOp(op, finishReduction(rewriter, loc, x, acc, *dims,
                                           op.getKeepdims(), op.getType()));
    return success();
  }
};

/// argmax: one generic carrying the best value (in the compute type) and its
/// index. The update rule does not depend on the visiting order: an element
/// wins when it is larger, or equal at a smaller index; a NaN beats any
/// number and loses only to an earlier NaN.
struct ArgmaxLowering : OpConversionPattern<ArgmaxOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(ArgmaxOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto axis = normalizeAxis(std::nullopt, op.getAxis(),
                              op.getX().getType().getRank());
    if (failed(axis))
      return rewriter.notifyMatchFailure(op, "invalid axis");
    SmallVector<int64_t> dims{*axis};
    Value x = adaptor.getX();
    buildNonEmptyCheck(rewriter, loc, x, dims, "largest element");
    Type ct = getComputeType(op.getX().getType().getElementType());
    Type i64 = rewriter.getI64Type();
    Value bestInit = buildFilledKept(
        rewriter, loc, x, dims,
        buildReductionInit(rewriter, loc, ct, ReductionKind::Max));
    Value indexInit = buildFilledKept(
        rewriter, loc, x, dims, buildScalarConstant(rewriter, loc, i64, 0));
    int64_t reducedDim = *axis;
    SmallVector<Value> results = buildReduction(
        rewriter, loc, x, dims, {bestInit, indexInit},
        [&](OpBuilder &b, Location l, Value v, ValueRange accs) {
          v = buildScalarCast(b, l, v, ct);
          Value best = accs[0], bestIndex = accs[1];
          Value index = arith::IndexCastOp::create(
              b, l, i64, linalg::IndexOp::create(b, l, reducedDim));
          Value earlier = arith::CmpIOp::create(b, l, arith::CmpIPredicate::slt,
                                                index, bestIndex);
          Value take;
          if (isa<FloatType>(ct)) {
            using P = arith::CmpFPredicate;
            Value greater = arith::CmpFOp::create(b, l, P::OGT, v, best);
            Value equal = arith::CmpFOp::create(b, l, P::OEQ, v, best);
            Value vNaN = arith::CmpFOp::create(b, l, P::UNO, v, v);
            Value bestNaN = arith::CmpFOp::create(b, l, P::UNO, best, best);
            Value bestNotNaN = arith::XOrIOp::create(
                b, l, bestNaN,
                arith::ConstantOp::create(b, l, b.getBoolAttr(true)));
            // Ordinary values: larger, or equal and earlier.
            Value numeric = arith::OrIOp::create(
                b, l, greater, arith::AndIOp::create(b, l, equal, earlier));
            // A NaN: wins unless the best is an earlier NaN.
            Value nanWins = arith::OrIOp::create(b, l, bestNotNaN, earlier);
            take = arith::SelectOp::create(b, l, vNaN, nanWins, numeric);
          } else {
            using P = arith::CmpIPredicate;
            Value greater = arith::CmpIOp::create(b, l, P::sgt, v, best);
            Value equal = arith::CmpIOp::create(b, l, P::eq, v, best);
            take = arith::OrIOp::create(
                b, l, greater, arith::AndIOp::create(b, l, equal, earlier));
          }
          return SmallVector<Value>{
              arith::SelectOp::create(b, l, take, v, best),
              arith::SelectOp::create(b, l, take, index, bestIndex)};
        });
    rewriter.replaceOp(op, finishReduction(rewriter, loc, x, results[1], dims,
                                           op.getKeepdims(), op.getType()));
    return success();
  }
};

} // namespace

void mlir::paddle::populateReductionToLinalgPatterns(
    RewritePatternSet &patterns) {
  MLIRContext *ctx = patterns.getContext();
  patterns.add<ReduceLowering<ReduceSumOp>, ReduceLowering<ReduceProdOp>,
               ReduceLowering<ReduceMaxOp>, ReduceLowering<ReduceMinOp>,
               ReduceLowering<ReduceMeanOp>, ArgmaxLowering>(ctx);
}
