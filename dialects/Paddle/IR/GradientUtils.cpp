//===- GradientUtils.cpp - building blocks of the gradient rules ----------===//

#include "dialects/Paddle/IR/GradientUtils.h"
#include "dialects/Paddle/IR/TypeInference.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include <limits>

using namespace mlir;
using namespace mlir::paddle;

static RankedTensorType tensorType(Value v) {
  return cast<RankedTensorType>(v.getType());
}

Value GradBuilder::scalar(Value like, double value) {
  Type et = tensorType(like).getElementType();
  auto type = RankedTensorType::get({}, et);
  Attribute elt =
      isa<FloatType>(et)
          ? Attribute(b.getFloatAttr(et, value))
          : Attribute(b.getIntegerAttr(et, static_cast<int64_t>(value)));
  return ConstantOp::create(b, loc, DenseElementsAttr::get(type, elt));
}

Value GradBuilder::zeros(RankedTensorType type, Value like) {
  Type et = type.getElementType();
  TypedAttr zero = isa<FloatType>(et) ? TypedAttr(b.getFloatAttr(et, 0.0))
                                      : TypedAttr(b.getIntegerAttr(et, 0));
  if (type.hasStaticShape())
    return ConstantOp::create(b, loc, DenseElementsAttr::get(type, zero));
  // Zeros never carry a gradient, so a tensor op is fine here: they are not
  // differentiated again.
  SmallVector<Value> sizes;
  for (auto [i, d] : llvm::enumerate(type.getShape()))
    if (ShapedType::isDynamic(d))
      sizes.push_back(tensor::DimOp::create(b, loc, like, i));
  Value scalarZero = arith::ConstantOp::create(b, loc, zero);
  return tensor::SplatOp::create(b, loc, type, scalarZero, sizes);
}

Value GradBuilder::convert(Value x, Type elementType) {
  auto type = tensorType(x).clone(elementType);
  return CastOp::create(b, loc, type, x);
}

Value GradBuilder::reduceSum(Value x, ArrayRef<int64_t> axes, bool keepdims) {
  return ReduceSumOp::create(b, loc, x, b.getDenseI64ArrayAttr(axes),
                             keepdims ? b.getUnitAttr() : UnitAttr());
}

Value GradBuilder::reduceMean(Value x, ArrayRef<int64_t> axes, bool keepdims) {
  return ReduceMeanOp::create(b, loc, x, b.getDenseI64ArrayAttr(axes),
                              keepdims ? b.getUnitAttr() : UnitAttr());
}

Value GradBuilder::transpose(Value x, ArrayRef<int64_t> perm) {
  return TransposeOp::create(b, loc, x, b.getDenseI64ArrayAttr(perm));
}

Value GradBuilder::slice(Value x, ArrayRef<int64_t> start,
                         ArrayRef<int64_t> limit, ArrayRef<int64_t> stride) {
  return SliceOp::create(b, loc, x, b.getDenseI64ArrayAttr(start),
                         b.getDenseI64ArrayAttr(limit),
                         b.getDenseI64ArrayAttr(stride));
}

Value GradBuilder::pad(Value x, ArrayRef<int64_t> low, ArrayRef<int64_t> high,
                       double value) {
  Type et = tensorType(x).getElementType();
  return PadOp::create(b, loc, x, b.getDenseI64ArrayAttr(low),
                       b.getDenseI64ArrayAttr(high), b.getFloatAttr(et, value));
}

Value GradBuilder::indices(ArrayRef<int64_t> values) {
  auto type = RankedTensorType::get({static_cast<int64_t>(values.size())},
                                    b.getI64Type());
  return ConstantOp::create(b, loc, DenseElementsAttr::get(type, values));
}

FailureOr<Value> GradBuilder::reshape(Value x, ArrayRef<int64_t> shape) {
  RankedTensorType xt = tensorType(x);
  if (xt.getShape() == shape)
    return x;
  SmallVector<int64_t> attr(shape);
  int dynamic = 0;
  for (int64_t &d : attr)
    if (ShapedType::isDynamic(d)) {
      d = -1;
      ++dynamic;
    }
  if (dynamic > 1)
    return emitError(loc) << "gradient needs a reshape of " << xt
                          << " to a shape with more than one dynamic dim";
  return ReshapeOp::create(b, loc, x, b.getDenseI64ArrayAttr(attr)).getResult();
}

Value GradBuilder::broadcastLike(Value x, Value like) {
  RankedTensorType xt = tensorType(x), lt = tensorType(like);
  if (xt.getShape() == lt.getShape() && xt.hasStaticShape())
    return x;
  if (lt.hasStaticShape())
    return BroadcastToOp::create(b, loc, x,
                                 b.getDenseI64ArrayAttr(lt.getShape()));
  return add(x, zeros(lt.clone(xt.getElementType()), like));
}

