//===- TypeInference.cpp - shapes of paddle op results --------------------===//

#include "dialects/Paddle/IR/TypeInference.h"

#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/SmallSet.h"

using namespace mlir;
using namespace mlir::paddle;

bool mlir::paddle::areCompatibleReturnTypes(TypeRange inferred,
                                            TypeRange written) {
  if (inferred.size() != written.size())
    return false;
  for (auto [a, b] : llvm::zip(inferred, written)) {
    auto ta = dyn_cast<RankedTensorType>(a);
    auto tb = dyn_cast<RankedTensorType>(b);
    if (!ta || !tb) {
      if (a != b)
        return false;
      continue;
    }
    if (ta.getElementType() != tb.getElementType() ||
        ta.getRank() != tb.getRank())
      return false;
    for (auto [da, db] : llvm::zip(ta.getShape(), tb.getShape()))
      if (!ShapedType::isDynamic(da) && !ShapedType::isDynamic(db) && da != db)
        return false;
  }
  return true;
}

static std::string shapeStr(ArrayRef<int64_t> shape) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << "[";
  llvm::interleave(
      shape, os,
      [&](int64_t d) {
        if (ShapedType::isDynamic(d))
          os << "?";
        else
          os << d;
      },
      ", ");
  os << "]";
  return s;
}

FailureOr<SmallVector<int64_t>>
mlir::paddle::broadcastShapes(std::optional<Location> loc,
                              ArrayRef<int64_t> lhs, ArrayRef<int64_t> rhs) {
  size_t rank = std::max(lhs.size(), rhs.size());
  SmallVector<int64_t> out(rank);
  for (size_t i = 0; i < rank; ++i) {
    int64_t a = i < rank - lhs.size() ? 1 : lhs[i - (rank - lhs.size())];
    int64_t b = i < rank - rhs.size() ? 1 : rhs[i - (rank - rhs.size())];
    bool da = ShapedType::isDynamic(a), db = ShapedType::isDynamic(b);
    if (!da && !db) {
      if (a != b && a != 1 && b != 1)
        return emitOptionalError(loc, "shapes ", shapeStr(lhs), " and ",
                                 shapeStr(rhs),
                                 " do not broadcast: dim ", i, " is ", a,
                                 " vs ", b);
      out[i] = a == 1 ? b : a;
    } else if (da && db) {
      out[i] = ShapedType::kDynamic;
    } else {
      int64_t s = da ? b : a;
      out[i] = s == 1 ? ShapedType::kDynamic : s;
    }
  }
  return out;
}

LogicalResult mlir::paddle::inferBroadcastBinary(
    std::optional<Location> loc, Type lhs, Type rhs, Type resultElementType,
    SmallVectorImpl<Type> &inferred) {
  auto lt = dyn_cast<RankedTensorType>(lhs);
  auto rt = dyn_cast<RankedTensorType>(rhs);
  if (!lt || !rt)
    return emitOptionalError(loc, "expects ranked tensor operands");
  if (lt.getElementType() != rt.getElementType())
    return emitOptionalError(loc, "operands have different element types ",
                             lt.getElementType(), " and ",
                             rt.getElementType(),
                             "; insert a paddle.cast");
  auto shape = broadcastShapes(loc, lt.getShape(), rt.getShape());
  if (failed(shape))
    return failure();
  inferred.push_back(RankedTensorType::get(
      *shape, resultElementType ? resultElementType : lt.getElementType()));
  return success();
}

LogicalResult mlir::paddle::inferSelect(std::optional<Location> loc,
                                        Type cond, Type onTrue, Type onFalse,
                                        SmallVectorImpl<Type> &inferred) {
  auto ct = dyn_cast<RankedTensorType>(cond);
  auto tt = dyn_cast<RankedTensorType>(onTrue);
  auto ft = dyn_cast<RankedTensorType>(onFalse);
  if (!ct || !tt || !ft)
    return emitOptionalError(loc, "expects ranked tensor operands");
  if (tt.getElementType() != ft.getElementType())
    return emitOptionalError(loc, "on_true and on_false have different "
                                  "element types ",
                             tt.getElementType(), " and ", ft.getElementType());
  auto s1 = broadcastShapes(loc, tt.getShape(), ft.getShape());
  if (failed(s1))
    return failure();
  auto s2 = broadcastShapes(loc, ct.getShape(), *s1);
  if (failed(s2))
    return failure();
  inferred.push_back(RankedTensorType::get(*s2, tt.getElementType()));
  return success();
}

FailureOr<int64_t> mlir::paddle::normalizeAxis(std::optional<Location> loc,
                                               int64_t axis, int64_t rank,
                                               StringRef what) {
  if (axis < -rank || axis >= rank)
    return emitOptionalError(loc, what, " ", axis, " is out of range for rank ",
                             rank);
  return axis < 0 ? axis + rank : axis;
}

FailureOr<SmallVector<int64_t>>
mlir::paddle::normalizeAxes(std::optional<Location> loc,
                            std::optional<ArrayRef<int64_t>> axes,
                            int64_t rank) {
  SmallVector<int64_t> out;
  if (!axes) {
    for (int64_t i = 0; i < rank; ++i)
      out.push_back(i);
    return out;
  }
  llvm::SmallSet<int64_t, 8> seen;
  for (int64_t a : *axes) {
    auto n = normalizeAxis(loc, a, rank);
    if (failed(n))
      return failure();
    if (!seen.insert(*n).second)
      return emitOptionalError(loc, "axis ", a, " is repeated");
    out.push_back(*n);
  }
  llvm::sort(out);
  return out;
}

