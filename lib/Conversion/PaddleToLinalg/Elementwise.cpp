//===- Elementwise.cpp - lower creation and elementwise paddle ops --------===//

#include "LoweringUtils.h"
#include "dialects/Paddle/IR/PaddleOps.h"
#include "paddle/Conversion/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/DialectConversion.h"

#include <cmath>

using namespace mlir;
using namespace mlir::paddle;

namespace {

/// Runs `fn` in f32 for f16/bf16 operands (and in the operand type
/// otherwise), then converts back.
Value inComputeType(OpBuilder &b, Location loc, ValueRange args,
                    function_ref<Value(ValueRange)> fn) {
  Type type = args.front().getType();
  Type ct = getComputeType(type);
  if (ct == type)
    return fn(args);
  SmallVector<Value> wide;
  for (Value a : args)
    wide.push_back(arith::ExtFOp::create(b, loc, ct, a));
  return arith::TruncFOp::create(b, loc, type, fn(wide));
}

Value cst(OpBuilder &b, Location loc, Type t, double v) {
  return buildScalarConstant(b, loc, t, v);
}

//===----------------------------------------------------------------------===//
// Scalar semantics of each op
//===----------------------------------------------------------------------===//

template <typename OpTy>
Value buildScalar(OpTy op, OpBuilder &b, Location loc, ValueRange args);

#define PADDLE_FLOAT_UNARY(OP, MATHOP)                                         \
  template <>                                                                  \
  Value buildScalar(OP, OpBuilder &b, Location loc, ValueRange args) {         \
    return inComputeType(b, loc, args, [&](ValueRange a) -> Value {            \
      return MATHOP::create(b, loc, a[0]);                                     \
    });                                                                        \
  }
PADDLE_FLOAT_UNARY(ExpOp, math::ExpOp)
PADDLE_FLOAT_UNARY(LogOp, math::LogOp)
PADDLE_FLOAT_UNARY(SqrtOp, math::SqrtOp)
PADDLE_FLOAT_UNARY(RsqrtOp, math::RsqrtOp)
PADDLE_FLOAT_UNARY(TanhOp, math::TanhOp)
PADDLE_FLOAT_UNARY(ErfOp, math::ErfOp)
PADDLE_FLOAT_UNARY(SinOp, math::SinOp)
PADDLE_FLOAT_UNARY(CosOp, math::CosOp)
PADDLE_FLOAT_UNARY(FloorOp, math::FloorOp)
PADDLE_FLOAT_UNARY(CeilOp, math::CeilOp)
PADDLE_FLOAT_UNARY(RoundOp, math::RoundEvenOp)
#undef PADDLE_FLOAT_UNARY

template <>
Value buildScalar(NegOp, OpBuilder &b, Location loc, ValueRange args) {
  Value x = args[0];
  if (isa<FloatType>(x.getType()))
    return arith::NegFOp::create(b, loc, x);
  return arith::SubIOp::create(b, loc, cst(b, loc, x.getType(), 0), x);
}

template <>
Value buildScalar(AbsOp, OpBuilder &b, Location loc, ValueRange args) {
  Value x = args[0];
  if (isa<FloatType>(x.getType()))
    return math::AbsFOp::create(b, loc, x);
  return math::AbsIOp::create(b, loc, x);
}

template <>
Value buildScalar(SigmoidOp, OpBuilder &b, Location loc, ValueRange args) {
  return inComputeType(b, loc, args, [&](ValueRange a) -> Value {
    Type t = a[0].getType();
    Value e = math::ExpOp::create(b, loc, arith::NegFOp::create(b, loc, a[0]));
    Value d = arith::AddFOp::create(b, loc, cst(b, loc, t, 1), e);
    return arith::DivFOp::create(b, loc, cst(b, loc, t, 1), d);
  });
}

template <>
Value buildScalar(ReluOp, OpBuilder &b, Location loc, ValueRange args) {
  Value x = args[0];
  if (isa<FloatType>(x.getType()))
    return inComputeType(b, loc, args, [&](ValueRange a) -> Value {
      return arith::MaximumFOp::create(b, loc, a[0],
                                       cst(b, loc, a[0].getType(), 0));
    });
  Value zero = cst(b, loc, x.getType(), 0);
  return arith::MaxSIOp::create(b, loc, x, zero);
}

template <>
Value buildScalar(GeluOp op, OpBuilder &b, Location loc, ValueRange args) {
  bool approximate = op.getApproximate();
  return inComputeType(b, loc, args, [&](ValueRange a) -> Value {
    Value x = a[0];
    Type t = x.getType();
    Value half = cst(b, loc, t, 0.5), one = cst(b, loc, t, 1);
    Value inner;
    if (approximate) {
      Value x3 =
          arith::MulFOp::create(b, loc, x, arith::MulFOp::create(b, loc, x, x));
      Value poly = arith::AddFOp::create(
          b, loc, x,
          arith::MulFOp::create(b, loc, cst(b, loc, t, 0.044715), x3));
      inner = math::TanhOp::create(
          b, loc,
          arith::MulFOp::create(b, loc, cst(b, loc, t, std::sqrt(2 / M_PI)),
                                poly));
    } else {
      inner = math::ErfOp::create(
          b, loc, arith::MulFOp::create(b, loc, x, cst(b, loc, t, M_SQRT1_2)));
    }
    Value cdf = arith::MulFOp::create(
        b, loc, half, arith::AddFOp::create(b, loc, one, inner));
    return arith::MulFOp::create(b, loc, x, cdf);
  });
}

template <>
Value buildScalar(SignOp, OpBuilder &b, Location loc, ValueRange args) {
  Value x = args[0];
  Type t = x.getType();
  if (isa<FloatType>(t) && getComputeType(t) != t)
    return inComputeType(b, loc, args, [&](ValueRange a) -> Value {
      return buildScalar(SignOp(), b, loc, a);
    });
  Value zero = cst(b, loc, t, 0), one = cst(b, loc, t, 1),
        minusOne = cst(b, loc, t, -1);
  if (isa<FloatType>(t)) {
    // x itself where x is 0 or NaN, so NaN and the sign of zero survive.
    Value gt =
        arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT, x, zero);
    Value lt =
        arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLT, x, zero);
    Value neg = arith::SelectOp::create(b, loc, lt, minusOne, x);
    return arith::SelectOp::create(b, loc, gt, one, neg);
  }
  Value gt = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sgt, x, zero);
  Value lt = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, x, zero);
  Value neg = arith::SelectOp::create(b, loc, lt, minusOne, zero);
  return arith::SelectOp::create(b, loc, gt, one, neg);
}

