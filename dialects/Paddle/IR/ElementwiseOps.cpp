//===- ElementwiseOps.cpp - creation and elementwise paddle ops -----------===//

#include "dialects/Paddle/IR/FoldUtils.h"
#include "dialects/Paddle/IR/PaddleOps.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "llvm/ADT/APSInt.h"

#include <cmath>

using namespace mlir;
using namespace mlir::paddle;

//===----------------------------------------------------------------------===//
// Integer semantics shared by the folders (and mirrored by the lowering)
//===----------------------------------------------------------------------===//

/// numpy floor division; 0 where the divisor is 0; wraps on INT_MIN // -1.
static APInt floorDiv(const APInt &a, const APInt &b) {
  if (b.isZero())
    return APInt::getZero(a.getBitWidth());
  if (b.isAllOnes())
    return -a;
  APInt q = a.sdiv(b), r = a.srem(b);
  if (!r.isZero() && (r.isNegative() != b.isNegative()))
    q -= 1;
  return q;
}

/// numpy.remainder: the sign of the divisor; 0 where the divisor is 0.
static APInt floorRem(const APInt &a, const APInt &b) {
  if (b.isZero() || b.isAllOnes())
    return APInt::getZero(a.getBitWidth());
  APInt r = a.srem(b);
  if (!r.isZero() && (r.isNegative() != b.isNegative()))
    r += b;
  return r;
}

static APInt intPow(const APInt &base, const APInt &exp) {
  unsigned w = base.getBitWidth();
  if (exp.isNegative()) {
    if (base.isOne())
      return base;
    if (base.isAllOnes())
      return exp[0] ? base : APInt(w, 1);
    return APInt::getZero(w);
  }
  APInt result(w, 1), b = base;
  for (uint64_t e = exp.getZExtValue(); e; e >>= 1, b *= b)
    if (e & 1)
      result *= b;
  return result;
}

static double pyMod(double a, double b) {
  double r = std::fmod(a, b);
  if (r != 0 && ((r < 0) != (b < 0)))
    r += b;
  return r;
}

static double signOf(double x) {
  if (std::isnan(x))
    return x;
  return x > 0 ? 1.0 : (x < 0 ? -1.0 : 0.0);
}

//===----------------------------------------------------------------------===//
// ConstantOp, IotaOp
//===----------------------------------------------------------------------===//

OpFoldResult ConstantOp::fold(FoldAdaptor) { return getValue(); }

LogicalResult ConstantOp::verify() {
  auto type = dyn_cast<RankedTensorType>(getValue().getType());
  if (!type || !type.hasStaticShape())
    return emitOpError("value must have a static ranked tensor type, got ")
           << getValue().getType();
  // The lowering stores dense data (or fills a splat at run time); other
  // kinds would be expanded to every element on the way to LLVM.
  if (auto resource = dyn_cast<DenseResourceElementsAttr>(getValue())) {
    AsmResourceBlob *blob = resource.getRawHandle().getBlob();
    if (!blob)
      return emitOpError("value refers to resource '")
             << resource.getRawHandle().getKey() << "', which has no data";
    int64_t bytes =
        type.getNumElements() * getElementByteSize(type.getElementType());
    if (static_cast<int64_t>(blob->getData().size()) != bytes)
      return emitOpError("value has ")
             << blob->getData().size() << " bytes of data, but " << type
             << " takes " << bytes;
    return success();
  }
  if (!isa<DenseElementsAttr>(getValue()))
    return emitOpError("value must be dense elements or a dense resource, "
                       "got ")
           << getValue();
  return success();
}

LogicalResult IotaOp::verify() {
  RankedTensorType type = getType();
  // I64Attr reads back as unsigned: reinterpret to see negative values.
  auto dimension = static_cast<int64_t>(getDimension());
  if (dimension < 0 || dimension >= type.getRank())
    return emitOpError("dimension ")
           << dimension << " is out of range for rank " << type.getRank();
  if (getDynamicSizes().size() != type.getNumDynamicDims())
    return emitOpError("expects one size operand per dynamic dim: ")
           << type.getNumDynamicDims() << " dynamic dims, "
           << getDynamicSizes().size() << " sizes";
  return success();
}

//===----------------------------------------------------------------------===//
// Unary folders
//===----------------------------------------------------------------------===//

