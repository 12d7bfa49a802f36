//===- ShapeOps.cpp - reshape, transpose, slice, gather, ... --------------===//

#include "dialects/Paddle/IR/FoldUtils.h"
#include "dialects/Paddle/IR/PaddleOps.h"

using namespace mlir;
using namespace mlir::paddle;

/// A small dense constant, or null: folding larger ones would duplicate big
/// tensors in the IR.
static DenseElementsAttr getSmallDense(Attribute attr) {
  auto dense = dyn_cast_if_present<DenseElementsAttr>(attr);
  if (!dense || dense.getNumElements() > kMaxFoldElements)
    return {};
  return dense;
}

/// True when the op's result is its input `x` unchanged: the type inference
/// (`inferred`, from x and the attributes) gives x's own type and so does
/// the written result type. A written type alone is not enough: it may be
/// more dynamic than the inferred one, and folding would drop the run-time
/// size check of the lowering.
static bool
isIdentity(Value x, Type written,
           function_ref<LogicalResult(SmallVectorImpl<Type> &)> infer) {
  SmallVector<Type> inferred;
  return written == x.getType() && succeeded(infer(inferred)) &&
         inferred.size() == 1 && inferred.front() == x.getType();
}

/// The splat `attr` with the static type `type`, or null.
static Attribute resplat(Attribute attr, Type type) {
  auto dense = dyn_cast_if_present<DenseElementsAttr>(attr);
  auto rt = dyn_cast<RankedTensorType>(type);
  if (!dense || !dense.isSplat() || !rt || !rt.hasStaticShape())
    return {};
  return DenseElementsAttr::get(rt, dense.getSplatValue<Attribute>());
}

//===----------------------------------------------------------------------===//
// ReshapeOp
//===----------------------------------------------------------------------===//

OpFoldResult ReshapeOp::fold(FoldAdaptor adaptor) {
  if (isIdentity(getX(), getType(), [&](SmallVectorImpl<Type> &inferred) {
        return inferReshape(std::nullopt, getX().getType(), getShape(),
                            inferred);
      }))
    return getX();
  if (getType().hasStaticShape())
    if (auto dense = getSmallDense(adaptor.getX()))
      return dense.reshape(getType());
  // reshape(reshape(y)) = reshape(y): only the element order matters.
  if (auto inner = getX().getDefiningOp<ReshapeOp>()) {
    getXMutable().assign(inner.getX());
    return getResult();
  }
  return {};
}

//===----------------------------------------------------------------------===//
// BroadcastToOp
//===----------------------------------------------------------------------===//

OpFoldResult BroadcastToOp::fold(FoldAdaptor adaptor) {
  if (isIdentity(getX(), getType(), [&](SmallVectorImpl<Type> &inferred) {
        return inferBroadcastTo(std::nullopt, getX().getType(), getShape(),
                                inferred);
      }))
    return getX();
  return resplat(adaptor.getX(), getType());
}

//===----------------------------------------------------------------------===//
// TransposeOp
//===----------------------------------------------------------------------===//

OpFoldResult TransposeOp::fold(FoldAdaptor adaptor) {
  ArrayRef<int64_t> perm = getPerm();
  if (llvm::equal(perm, llvm::seq<int64_t>(0, perm.size())) &&
      getX().getType() == getType())
    return getX();
  // transpose(transpose(y, inner), perm): result[i] = y dim inner[perm[i]].
  if (auto inner = getX().getDefiningOp<TransposeOp>()) {
    SmallVector<int64_t> composed;
    for (int64_t p : perm)
      composed.push_back(inner.getPerm()[p]);
    getXMutable().assign(inner.getX());
    setPerm(composed);
    return getResult();
  }
  if (Attribute splat = resplat(adaptor.getX(), getType()))
    return splat;
  auto dense = getSmallDense(adaptor.getX());
  if (!dense || !getType().hasStaticShape())
    return {};
  // Walk the result in row-major order and read the matching input element.
  auto inType = cast<RankedTensorType>(dense.getType());
  ArrayRef<int64_t> inShape = inType.getShape(),
                    outShape = getType().getShape();
  int64_t rank = inShape.size();
  SmallVector<int64_t> inStrides(rank, 1);
  for (int64_t d = rank - 2; d >= 0; --d)
    inStrides[d] = inStrides[d + 1] * inShape[d + 1];
  SmallVector<Attribute> in(dense.getValues<Attribute>());
  SmallVector<Attribute> out;
  out.reserve(in.size());
  SmallVector<int64_t> index(rank, 0);
  for (int64_t n = 0, e = getType().getNumElements(); n < e; ++n) {
    int64_t offset = 0;
    for (int64_t d = 0; d < rank; ++d)
      offset += index[d] * inStrides[perm[d]];
    out.push_back(in[offset]);
    for (int64_t d = rank - 1; d >= 0; --d) {
      if (++index[d] < outShape[d])
        break;
      index[d] = 0;
    }
  }
  return DenseElementsAttr::get(getType(), out);
}

bool TransposeOp::movesOnlyUnitDims() {
  auto type = cast<RankedTensorType>(getX().getType());
  if (!type.hasStaticShape())
    return false;
  int64_t last = -1;
  for (int64_t p : getPerm()) {
    if (type.getDimSize(p) == 1)
      continue;
    if (p < last)
      return false;
    last = p;
  }
  return true;
}

//===----------------------------------------------------------------------===//
// SliceOp, ConcatOp, PadOp
//===----------------------------------------------------------------------===//

OpFoldResult SliceOp::fold(FoldAdaptor) {
  // A static slice from 0 with stride 1 that keeps every size is the input.
  if (getX().getType() == getType() && getType().hasStaticShape() &&
      llvm::all_of(getStart(), [](int64_t s) { return s == 0; }) &&
      llvm::all_of(getStride(), [](int64_t s) { return s == 1; }))
    return getX();
  return {};
}

OpFoldResult ConcatOp::fold(FoldAdaptor) {
  if (getInputs().size() == 1 && getInputs().front().getType() == getType())
    return getInputs().front();
  return {};
}

OpFoldResult PadOp::fold(FoldAdaptor) {
  auto isZero = [](int64_t v) { return v == 0; };
  if (getX().getType() == getType() && llvm::all_of(getLow(), isZero) &&
      llvm::all_of(getHigh(), isZero))
    return getX();
  return {};
}

LogicalResult PadOp::verify() {
  Type elementType = getX().getType().getElementType();
  Attribute value = getValue();
  if (!isa<IntegerAttr, FloatAttr>(value) ||
      cast<TypedAttr>(value).getType() != elementType)
    return emitOpError("value must be an integer or float attribute of the "
                       "element type ")
           << elementType << ", got " << value;
  return success();
}