template <>
Value buildScalar(NotOp, OpBuilder &b, Location loc, ValueRange args) {
  Value x = args[0];
  auto allOnes = arith::ConstantOp::create(
      b, loc,
      b.getIntegerAttr(x.getType(),
                       APInt::getAllOnes(x.getType().getIntOrFloatBitWidth())));
  return arith::XOrIOp::create(b, loc, x, allOnes);
}

#define PADDLE_ARITH_BINARY(OP, FOP, IOP)                                      \
  template <>                                                                  \
  Value buildScalar(OP, OpBuilder &b, Location loc, ValueRange args) {         \
    if (isa<FloatType>(args[0].getType()))                                     \
      return inComputeType(b, loc, args, [&](ValueRange a) -> Value {          \
        return FOP::create(b, loc, a[0], a[1]);                                \
      });                                                                      \
    return IOP::create(b, loc, args[0], args[1]);                              \
  }
PADDLE_ARITH_BINARY(AddOp, arith::AddFOp, arith::AddIOp)
PADDLE_ARITH_BINARY(SubOp, arith::SubFOp, arith::SubIOp)
PADDLE_ARITH_BINARY(MulOp, arith::MulFOp, arith::MulIOp)
PADDLE_ARITH_BINARY(MaximumOp, arith::MaximumFOp, arith::MaxSIOp)
PADDLE_ARITH_BINARY(MinimumOp, arith::MinimumFOp, arith::MinSIOp)
#undef PADDLE_ARITH_BINARY