/// Folds f(f(x)) = x for involutions such as neg and not.
template <typename OpTy> static Value foldInvolution(OpTy op) {
  if (auto inner = op.getX().template getDefiningOp<OpTy>())
    if (inner.getX().getType() == op.getType())
      return inner.getX();
  return {};
}

OpFoldResult NegOp::fold(FoldAdaptor adaptor) {
  if (Value v = foldInvolution(*this))
    return v;
  return foldUnary(
      adaptor.getX(), getType(), [](double x) { return -x; },
      [](const APInt &x) { return -x; });
}

OpFoldResult AbsOp::fold(FoldAdaptor adaptor) {
  return foldUnary(
      adaptor.getX(), getType(), [](double x) { return std::fabs(x); },
      [](const APInt &x) { return x.abs(); });
}

#define PADDLE_FOLD_FLOAT_UNARY(OP, EXPR)                                      \
  OpFoldResult OP::fold(FoldAdaptor adaptor) {                                 \
    return foldUnary(                                                          \
        adaptor.getX(), getType(), [](double x) { return EXPR; }, nullptr);    \
  }

PADDLE_FOLD_FLOAT_UNARY(ExpOp, std::exp(x))
PADDLE_FOLD_FLOAT_UNARY(LogOp, std::log(x))
PADDLE_FOLD_FLOAT_UNARY(SqrtOp, std::sqrt(x))
PADDLE_FOLD_FLOAT_UNARY(RsqrtOp, 1.0 / std::sqrt(x))
PADDLE_FOLD_FLOAT_UNARY(TanhOp, std::tanh(x))
PADDLE_FOLD_FLOAT_UNARY(SigmoidOp, 1.0 / (1.0 + std::exp(-x)))
PADDLE_FOLD_FLOAT_UNARY(ErfOp, std::erf(x))
PADDLE_FOLD_FLOAT_UNARY(SinOp, std::sin(x))
PADDLE_FOLD_FLOAT_UNARY(CosOp, std::cos(x))
PADDLE_FOLD_FLOAT_UNARY(FloorOp, std::floor(x))
PADDLE_FOLD_FLOAT_UNARY(CeilOp, std::ceil(x))
PADDLE_FOLD_FLOAT_UNARY(RoundOp, std::nearbyint(x))
#undef PADDLE_FOLD_FLOAT_UNARY

OpFoldResult GeluOp::fold(FoldAdaptor adaptor) {
  if (getApproximate())
    return foldUnary(
        adaptor.getX(), getType(),
        [](double x) {
          return 0.5 * x *
                 (1 +
                  std::tanh(std::sqrt(2 / M_PI) * (x + 0.044715 * x * x * x)));
        },
        nullptr);
  return foldUnary(
      adaptor.getX(), getType(),
      [](double x) { return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0))); },
      nullptr);
}

OpFoldResult ReluOp::fold(FoldAdaptor adaptor) {
  if (auto inner = getX().getDefiningOp<ReluOp>())
    return inner.getResult();
  return foldUnary(
      adaptor.getX(), getType(),
      [](double x) { return std::isnan(x) ? x : (x > 0 ? x : 0.0); },
      [](const APInt &x) {
        return x.isNegative() ? APInt::getZero(x.getBitWidth()) : x;
      });
}

OpFoldResult SignOp::fold(FoldAdaptor adaptor) {
  return foldUnary(adaptor.getX(), getType(), signOf, [](const APInt &x) {
    unsigned w = x.getBitWidth();
    return x.isNegative() ? APInt::getAllOnes(w)
                          : (x.isZero() ? APInt::getZero(w) : APInt(w, 1));
  });
}

OpFoldResult NotOp::fold(FoldAdaptor adaptor) {
  if (Value v = foldInvolution(*this))
    return v;
  return foldUnary(adaptor.getX(), getType(), nullptr,
                   [](const APInt &x) { return ~x; });
}

//===----------------------------------------------------------------------===//
// Binary folders
//===----------------------------------------------------------------------===//

/// `x op c` folds to x when c is the splat identity and nothing broadcasts.
static Value foldIdentity(Value x, Attribute c, double identity, Type result) {
  if (x.getType() == result && isSplatValue(c, identity))
    return x;
  return {};
}