FailureOr<Value> GradBuilder::unbroadcast(Value grad, Value operand) {
  RankedTensorType gt = tensorType(grad), ot = tensorType(operand);
  int64_t lead = gt.getRank() - ot.getRank();
  if (lead < 0)
    return emitError(loc) << "gradient of rank " << gt.getRank()
                          << " cannot be summed to operand " << ot;
  SmallVector<int64_t> axes;
  bool dropsKeptDim = false;
  for (int64_t i = 0; i < lead; ++i)
    axes.push_back(i);
  for (int64_t i = 0; i < ot.getRank(); ++i)
    if (ot.getDimSize(i) == 1 && gt.getDimSize(lead + i) != 1) {
      axes.push_back(lead + i);
      dropsKeptDim = true;
    }
  if (axes.empty())
    return grad;
  Value sum = reduceSum(grad, axes, /*keepdims=*/false);
  if (!dropsKeptDim)
    return sum;
  return reshape(sum, ot.getShape());
}

FailureOr<Value> GradBuilder::expandReduced(Value grad, Value x,
                                            ArrayRef<int64_t> axes,
                                            bool keepdims) {
  RankedTensorType xt = tensorType(x);
  Value g = grad;
  if (!keepdims) {
    SmallVector<int64_t> kept(xt.getShape());
    for (int64_t a : axes)
      kept[a] = 1;
    FailureOr<Value> r = reshape(grad, kept);
    if (failed(r))
      return failure();
    g = *r;
  }
  return broadcastLike(g, x);
}

FailureOr<Value> GradBuilder::interleaveZeros(Value x,
                                              ArrayRef<int64_t> factors) {
  RankedTensorType xt = tensorType(x);
  if (llvm::all_of(factors, [](int64_t f) { return f == 1; }))
    return x;
  if (!xt.hasStaticShape())
    return emitError(loc) << "gradient needs zeros interleaved into " << xt
                          << ", which needs a static shape";
  // [a, b] with factors [2, 3] -> [a, 1, b, 1] -> pad the unit dims to
  // [a, 2, b, 3] -> [2a, 3b] -> slice off the trailing zeros.
  SmallVector<int64_t> expanded, padHigh, folded, limit;
  for (auto [d, f] : llvm::zip(xt.getShape(), factors)) {
    expanded.push_back(d);
    padHigh.push_back(0);
    if (f > 1) {
      expanded.push_back(1);
      padHigh.push_back(f - 1);
    }
    folded.push_back(d * f);
    limit.push_back(d == 0 ? 0 : (d - 1) * f + 1);
  }
  FailureOr<Value> r = reshape(x, expanded);
  if (failed(r))
    return failure();
  Value padded = pad(*r, SmallVector<int64_t>(padHigh.size(), 0), padHigh);
  FailureOr<Value> f = reshape(padded, folded);
  if (failed(f))
    return failure();
  return slice(*f, SmallVector<int64_t>(limit.size(), 0), limit,
               SmallVector<int64_t>(limit.size(), 1));
}

FailureOr<Value> GradBuilder::unslice(Value grad, RankedTensorType xt,
                                      ArrayRef<int64_t> start,
                                      ArrayRef<int64_t> limit,
                                      ArrayRef<int64_t> stride) {
  SmallVector<int64_t> low, high;
  for (int64_t d = 0; d < xt.getRank(); ++d) {
    int64_t n = xt.getDimSize(d);
    if (ShapedType::isDynamic(n)) {
      // Only a dim sliced whole keeps a dynamic size.
      if (start[d] != 0 || stride[d] != 1 ||
          limit[d] != std::numeric_limits<int64_t>::max())
        return emitError(loc) << "gradient of a slice of dynamic dim " << d
                              << " is not supported";
      low.push_back(0);
      high.push_back(0);
      continue;
    }
    int64_t s = std::min(start[d], n);
    int64_t m = sliceDimSize(start[d], limit[d], stride[d], n);
    if (m == 0)
      return zeros(xt, nullptr);
    low.push_back(s);
    high.push_back(n - s - ((m - 1) * stride[d] + 1));
  }
  FailureOr<Value> spread = interleaveZeros(grad, stride);
  if (failed(spread))
    return failure();
  if (llvm::all_of(low, [](int64_t v) { return v == 0; }) &&
      llvm::all_of(high, [](int64_t v) { return v == 0; }))
    return *spread;
  return pad(*spread, low, high);
}

SmallVector<int64_t>
mlir::paddle::reductionAxes(std::optional<ArrayRef<int64_t>> axes,
                            int64_t rank) {
  // The op verified its axes: normalizing them cannot fail.
  return *normalizeAxes(std::nullopt, axes, rank);
}