#define PADDLE_BITWISE_BINARY(OP, IOP)                                         \
  template <>                                                                  \
  Value buildScalar(OP, OpBuilder &b, Location loc, ValueRange args) {         \
    return IOP::create(b, loc, args[0], args[1]);                              \
  }
PADDLE_BITWISE_BINARY(AndOp, arith::AndIOp)
PADDLE_BITWISE_BINARY(OrOp, arith::OrIOp)
PADDLE_BITWISE_BINARY(XorOp, arith::XOrIOp)
#undef PADDLE_BITWISE_BINARY

/// Integer division and remainder that never trap: divisor 0 gives 0 (as
/// numpy), divisor -1 is handled without the INT_MIN / -1 overflow.
struct SafeDivisor {
  Value isZero, isMinusOne, divisor;
};
SafeDivisor makeSafeDivisor(OpBuilder &b, Location loc, Value d) {
  Type t = d.getType();
  Value zero = cst(b, loc, t, 0), one = cst(b, loc, t, 1),
        minusOne = cst(b, loc, t, -1);
  Value isZero =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, d, zero);
  Value isMinusOne =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, d, minusOne);
  Value bad = arith::OrIOp::create(b, loc, isZero, isMinusOne);
  return {isZero, isMinusOne, arith::SelectOp::create(b, loc, bad, one, d)};
}

/// True where the truncated remainder `r` and the divisor `d` differ in
/// sign, i.e. where floor semantics need an adjustment.
Value needsFloorAdjust(OpBuilder &b, Location loc, Value r, Value d) {
  Value zero = cst(b, loc, r.getType(), 0);
  Value rNonZero =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, r, zero);
  Value rNeg =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, r, zero);
  Value dNeg =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, d, zero);
  Value differ = arith::XOrIOp::create(b, loc, rNeg, dNeg);
  return arith::AndIOp::create(b, loc, rNonZero, differ);
}

template <>
Value buildScalar(DivOp, OpBuilder &b, Location loc, ValueRange args) {
  Value a = args[0], d = args[1];
  if (isa<FloatType>(a.getType()))
    return inComputeType(b, loc, args, [&](ValueRange w) -> Value {
      return arith::DivFOp::create(b, loc, w[0], w[1]);
    });
  Type t = a.getType();
  SafeDivisor s = makeSafeDivisor(b, loc, d);
  Value q = arith::DivSIOp::create(b, loc, a, s.divisor);
  Value r = arith::RemSIOp::create(b, loc, a, s.divisor);
  Value adjusted = arith::SelectOp::create(
      b, loc, needsFloorAdjust(b, loc, r, d),
      arith::SubIOp::create(b, loc, q, cst(b, loc, t, 1)), q);
  Value negA = arith::SubIOp::create(b, loc, cst(b, loc, t, 0), a);
  Value v = arith::SelectOp::create(b, loc, s.isMinusOne, negA, adjusted);
  return arith::SelectOp::create(b, loc, s.isZero, cst(b, loc, t, 0), v);
}

template <>
Value buildScalar(RemOp, OpBuilder &b, Location loc, ValueRange args) {
  Value a = args[0], d = args[1];
  Type t = a.getType();
  if (isa<FloatType>(t)) {
    return inComputeType(b, loc, args, [&](ValueRange w) -> Value {
      Value r = arith::RemFOp::create(b, loc, w[0], w[1]);
      Value zero = cst(b, loc, w[0].getType(), 0);
      Value rNonZero =
          arith::CmpFOp::create(b, loc, arith::CmpFPredicate::ONE, r, zero);
      Value rNeg =
          arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLT, r, zero);
      Value dNeg =
          arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLT, w[1], zero);
      Value adjust = arith::AndIOp::create(
          b, loc, rNonZero, arith::XOrIOp::create(b, loc, rNeg, dNeg));
      return arith::SelectOp::create(b, loc, adjust,
                                     arith::AddFOp::create(b, loc, r, w[1]), r);
    });
  }
  SafeDivisor s = makeSafeDivisor(b, loc, d);
  Value r = arith::RemSIOp::create(b, loc, a, s.divisor);
  Value adjusted =
      arith::SelectOp::create(b, loc, needsFloorAdjust(b, loc, r, d),
                              arith::AddIOp::create(b, loc, r, d), r);
  Value bad = arith::OrIOp::create(b, loc, s.isZero, s.isMinusOne);
  return arith::SelectOp::create(b, loc, bad, cst(b, loc, t, 0), adjusted);
}