static bool isIntegerTensor(Type t) {
  return isa<IntegerType>(cast<ShapedType>(t).getElementType());
}

OpFoldResult AddOp::fold(FoldAdaptor adaptor) {
  // x + 0.0 is not x for x = -0.0, so only integers fold the identity.
  if (isIntegerTensor(getType())) {
    if (Value v = foldIdentity(getLhs(), adaptor.getRhs(), 0, getType()))
      return v;
    if (Value v = foldIdentity(getRhs(), adaptor.getLhs(), 0, getType()))
      return v;
  }
  return foldBinary(
      adaptor.getLhs(), adaptor.getRhs(), getType(),
      [](double a, double b) { return a + b; },
      [](const APInt &a, const APInt &b) { return a + b; });
}

OpFoldResult SubOp::fold(FoldAdaptor adaptor) {
  // x - 0.0 is x for every x, -0.0 included.
  if (Value v = foldIdentity(getLhs(), adaptor.getRhs(), 0, getType()))
    return v;
  return foldBinary(
      adaptor.getLhs(), adaptor.getRhs(), getType(),
      [](double a, double b) { return a - b; },
      [](const APInt &a, const APInt &b) { return a - b; });
}

OpFoldResult MulOp::fold(FoldAdaptor adaptor) {
  if (Value v = foldIdentity(getLhs(), adaptor.getRhs(), 1, getType()))
    return v;
  if (Value v = foldIdentity(getRhs(), adaptor.getLhs(), 1, getType()))
    return v;
  return foldBinary(
      adaptor.getLhs(), adaptor.getRhs(), getType(),
      [](double a, double b) { return a * b; },
      [](const APInt &a, const APInt &b) { return a * b; });
}

OpFoldResult DivOp::fold(FoldAdaptor adaptor) {
  if (Value v = foldIdentity(getLhs(), adaptor.getRhs(), 1, getType()))
    return v;
  return foldBinary(
      adaptor.getLhs(), adaptor.getRhs(), getType(),
      [](double a, double b) { return a / b; }, floorDiv);
}

OpFoldResult PowOp::fold(FoldAdaptor adaptor) {
  if (Value v = foldIdentity(getLhs(), adaptor.getRhs(), 1, getType()))
    return v;
  return foldBinary(
      adaptor.getLhs(), adaptor.getRhs(), getType(),
      [](double a, double b) { return std::pow(a, b); }, intPow);
}

OpFoldResult RemOp::fold(FoldAdaptor adaptor) {
  return foldBinary(adaptor.getLhs(), adaptor.getRhs(), getType(), pyMod,
                    floorRem);
}

static double nanMax(double a, double b) {
  return std::isnan(a) || std::isnan(b) ? NAN : std::max(a, b);
}
static double nanMin(double a, double b) {
  return std::isnan(a) || std::isnan(b) ? NAN : std::min(a, b);
}

OpFoldResult MaximumOp::fold(FoldAdaptor adaptor) {
  if (getLhs() == getRhs() && getLhs().getType() == getType())
    return getLhs();
  return foldBinary(
      adaptor.getLhs(), adaptor.getRhs(), getType(), nanMax,
      [](const APInt &a, const APInt &b) { return a.sge(b) ? a : b; });
}

OpFoldResult MinimumOp::fold(FoldAdaptor adaptor) {
  if (getLhs() == getRhs() && getLhs().getType() == getType())
    return getLhs();
  return foldBinary(
      adaptor.getLhs(), adaptor.getRhs(), getType(), nanMin,
      [](const APInt &a, const APInt &b) { return a.sle(b) ? a : b; });
}

OpFoldResult AndOp::fold(FoldAdaptor adaptor) {
  if (getLhs() == getRhs() && getLhs().getType() == getType())
    return getLhs();
  return foldBinary(adaptor.getLhs(), adaptor.getRhs(), getType(), nullptr,
                    [](const APInt &a, const APInt &b) { return a & b; });
}

OpFoldResult OrOp::fold(FoldAdaptor adaptor) {
  if (getLhs() == getRhs() && getLhs().getType() == getType())
    return getLhs();
  return foldBinary(adaptor.getLhs(), adaptor.getRhs(), getType(), nullptr,
                    [](const APInt &a, const APInt &b) { return a | b; });
}

