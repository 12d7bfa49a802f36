//===- FoldUtils.cpp - constant folding helpers for paddle ops ------------===//

#include "dialects/Paddle/IR/FoldUtils.h"

using namespace mlir;
using namespace mlir::paddle;

static double toDouble(APFloat v) {
  bool lost;
  v.convert(APFloat::IEEEdouble(), APFloat::rmNearestTiesToEven, &lost);
  return v.convertToDouble();
}

static APFloat fromDouble(double d, FloatType type) {
  APFloat v(d);
  bool lost;
  v.convert(type.getFloatSemantics(), APFloat::rmNearestTiesToEven, &lost);
  return v;
}

/// The static result type when folding is allowed, else null.
static RankedTensorType foldableType(Type type) {
  auto rt = dyn_cast<RankedTensorType>(type);
  if (!rt || !rt.hasStaticShape() || rt.getNumElements() > kMaxFoldElements)
    return nullptr;
  return rt;
}

/// Reads element `i` of a constant that is a splat or has `n` elements.
template <typename T> static T elementAt(DenseElementsAttr attr, int64_t i) {
  if (attr.isSplat())
    return attr.getSplatValue<T>();
  return attr.getValues<T>()[i];
}

static bool operandFits(DenseElementsAttr attr, RankedTensorType rt) {
  return attr && (attr.isSplat() || attr.getType().getShape() == rt.getShape());
}

Attribute mlir::paddle::foldUnary(Attribute operand, Type resultType,
                                  FloatFn1 floatFn, IntFn1 intFn) {
  auto rt = foldableType(resultType);
  auto dense = dyn_cast_or_null<DenseElementsAttr>(operand);
  if (!rt || !operandFits(dense, rt))
    return {};
  int64_t n = rt.getNumElements();
  if (auto ft = dyn_cast<FloatType>(rt.getElementType())) {
    if (!floatFn)
      return {};
    SmallVector<APFloat> out;
    for (int64_t i = 0; i < n; ++i)
      out.push_back(
          fromDouble(floatFn(toDouble(elementAt<APFloat>(dense, i))), ft));
    return DenseElementsAttr::get(rt, out);
  }
  if (!intFn)
    return {};
  SmallVector<APInt> out;
  for (int64_t i = 0; i < n; ++i)
    out.push_back(intFn(elementAt<APInt>(dense, i)));
  return DenseElementsAttr::get(rt, out);
}

Attribute mlir::paddle::foldBinary(Attribute lhs, Attribute rhs,
                                   Type resultType, FloatFn2 floatFn,
                                   IntFn2 intFn) {
  auto rt = foldableType(resultType);
  auto a = dyn_cast_or_null<DenseElementsAttr>(lhs);
  auto b = dyn_cast_or_null<DenseElementsAttr>(rhs);
  if (!rt || !operandFits(a, rt) || !operandFits(b, rt))
    return {};
  int64_t n = rt.getNumElements();
  if (auto ft = dyn_cast<FloatType>(rt.getElementType())) {
    if (!floatFn)
      return {};
    SmallVector<APFloat> out;
    for (int64_t i = 0; i < n; ++i)
      out.push_back(fromDouble(floatFn(toDouble(elementAt<APFloat>(a, i)),
                                       toDouble(elementAt<APFloat>(b, i))),
                               ft));
    return DenseElementsAttr::get(rt, out);
  }
  if (!intFn)
    return {};
  SmallVector<APInt> out;
  for (int64_t i = 0; i < n; ++i)
    out.push_back(intFn(elementAt<APInt>(a, i), elementAt<APInt>(b, i)));
  return DenseElementsAttr::get(rt, out);
}

Attribute mlir::paddle::foldCompare(Attribute lhs, Attribute rhs,
                                    Type resultType, FloatCmp floatFn,
                                    IntCmp intFn) {
  auto rt = foldableType(resultType);
  auto a = dyn_cast_or_null<DenseElementsAttr>(lhs);
  auto b = dyn_cast_or_null<DenseElementsAttr>(rhs);
  if (!rt || !operandFits(a, rt) || !operandFits(b, rt))
    return {};
  int64_t n = rt.getNumElements();
  bool isFloat = isa<FloatType>(a.getElementType());
  SmallVector<bool> out;
  for (int64_t i = 0; i < n; ++i)
    out.push_back(isFloat
                      ? floatFn(toDouble(elementAt<APFloat>(a, i)),
                                toDouble(elementAt<APFloat>(b, i)))
                      : intFn(elementAt<APInt>(a, i), elementAt<APInt>(b, i)));
  return DenseElementsAttr::get(rt, out);
}

bool mlir::paddle::isSplatValue(Attribute attr, double value) {
  auto dense = dyn_cast_or_null<DenseElementsAttr>(attr);
  if (!dense || !dense.isSplat())
    return false;
  if (isa<FloatType>(dense.getElementType()))
    return toDouble(dense.getSplatValue<APFloat>()) == value;
  APInt v = dense.getSplatValue<APInt>();
  if (dense.getElementType().isInteger(1))
    return (v.isOne() ? 1.0 : 0.0) == value;
  return static_cast<double>(v.getSExtValue()) == value;
}