template <>
Value buildScalar(PowOp, OpBuilder &b, Location loc, ValueRange args) {
  if (isa<FloatType>(args[0].getType()))
    return inComputeType(b, loc, args, [&](ValueRange a) -> Value {
      return math::PowFOp::create(b, loc, a[0], a[1]);
    });
  return math::IPowIOp::create(b, loc, args[0], args[1]);
}

template <>
Value buildScalar(CompareOp op, OpBuilder &b, Location loc, ValueRange args) {
  Value l = args[0], r = args[1];
  if (isa<FloatType>(l.getType())) {
    Type ct = getComputeType(l.getType());
    if (ct != l.getType()) {
      l = arith::ExtFOp::create(b, loc, ct, l);
      r = arith::ExtFOp::create(b, loc, ct, r);
    }
    arith::CmpFPredicate p;
    switch (op.getDirection()) {
    case CompareDirection::EQ:
      p = arith::CmpFPredicate::OEQ;
      break;
    case CompareDirection::NE:
      p = arith::CmpFPredicate::UNE;
      break;
    case CompareDirection::LT:
      p = arith::CmpFPredicate::OLT;
      break;
    case CompareDirection::LE:
      p = arith::CmpFPredicate::OLE;
      break;
    case CompareDirection::GT:
      p = arith::CmpFPredicate::OGT;
      break;
    case CompareDirection::GE:
      p = arith::CmpFPredicate::OGE;
      break;
    }
    return arith::CmpFOp::create(b, loc, p, l, r);
  }
  bool u = l.getType().isInteger(1); // bool orders false < true
  arith::CmpIPredicate p;
  switch (op.getDirection()) {
  case CompareDirection::EQ:
    p = arith::CmpIPredicate::eq;
    break;
  case CompareDirection::NE:
    p = arith::CmpIPredicate::ne;
    break;
  case CompareDirection::LT:
    p = u ? arith::CmpIPredicate::ult : arith::CmpIPredicate::slt;
    break;
  case CompareDirection::LE:
    p = u ? arith::CmpIPredicate::ule : arith::CmpIPredicate::sle;
    break;
  case CompareDirection::GT:
    p = u ? arith::CmpIPredicate::ugt : arith::CmpIPredicate::sgt;
    break;
  case CompareDirection::GE:
    p = u ? arith::CmpIPredicate::uge : arith::CmpIPredicate::sge;
    break;
  }
  return arith::CmpIOp::create(b, loc, p, l, r);
}

template <>
Value buildScalar(SelectOp, OpBuilder &b, Location loc, ValueRange args) {
  return arith::SelectOp::create(b, loc, args[0], args[1], args[2]);
}

template <>
Value buildScalar(CastOp op, OpBuilder &b, Location loc, ValueRange args) {
  return buildScalarCast(b, loc, args[0], op.getType().getElementType());
}

//===----------------------------------------------------------------------===//
// Patterns
//===----------------------------------------------------------------------===//

