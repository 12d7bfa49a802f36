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

// (end of reduction and normalization section)

//===----------------------------------------------------------------------===//
// NN ops
//===----------------------------------------------------------------------===//

LogicalResult mlir::paddle::inferMatmul(std::optional<Location> loc, Type lhs,
                                        Type rhs,
                                        SmallVectorImpl<Type> &inferred) {
  auto lt = dyn_cast<RankedTensorType>(lhs);
  auto rt = dyn_cast<RankedTensorType>(rhs);
  if (!lt || !rt)
    return emitOptionalError(loc, "expects ranked tensor operands");
  if (lt.getElementType() != rt.getElementType())
    return emitOptionalError(loc, "operands have different element types ",
                             lt.getElementType(), " and ", rt.getElementType(),
                             "; insert a paddle.cast");
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
  if (isStatic(in[1]) && isStatic(f[1]) && f[1] * groups != in[1])
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
    int64_t extent = size + padding[i] + padding[2 + i];
    int64_t window = dilations[i] * (k - 1) + 1;
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
  int64_t span = size + padBefore + padAfter - kernel;
  if (span < 0)
    return 0;
  int64_t out = (ceilMode ? (span + stride - 1) / stride : span / stride) + 1;
  // A ceil-mode window must start inside the input or the leading padding.
  if (ceilMode && (out - 1) * stride >= size + padBefore)
    --out;
  return out;
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