//===----------------------------------------------------------------------===//
// Shape ops
//===----------------------------------------------------------------------===//

// (end of shape section)

//===----------------------------------------------------------------------===//
// Reduction and normalization ops
//===----------------------------------------------------------------------===//

LogicalResult mlir::paddle::inferReduction(
    std::optional<Location> loc, Type x, std::optional<ArrayRef<int64_t>> axes,
    bool keepdims, Type resultElementType, SmallVectorImpl<Type> &inferred) {
  auto xt = dyn_cast<RankedTensorType>(x);
  if (!xt)
    return emitOptionalError(loc, "expects a ranked tensor operand");
  auto reduced = normalizeAxes(loc, axes, xt.getRank());
  if (failed(reduced))
    return failure();
  SmallVector<int64_t> shape;
  for (int64_t i = 0; i < xt.getRank(); ++i) {
    if (!llvm::is_contained(*reduced, i))
      shape.push_back(xt.getDimSize(i));
    else if (keepdims)
      shape.push_back(1);
  }
  inferred.push_back(RankedTensorType::get(
      shape, resultElementType ? resultElementType : xt.getElementType()));
  return success();
}

LogicalResult mlir::paddle::inferSoftmax(std::optional<Location> loc, Type x,
                                         int64_t axis,
                                         SmallVectorImpl<Type> &inferred) {
  auto xt = dyn_cast<RankedTensorType>(x);
  if (!xt)
    return emitOptionalError(loc, "expects a ranked tensor operand");
  if (xt.getRank() == 0)
    return emitOptionalError(loc, "expects an operand of rank at least 1");
  if (failed(normalizeAxis(loc, axis, xt.getRank())))
    return failure();
  inferred.push_back(xt);
  return success();
}

/// Checks that `param` broadcasts to `xt` without growing it.
static LogicalResult checkBroadcastsTo(std::optional<Location> loc,
                                       StringRef what, Type param,
                                       RankedTensorType xt) {
  auto pt = dyn_cast<RankedTensorType>(param);
  if (!pt)
    return emitOptionalError(loc, "expects ", what, " to be a ranked tensor");
  if (pt.getRank() > xt.getRank())
    return emitOptionalError(loc, what, " of shape ", shapeStr(pt.getShape()),
                             " has a higher rank than x of shape ",
                             shapeStr(xt.getShape()));
  auto shape = broadcastShapes(loc, xt.getShape(), pt.getShape());
  if (failed(shape))
    return failure();
  for (auto [b, d] : llvm::zip(*shape, xt.getShape()))
    if (!ShapedType::isDynamic(b) && !ShapedType::isDynamic(d) && b != d)
      return emitOptionalError(loc, what, " of shape ", shapeStr(pt.getShape()),
                               " does not broadcast to x of shape ",
                               shapeStr(xt.getShape()));
  return success();
}

LogicalResult mlir::paddle::inferLayerNorm(std::optional<Location> loc,
                                           Type x, Type scale, Type bias,
                                           ArrayRef<int64_t> axes,
                                           SmallVectorImpl<Type> &inferred) {
  auto xt = dyn_cast<RankedTensorType>(x);
  if (!xt)
    return emitOptionalError(loc, "expects a ranked tensor operand");
  if (axes.empty())
    return emitOptionalError(loc, "axes must name at least one dim");
  if (failed(normalizeAxes(loc, axes, xt.getRank())))
    return failure();
  if (scale && failed(checkBroadcastsTo(loc, "scale", scale, xt)))
    return failure();
  if (bias && failed(checkBroadcastsTo(loc, "bias", bias, xt)))
    return failure();
  inferred.push_back(xt);
  return success();
}

LogicalResult mlir::paddle::inferBatchNormInference(
    std::optional<Location> loc, Type x, ArrayRef<Type> params,
    SmallVectorImpl<Type> &inferred) {
  static const char *names[] = {"scale", "bias", "mean", "variance"};
  auto xt = dyn_cast<RankedTensorType>(x);
  if (!xt)
    return emitOptionalError(loc, "expects a ranked tensor operand");
  if (xt.getRank() < 2)
    return emitOptionalError(loc, "x must have rank at least 2 ([N, C, ...]), "
                                  "got rank ",
                             xt.getRank());
  if (params.size() != 4)
    return emitOptionalError(loc, "expects 4 parameters, got ", params.size());
  int64_t channels = xt.getDimSize(1);
  for (auto [name, param] : llvm::zip(names, params)) {
    auto pt = dyn_cast<RankedTensorType>(param);
    if (!pt || pt.getRank() != 1)
      return emitOptionalError(loc, name, " must be a 1-D tensor, got ", param);
    int64_t size = pt.getDimSize(0);
    if (!ShapedType::isDynamic(size) && !ShapedType::isDynamic(channels) &&
        size != channels)
      return emitOptionalError(loc, name, " has ", size,
                               " elements but x has ", channels,
                               " channels (dim 1)");
  }
  inferred.push_back(xt);
  return success();
}

// (end of reduction and normalization section)

//===----------------------------------------------------------------------===//
// NN ops
//===----------------------------------------------------------------------===//

// (end of nn section)
