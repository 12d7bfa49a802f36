//===- TypeInference.cpp - shapes of paddle op results --------------------===//

#include "dialects/Paddle/IR/TypeInference.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Operation.h"
#include "llvm/ADT/SmallSet.h"
#include "llvm/Support/MathExtras.h"

#include <limits>

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

bool mlir::paddle::areCompatibleAccumulatorReturnTypes(TypeRange inferred,
                                                       TypeRange written) {
  SmallVector<Type> widened(inferred);
  for (auto [a, b] : llvm::zip(widened, written)) {
    auto ta = dyn_cast<RankedTensorType>(a);
    auto tb = dyn_cast<RankedTensorType>(b);
    if (ta && tb && isa<Float16Type, BFloat16Type>(ta.getElementType()) &&
        tb.getElementType().isF32())
      a = ta.clone(tb.getElementType());
  }
  return areCompatibleReturnTypes(widened, written);
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

int64_t mlir::paddle::getElementByteSize(Type type) {
  if (type.isIndex())
    return 8;
  if (type.isIntOrFloat())
    return llvm::divideCeil(type.getIntOrFloatBitWidth(), 8);
  return 0;
}

LogicalResult
mlir::paddle::verifyTensorSize(function_ref<InFlightDiagnostic()> emitError,
                               Type type, const Twine &what) {
  auto shaped = dyn_cast<ShapedType>(type);
  if (!shaped || !shaped.hasRank() || llvm::is_contained(shaped.getShape(), 0))
    return success();
  int64_t bytes =
      std::max<int64_t>(getElementByteSize(shaped.getElementType()), 1);
  for (int64_t d : shaped.getShape())
    if (!ShapedType::isDynamic(d) && llvm::MulOverflow(bytes, d, bytes))
      return emitError() << what << " has shape " << shapeStr(shaped.getShape())
                         << " of " << shaped.getElementType()
                         << ": more than 2^63 - 1 bytes";
  return success();
}

LogicalResult mlir::paddle::verifyTensorSizes(Operation *op) {
  auto emit = [&] { return op->emitOpError(); };
  for (auto [i, type] : llvm::enumerate(op->getOperandTypes()))
    if (failed(verifyTensorSize(emit, type, "operand #" + Twine(i))))
      return failure();
  for (auto [i, type] : llvm::enumerate(op->getResultTypes()))
    if (failed(verifyTensorSize(emit, type, "result #" + Twine(i))))
      return failure();
  return success();
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
                                 shapeStr(rhs), " do not broadcast: dim ", i,
                                 " is ", a, " vs ", b);
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

/// Both operands of a binary op are ranked tensors of one element type.
static LogicalResult verifyBinaryOperands(std::optional<Location> loc,
                                          RankedTensorType lt,
                                          RankedTensorType rt) {
  if (!lt || !rt)
    return emitOptionalError(loc, "expects ranked tensor operands");
  if (lt.getElementType() != rt.getElementType())
    return emitOptionalError(loc, "operands have different element types ",
                             lt.getElementType(), " and ", rt.getElementType(),
                             "; insert a paddle.cast");
  return success();
}

LogicalResult
mlir::paddle::inferBroadcastBinary(std::optional<Location> loc, Type lhs,
                                   Type rhs, Type resultElementType,
                                   SmallVectorImpl<Type> &inferred) {
  auto lt = dyn_cast<RankedTensorType>(lhs);
  auto rt = dyn_cast<RankedTensorType>(rhs);
  if (failed(verifyBinaryOperands(loc, lt, rt)))
    return failure();
  auto shape = broadcastShapes(loc, lt.getShape(), rt.getShape());
  if (failed(shape))
    return failure();
  inferred.push_back(RankedTensorType::get(
      *shape, resultElementType ? resultElementType : lt.getElementType()));
  return success();
}

LogicalResult mlir::paddle::inferSelect(std::optional<Location> loc, Type cond,
                                        Type onTrue, Type onFalse,
                                        SmallVectorImpl<Type> &inferred) {
  auto ct = dyn_cast<RankedTensorType>(cond);
  auto tt = dyn_cast<RankedTensorType>(onTrue);
  auto ft = dyn_cast<RankedTensorType>(onFalse);
  if (!ct || !tt || !ft)
    return emitOptionalError(loc, "expects ranked tensor operands");
  if (tt.getElementType() != ft.getElementType())
    return emitOptionalError(loc,
                             "on_true and on_false have different "
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

// Named for this section so it cannot clash with helpers of the others.
static RankedTensorType rankedShapeOperand(Type t) {
  return dyn_cast<RankedTensorType>(t);
}

LogicalResult mlir::paddle::inferReshape(std::optional<Location> loc, Type x,
                                         ArrayRef<int64_t> shape,
                                         SmallVectorImpl<Type> &inferred) {
  auto xt = rankedShapeOperand(x);
  if (!xt)
    return emitOptionalError(loc, "expects a ranked tensor operand");
  int64_t inferIndex = -1, known = 1;
  for (auto [i, s] : llvm::enumerate(shape)) {
    if (s == -1) {
      if (inferIndex >= 0)
        return emitOptionalError(loc, "shape ", shapeStr(shape),
                                 " has more than one -1");
      inferIndex = i;
      continue;
    }
    if (s < 0)
      return emitOptionalError(loc, "shape ", shapeStr(shape),
                               " has a negative size other than -1");
    if (llvm::MulOverflow(known, s, known))
      return emitOptionalError(loc, "shape ", shapeStr(shape),
                               " has more elements than fit in 64 bits");
  }
  if (inferIndex >= 0 && known == 0)
    return emitOptionalError(loc, "shape ", shapeStr(shape),
                             " has a -1 and a zero size: the -1 is ambiguous");
  SmallVector<int64_t> out(shape);
  if (xt.hasStaticShape()) {
    int64_t count = xt.getNumElements();
    if (inferIndex >= 0) {
      if (count % known != 0)
        return emitOptionalError(loc, "cannot reshape ",
                                 shapeStr(xt.getShape()), " (", count,
                                 " elements) to ", shapeStr(shape));
      out[inferIndex] = count / known;
    } else if (count != known) {
      return emitOptionalError(loc, "cannot reshape ", shapeStr(xt.getShape()),
                               " (", count, " elements) to ", shapeStr(shape),
                               " (", known, " elements)");
    }
  } else if (inferIndex >= 0) {
    out[inferIndex] = ShapedType::kDynamic;
  }
  inferred.push_back(RankedTensorType::get(out, xt.getElementType()));
  return success();
}

LogicalResult mlir::paddle::inferBroadcastTo(std::optional<Location> loc,
                                             Type x, ArrayRef<int64_t> shape,
                                             SmallVectorImpl<Type> &inferred) {
  auto xt = rankedShapeOperand(x);
  if (!xt)
    return emitOptionalError(loc, "expects a ranked tensor operand");
  int64_t rank = shape.size(), xRank = xt.getRank();
  if (rank < xRank)
    return emitOptionalError(loc, "cannot broadcast rank ", xRank,
                             " to the smaller rank ", rank);
  SmallVector<int64_t> out(shape);
  for (int64_t d = 0; d < rank; ++d) {
    int64_t xd = d - (rank - xRank);
    int64_t target = shape[d];
    if (target < -1)
      return emitOptionalError(loc, "shape ", shapeStr(shape),
                               " has a negative size other than -1");
    if (xd < 0) {
      if (target == -1)
        return emitOptionalError(loc, "shape ", shapeStr(shape),
                                 " has -1 at dim ", d,
                                 ", which no dim of the operand aligns with");
      continue;
    }
    int64_t size = xt.getDimSize(xd);
    if (target == -1) {
      out[d] = size;
      continue;
    }
    if (!ShapedType::isDynamic(size) && size != 1 && size != target)
      return emitOptionalError(loc, "cannot broadcast ",
                               shapeStr(xt.getShape()), " to ", shapeStr(shape),
                               ": dim ", d, " is ", size, " vs ", target);
  }
  inferred.push_back(RankedTensorType::get(out, xt.getElementType()));
  return success();
}

LogicalResult mlir::paddle::inferTranspose(std::optional<Location> loc, Type x,
                                           ArrayRef<int64_t> perm,
                                           SmallVectorImpl<Type> &inferred) {
  auto xt = rankedShapeOperand(x);
  if (!xt)
    return emitOptionalError(loc, "expects a ranked tensor operand");
  int64_t rank = xt.getRank();
  if (static_cast<int64_t>(perm.size()) != rank)
    return emitOptionalError(loc, "perm ", shapeStr(perm), " has ", perm.size(),
                             " entries for rank ", rank);
  SmallVector<bool> seen(rank, false);
  SmallVector<int64_t> out;
  for (int64_t p : perm) {
    if (p < 0 || p >= rank || seen[p])
      return emitOptionalError(loc, "perm ", shapeStr(perm),
                               " is not a permutation of 0..", rank - 1);
    seen[p] = true;
    out.push_back(xt.getDimSize(p));
  }
  inferred.push_back(RankedTensorType::get(out, xt.getElementType()));
  return success();
}

int64_t mlir::paddle::sliceDimSize(int64_t start, int64_t limit, int64_t stride,
                                   int64_t size) {
  int64_t lo = std::min(start, size), hi = std::min(limit, size);
  if (hi <= lo)
    return 0;
  return (hi - lo - 1) / stride + 1; // ceil, without overflow
}

LogicalResult mlir::paddle::inferSlice(std::optional<Location> loc, Type x,
                                       ArrayRef<int64_t> start,
                                       ArrayRef<int64_t> limit,
                                       ArrayRef<int64_t> stride,
                                       SmallVectorImpl<Type> &inferred) {
  auto xt = rankedShapeOperand(x);
  if (!xt)
    return emitOptionalError(loc, "expects a ranked tensor operand");
  int64_t rank = xt.getRank();
  for (auto [name, list] :
       {std::pair<StringRef, ArrayRef<int64_t>>{"start", start},
        {"limit", limit},
        {"stride", stride}})
    if (static_cast<int64_t>(list.size()) != rank)
      return emitOptionalError(loc, name, " ", shapeStr(list), " has ",
                               list.size(), " entries for rank ", rank);
  SmallVector<int64_t> out;
  for (int64_t d = 0; d < rank; ++d) {
    if (start[d] < 0 || limit[d] < 0)
      return emitOptionalError(loc,
                               "start and limit must be non-negative, "
                               "got ",
                               start[d], " and ", limit[d], " at dim ", d);
    if (stride[d] <= 0)
      return emitOptionalError(loc, "stride must be positive, got ", stride[d],
                               " at dim ", d);
    int64_t n = xt.getDimSize(d);
    out.push_back(ShapedType::isDynamic(n)
                      ? ShapedType::kDynamic
                      : sliceDimSize(start[d], limit[d], stride[d], n));
  }
  inferred.push_back(RankedTensorType::get(out, xt.getElementType()));
  return success();
}

LogicalResult mlir::paddle::inferConcat(std::optional<Location> loc,
                                        TypeRange inputs, int64_t axis,
                                        SmallVectorImpl<Type> &inferred) {
  if (inputs.empty())
    return emitOptionalError(loc, "expects at least one input");
  SmallVector<RankedTensorType> types;
  for (Type t : inputs) {
    auto rt = rankedShapeOperand(t);
    if (!rt)
      return emitOptionalError(loc, "expects ranked tensor operands");
    types.push_back(rt);
  }
  RankedTensorType first = types.front();
  int64_t rank = first.getRank();
  if (rank == 0)
    return emitOptionalError(loc, "cannot concatenate rank-0 tensors");
  auto a = normalizeAxis(loc, axis, rank);
  if (failed(a))
    return failure();
  SmallVector<int64_t> out(first.getShape());
  out[*a] = 0;
  for (auto [i, t] : llvm::enumerate(types)) {
    if (t.getElementType() != first.getElementType())
      return emitOptionalError(loc, "input ", i, " has element type ",
                               t.getElementType(), " but input 0 has ",
                               first.getElementType());
    if (t.getRank() != rank)
      return emitOptionalError(loc, "input ", i, " has rank ", t.getRank(),
                               " but input 0 has rank ", rank);
    for (int64_t d = 0; d < rank; ++d) {
      int64_t s = t.getDimSize(d);
      if (d == *a) {
        if (ShapedType::isDynamic(s) || ShapedType::isDynamic(out[d]))
          out[d] = ShapedType::kDynamic;
        else if (llvm::AddOverflow(out[d], s, out[d]))
          return emitOptionalError(loc, "the size along axis ", *a,
                                   " does not fit in 64 bits");
        continue;
      }
      if (ShapedType::isDynamic(s))
        continue;
      if (!ShapedType::isDynamic(out[d]) && out[d] != s)
        return emitOptionalError(
            loc, "input ", i, " has shape ", shapeStr(t.getShape()),
            " but dim ", d, " must be ", out[d], " as in the other inputs");
      out[d] = s;
    }
  }
  inferred.push_back(RankedTensorType::get(out, first.getElementType()));
  return success();
}

LogicalResult mlir::paddle::inferPad(std::optional<Location> loc, Type x,
                                     ArrayRef<int64_t> low,
                                     ArrayRef<int64_t> high,
                                     SmallVectorImpl<Type> &inferred) {
  auto xt = rankedShapeOperand(x);
  if (!xt)
    return emitOptionalError(loc, "expects a ranked tensor operand");
  int64_t rank = xt.getRank();
  if (static_cast<int64_t>(low.size()) != rank ||
      static_cast<int64_t>(high.size()) != rank)
    return emitOptionalError(loc, "low ", shapeStr(low), " and high ",
                             shapeStr(high), " must have ", rank,
                             " entries, one per dim");
  SmallVector<int64_t> out;
  for (int64_t d = 0; d < rank; ++d) {
    if (low[d] < 0 || high[d] < 0)
      return emitOptionalError(loc, "padding must be non-negative, got low ",
                               low[d], " and high ", high[d], " at dim ", d);
    // The lowering adds low + high to a dynamic size: that sum must fit too.
    int64_t n = xt.getDimSize(d), added, size;
    if (llvm::AddOverflow(low[d], high[d], added) ||
        (!ShapedType::isDynamic(n) && llvm::AddOverflow(n, added, size)))
      return emitOptionalError(loc, "the padded size of dim ", d,
                               " does not fit in 64 bits");
    out.push_back(ShapedType::isDynamic(n) ? n : size);
  }
  inferred.push_back(RankedTensorType::get(out, xt.getElementType()));
  return success();
}

/// x.shape[:axis] + indices.shape + x.shape[axis+1:] for gather/scatter_add.
static FailureOr<RankedTensorType>
gatheredType(std::optional<Location> loc, Type x, Type indices, int64_t axis) {
  auto xt = rankedShapeOperand(x);
  auto it = rankedShapeOperand(indices);
  if (!xt || !it)
    return emitOptionalError(loc, "expects ranked tensor operands");
  if (xt.getRank() == 0)
    return emitOptionalError(loc, "expects an operand of rank >= 1");
  auto a = normalizeAxis(loc, axis, xt.getRank());
  if (failed(a))
    return failure();
  ArrayRef<int64_t> xs = xt.getShape();
  SmallVector<int64_t> out(xs.take_front(*a));
  llvm::append_range(out, it.getShape());
  llvm::append_range(out, xs.drop_front(*a + 1));
  return RankedTensorType::get(out, xt.getElementType());
}

LogicalResult mlir::paddle::inferGather(std::optional<Location> loc, Type x,
                                        Type indices, int64_t axis,
                                        SmallVectorImpl<Type> &inferred) {
  auto type = gatheredType(loc, x, indices, axis);
  if (failed(type))
    return failure();
  auto xt = cast<RankedTensorType>(x);
  int64_t a = axis < 0 ? axis + xt.getRank() : axis;
  // No index is valid for an empty dim (numpy raises even when another dim
  // makes the result empty). When there may be no indices, the lowering's
  // range check decides at run time.
  auto it = cast<RankedTensorType>(indices);
  if (xt.getDimSize(a) == 0 && it.hasStaticShape() && it.getNumElements() != 0)
    return emitOptionalError(loc, "cannot gather from dim ", a, " of size 0");
  inferred.push_back(*type);
  return success();
}

LogicalResult mlir::paddle::inferScatterAdd(std::optional<Location> loc, Type x,
                                            Type indices, Type updates,
                                            int64_t axis,
                                            SmallVectorImpl<Type> &inferred) {
  auto expected = gatheredType(loc, x, indices, axis);
  if (failed(expected))
    return failure();
  auto ut = rankedShapeOperand(updates);
  if (!ut)
    return emitOptionalError(loc, "expects ranked tensor operands");
  if (ut.getElementType() != expected->getElementType())
    return emitOptionalError(loc, "updates have element type ",
                             ut.getElementType(), " but x has ",
                             expected->getElementType());
  if (ut.getRank() != expected->getRank())
    return emitOptionalError(loc, "updates have shape ",
                             shapeStr(ut.getShape()),
                             " but must have x.shape[:axis] + indices.shape + "
                             "x.shape[axis+1:] = ",
                             shapeStr(expected->getShape()));
  for (auto [u, e] : llvm::zip(ut.getShape(), expected->getShape()))
    if (!ShapedType::isDynamic(u) && !ShapedType::isDynamic(e) && u != e)
      return emitOptionalError(loc, "updates have shape ",
                               shapeStr(ut.getShape()),
                               " but must have x.shape[:axis] + indices.shape "
                               "+ x.shape[axis+1:] = ",
                               shapeStr(expected->getShape()));
  inferred.push_back(x);
  return success();
}

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

LogicalResult mlir::paddle::inferLayerNorm(std::optional<Location> loc, Type x,
                                           Type scale, Type bias,
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

LogicalResult
mlir::paddle::inferBatchNormInference(std::optional<Location> loc, Type x,
                                      ArrayRef<Type> params,
                                      SmallVectorImpl<Type> &inferred) {
  static const char *names[] = {"scale", "bias", "mean", "variance"};
  auto xt = dyn_cast<RankedTensorType>(x);
  if (!xt)
    return emitOptionalError(loc, "expects a ranked tensor operand");
  if (xt.getRank() < 2)
    return emitOptionalError(loc,
                             "x must have rank at least 2 ([N, C, ...]), "
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
      return emitOptionalError(loc, name, " has ", size, " elements but x has ",
                               channels, " channels (dim 1)");
  }
  inferred.push_back(xt);
  return success();
}

// (end of reduction and normalization section)

//===----------------------------------------------------------------------===//
// NN ops
//===----------------------------------------------------------------------===//

LogicalResult mlir::paddle::inferMatmul(std::optional<Location> loc, Type lhs,
                                        Type rhs,
                                        SmallVectorImpl<Type> &inferred) {
  auto lt = dyn_cast<RankedTensorType>(lhs);
  auto rt = dyn_cast<RankedTensorType>(rhs);
  if (failed(verifyBinaryOperands(loc, lt, rt)))
    return failure();
  if (lt.getRank() < 1 || rt.getRank() < 1)
    return emitOptionalError(loc, "matmul operands must have rank >= 1, got ",
                             lt.getRank(), " and ", rt.getRank());
  ArrayRef<int64_t> ls = lt.getShape(), rs = rt.getShape();
  // The contracted dim: the last of lhs, the second to last of rhs (its only
  // one when rhs is a vector).
  int64_t lk = ls.back();
  int64_t rk = rs.size() == 1 ? rs[0] : rs[rs.size() - 2];
  if (!ShapedType::isDynamic(lk) && !ShapedType::isDynamic(rk) && lk != rk)
    return emitOptionalError(loc, "matmul contracted dims differ: lhs ",
                             shapeStr(ls), " has ", lk, ", rhs ", shapeStr(rs),
                             " has ", rk);
  ArrayRef<int64_t> lb = ls.drop_back(std::min<size_t>(ls.size(), 2));
  ArrayRef<int64_t> rb = rs.drop_back(std::min<size_t>(rs.size(), 2));
  auto batch = broadcastShapes(loc, lb, rb);
  if (failed(batch))
    return failure();
  SmallVector<int64_t> shape = *batch;
  if (ls.size() >= 2)
    shape.push_back(ls[ls.size() - 2]);
  if (rs.size() >= 2)
    shape.push_back(rs.back());
  inferred.push_back(RankedTensorType::get(shape, lt.getElementType()));
  return success();
}

/// Checks that `values` has `size` entries, each >= `min`.
static LogicalResult checkSpatialAttr(std::optional<Location> loc,
                                      StringRef name, ArrayRef<int64_t> values,
                                      size_t size, int64_t min) {
  if (values.size() != size)
    return emitOptionalError(loc, name, " must have ", size, " entries, got ",
                             values.size());
  for (int64_t v : values) {
    if (v < min)
      return emitOptionalError(loc, name, " must be >= ", min, ", got ",
                               shapeStr(values));
    // Bounded so that the size arithmetic cannot overflow.
    if (v >= (int64_t{1} << 31))
      return emitOptionalError(loc, name, " entries must be < 2^31, got ",
                               shapeStr(values));
  }
  return success();
}

LogicalResult mlir::paddle::inferConv2D(std::optional<Location> loc, Type input,
                                        Type filter, ArrayRef<int64_t> strides,
                                        ArrayRef<int64_t> padding,
                                        ArrayRef<int64_t> dilations,
                                        int64_t groups,
                                        SmallVectorImpl<Type> &inferred) {
  auto it = dyn_cast<RankedTensorType>(input);
  auto ft = dyn_cast<RankedTensorType>(filter);
  if (!it || !ft)
    return emitOptionalError(loc, "expects ranked tensor operands");
  if (it.getRank() != 4 || ft.getRank() != 4)
    return emitOptionalError(loc,
                             "conv2d expects a rank-4 NCHW input and a "
                             "rank-4 OIHW filter, got ranks ",
                             it.getRank(), " and ", ft.getRank());
  if (it.getElementType() != ft.getElementType())
    return emitOptionalError(loc, "operands have different element types ",
                             it.getElementType(), " and ", ft.getElementType(),
                             "; insert a paddle.cast");
  if (failed(checkSpatialAttr(loc, "strides", strides, 2, 1)) ||
      failed(checkSpatialAttr(loc, "padding", padding, 4, 0)) ||
      failed(checkSpatialAttr(loc, "dilations", dilations, 2, 1)))
    return failure();
  if (groups < 1)
    return emitOptionalError(loc, "groups must be >= 1, got ", groups);
  if (groups >= (int64_t{1} << 31))
    return emitOptionalError(loc, "groups must be < 2^31, got ", groups);
  ArrayRef<int64_t> in = it.getShape(), f = ft.getShape();
  auto isStatic = [](int64_t d) { return !ShapedType::isDynamic(d); };
  if (isStatic(in[1]) && in[1] % groups != 0)
    return emitOptionalError(loc, "input channels (", in[1],
                             ") are not divisible by groups (", groups, ")");
  if (isStatic(f[0]) && f[0] % groups != 0)
    return emitOptionalError(loc, "output channels (", f[0],
                             ") are not divisible by groups (", groups, ")");
  if (isStatic(in[1]) && isStatic(f[1]) && f[1] != in[1] / groups)
    return emitOptionalError(
        loc, "filter has ", f[1], " input channels per group, expected ",
        in[1] / groups, " (", in[1], " channels / ", groups, " groups)");
  SmallVector<int64_t> shape = {in[0], f[0]};
  for (int i = 0; i < 2; ++i) {
    int64_t size = in[2 + i], k = f[2 + i];
    if (!isStatic(size) || !isStatic(k)) {
      shape.push_back(ShapedType::kDynamic);
      continue;
    }
    int64_t extent, window;
    if (llvm::AddOverflow(size, padding[i], extent) ||
        llvm::AddOverflow(extent, padding[2 + i], extent) ||
        llvm::MulOverflow(dilations[i], k - 1, window) ||
        llvm::AddOverflow(window, int64_t{1}, window))
      return emitOptionalError(loc, "conv2d ", i == 0 ? "height" : "width",
                               " sizes do not fit in 64 bits");
    if (k < 1 || window > extent)
      return emitOptionalError(
          loc, "conv2d output ", i == 0 ? "height" : "width",
          " would be empty: padded input size ", extent,
          " is smaller than the dilated kernel size ", window);
    shape.push_back((extent - window) / strides[i] + 1);
  }
  inferred.push_back(RankedTensorType::get(shape, it.getElementType()));
  return success();
}

int64_t mlir::paddle::poolOutputSize(int64_t size, int64_t kernel,
                                     int64_t stride, int64_t padBefore,
                                     int64_t padAfter, bool ceilMode) {
  // 128 bits: a size near 2^63 plus the padding must not wrap (inferPool2D
  // rejects results that do not fit in 64 bits).
  __int128 span = static_cast<__int128>(size) + padBefore + padAfter - kernel;
  if (span < 0)
    return 0;
  __int128 out = (ceilMode ? (span + stride - 1) / stride : span / stride) + 1;
  // A ceil-mode window must start inside the input or the leading padding.
  if (ceilMode && (out - 1) * stride >= static_cast<__int128>(size) + padBefore)
    --out;
  return out > std::numeric_limits<int64_t>::max()
             ? std::numeric_limits<int64_t>::max()
             : static_cast<int64_t>(out);
}

LogicalResult mlir::paddle::inferPool2D(std::optional<Location> loc, Type input,
                                        ArrayRef<int64_t> kernel,
                                        ArrayRef<int64_t> strides,
                                        ArrayRef<int64_t> padding,
                                        bool ceilMode,
                                        SmallVectorImpl<Type> &inferred) {
  auto it = dyn_cast<RankedTensorType>(input);
  if (!it)
    return emitOptionalError(loc, "expects a ranked tensor operand");
  if (it.getRank() != 4)
    return emitOptionalError(loc,
                             "pooling expects a rank-4 NCHW input, got "
                             "rank ",
                             it.getRank());
  if (failed(checkSpatialAttr(loc, "kernel", kernel, 2, 1)) ||
      failed(checkSpatialAttr(loc, "strides", strides, 2, 1)) ||
      failed(checkSpatialAttr(loc, "padding", padding, 4, 0)))
    return failure();
  // As PyTorch: every window then holds at least one input element.
  for (int i = 0; i < 4; ++i)
    if (padding[i] > kernel[i % 2] / 2)
      return emitOptionalError(loc, "padding ", shapeStr(padding),
                               " exceeds half the kernel size ",
                               shapeStr(kernel));
  ArrayRef<int64_t> in = it.getShape();
  SmallVector<int64_t> shape = {in[0], in[1]};
  for (int i = 0; i < 2; ++i) {
    int64_t size = in[2 + i];
    if (ShapedType::isDynamic(size)) {
      shape.push_back(ShapedType::kDynamic);
      continue;
    }
    int64_t out = poolOutputSize(size, kernel[i], strides[i], padding[i],
                                 padding[2 + i], ceilMode);
    if (out == std::numeric_limits<int64_t>::max())
      return emitOptionalError(loc, "pooling output ",
                               i == 0 ? "height" : "width",
                               " does not fit in 64 bits");
    if (out <= 0)
      return emitOptionalError(
          loc, "pooling output ", i == 0 ? "height" : "width",
          " would be empty: input size ", size, " with padding ", padding[i],
          " + ", padding[2 + i], " is smaller than the kernel ", kernel[i]);
    shape.push_back(out);
  }
  inferred.push_back(RankedTensorType::get(shape, it.getElementType()));
  return success();
}

// (end of nn section)