OpFoldResult XorOp::fold(FoldAdaptor adaptor) {
  return foldBinary(adaptor.getLhs(), adaptor.getRhs(), getType(), nullptr,
                    [](const APInt &a, const APInt &b) { return a ^ b; });
}

OpFoldResult CompareOp::fold(FoldAdaptor adaptor) {
  CompareDirection dir = getDirection();
  auto floatCmp = [dir](double a, double b) {
    switch (dir) {
    case CompareDirection::EQ:
      return a == b;
    case CompareDirection::NE:
      return a != b;
    case CompareDirection::LT:
      return a < b;
    case CompareDirection::LE:
      return a <= b;
    case CompareDirection::GT:
      return a > b;
    case CompareDirection::GE:
      return a >= b;
    }
    llvm_unreachable("unknown direction");
  };
  // i1 compares as unsigned (false < true), as numpy does for bool.
  bool isBool = getLhs().getType().getElementType().isInteger(1);
  auto intCmp = [dir, isBool](const APInt &a, const APInt &b) {
    switch (dir) {
    case CompareDirection::EQ:
      return a == b;
    case CompareDirection::NE:
      return a != b;
    case CompareDirection::LT:
      return isBool ? a.ult(b) : a.slt(b);
    case CompareDirection::LE:
      return isBool ? a.ule(b) : a.sle(b);
    case CompareDirection::GT:
      return isBool ? a.ugt(b) : a.sgt(b);
    case CompareDirection::GE:
      return isBool ? a.uge(b) : a.sge(b);
    }
    llvm_unreachable("unknown direction");
  };
  return foldCompare(adaptor.getLhs(), adaptor.getRhs(), getType(), floatCmp,
                     intCmp);
}

OpFoldResult SelectOp::fold(FoldAdaptor adaptor) {
  Value picked;
  if (isSplatValue(adaptor.getCond(), 1))
    picked = getOnTrue();
  else if (isSplatValue(adaptor.getCond(), 0))
    picked = getOnFalse();
  else if (getOnTrue() == getOnFalse())
    picked = getOnTrue();
  if (picked && picked.getType() == getType())
    return picked;
  return {};
}

OpFoldResult CastOp::fold(FoldAdaptor adaptor) {
  if (getX().getType() == getType())
    return getX();
  auto dense = dyn_cast_or_null<DenseElementsAttr>(adaptor.getX());
  auto rt = dyn_cast<RankedTensorType>(getType());
  if (!dense || !rt || !rt.hasStaticShape() ||
      rt.getNumElements() > kMaxFoldElements)
    return {};
  Type from = dense.getElementType(), to = rt.getElementType();
  if (isa<FloatType>(from) && isa<FloatType>(to))
    return dense.mapValues(to, [&](const APFloat &v) {
      APFloat c = v;
      bool lost;
      c.convert(cast<FloatType>(to).getFloatSemantics(),
                APFloat::rmNearestTiesToEven, &lost);
      return c.bitcastToAPInt();
    });
  if (isa<IntegerType>(from) && isa<IntegerType>(to)) {
    unsigned w = to.getIntOrFloatBitWidth();
    bool fromBool = from.isInteger(1);
    return dense.mapValues(to, [&](const APInt &v) {
      if (w == 1)
        return APInt(1, !v.isZero());
      return fromBool ? v.zext(w) : v.sextOrTrunc(w);
    });
  }
  if (isa<FloatType>(from)) { // float -> int (toward zero) or -> i1 (x != 0)
    unsigned w = to.getIntOrFloatBitWidth();
    return dense.mapValues(to, [&](const APFloat &v) {
      if (w == 1)
        return APInt(1, !v.isZero());
      APSInt result(w, /*isUnsigned=*/false);
      bool exact;
      v.convertToInteger(result, APFloat::rmTowardZero, &exact);
      return APInt(result);
    });
  }
  if (isa<FloatType>(to)) { // int -> float
    bool fromBool = from.isInteger(1);
    return dense.mapValues(to, [&](const APInt &v) {
      APFloat f(cast<FloatType>(to).getFloatSemantics());
      f.convertFromAPInt(v, /*isSigned=*/!fromBool,
                         APFloat::rmNearestTiesToEven);
      return f.bitcastToAPInt();
    });
  }
  return {};
}