/// Any elementwise op: a broadcasting linalg.generic around buildScalar.
template <typename OpTy>
struct ElementwiseLowering : OpConversionPattern<OpTy> {
  using OpConversionPattern<OpTy>::OpConversionPattern;
  LogicalResult
  matchAndRewrite(OpTy op, typename OpTy::Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto resultType = cast<RankedTensorType>(op.getType());
    Value result = buildBroadcastElementwise(
        rewriter, op.getLoc(), resultType, adaptor.getOperands(),
        [&](OpBuilder &b, Location loc, ValueRange scalars) {
          return buildScalar(op, b, loc, scalars);
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// Splat constants larger than this are filled at run time instead of
/// stored: LLVM expands a splat initializer to every element, so a large
/// one costs its full size in compile-time memory (100 GB aborted the JIT)
/// and in artifacts, where a fill costs one pass over memory per call, and
/// none where it feeds elementwise ops: elementwise fusion folds its value
/// into them as it does a splat's.
constexpr int64_t kMaxStoredSplatBytes = 1 << 16;

struct ConstantLowering : OpConversionPattern<ConstantOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(ConstantOp op, OpAdaptor,
                  ConversionPatternRewriter &rewriter) const override {
    RankedTensorType type = op.getType();
    auto splat = dyn_cast<SplatElementsAttr>(op.getValue());
    // The verifier bounds the byte size, so the product does not overflow.
    if (splat &&
        type.getNumElements() * getElementByteSize(type.getElementType()) >
            kMaxStoredSplatBytes) {
      Location loc = op.getLoc();
      Value value = arith::ConstantOp::create(
          rewriter, loc, cast<TypedAttr>(splat.getSplatValue<Attribute>()));
      rewriter.replaceOpWithNewOp<linalg::FillOp>(
          op, value, buildEmpty(rewriter, loc, type, {}));
      return success();
    }
    rewriter.replaceOpWithNewOp<arith::ConstantOp>(
        op, cast<TypedAttr>(op.getValue()));
    return success();
  }
};

struct IotaLowering : OpConversionPattern<IotaOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(IotaOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType type = op.getType();
    Type elementType = type.getElementType();
    Value init = buildEmpty(rewriter, loc, type, adaptor.getDynamicSizes());
    int64_t dim = op.getDimension();
    SmallVector<utils::IteratorType> iterators(type.getRank(),
                                               utils::IteratorType::parallel);
    auto generic = linalg::GenericOp::create(
        rewriter, loc, TypeRange{type}, ValueRange{}, ValueRange{init},
        SmallVector<AffineMap>{rewriter.getMultiDimIdentityMap(type.getRank())},
        iterators, [&](OpBuilder &b, Location l, ValueRange) {
          Value i = linalg::IndexOp::create(b, l, dim);
          Value i64 =
              arith::IndexCastOp::create(b, l, b.getI64Type(), i).getResult();
          linalg::YieldOp::create(b, l,
                                  buildScalarCast(b, l, i64, elementType));
        });
    rewriter.replaceOp(op, generic.getResult(0));
    return success();
  }
};

} // namespace

void mlir::paddle::populateElementwiseToLinalgPatterns(
    RewritePatternSet &patterns) {
  MLIRContext *ctx = patterns.getContext();
  patterns.add<ConstantLowering, IotaLowering>(ctx);
  patterns.add<ElementwiseLowering<NegOp>, ElementwiseLowering<AbsOp>,
               ElementwiseLowering<ExpOp>, ElementwiseLowering<LogOp>,
               ElementwiseLowering<SqrtOp>, ElementwiseLowering<RsqrtOp>,
               ElementwiseLowering<TanhOp>, ElementwiseLowering<SigmoidOp>,
               ElementwiseLowering<ReluOp>, ElementwiseLowering<GeluOp>,
               ElementwiseLowering<ErfOp>, ElementwiseLowering<SinOp>,
               ElementwiseLowering<CosOp>, ElementwiseLowering<FloorOp>,
               ElementwiseLowering<CeilOp>, ElementwiseLowering<RoundOp>,
               ElementwiseLowering<SignOp>, ElementwiseLowering<NotOp>,
               ElementwiseLowering<AddOp>, ElementwiseLowering<SubOp>,
               ElementwiseLowering<MulOp>, ElementwiseLowering<DivOp>,
               ElementwiseLowering<PowOp>, ElementwiseLowering<MaximumOp>,
               ElementwiseLowering<MinimumOp>, ElementwiseLowering<RemOp>,
               ElementwiseLowering<AndOp>, ElementwiseLowering<OrOp>,
               ElementwiseLowering<XorOp>, ElementwiseLowering<CompareOp>,
               ElementwiseLowering<SelectOp>, ElementwiseLowering<CastOp>>(ctx);
}
