//===- ReductionOps.cpp - reduction paddle ops ----------------------------===//

#include "dialects/Paddle/IR/FoldUtils.h"
#include "dialects/Paddle/IR/PaddleOps.h"

using namespace mlir;
using namespace mlir::paddle;

//===----------------------------------------------------------------------===//
// Folding helpers
//===----------------------------------------------------------------------===//

/// The reduced dims of `op`, sorted, or failure when the axes are invalid
/// (the verifier reports that; folders must just not fold).
template <typename OpTy>
static FailureOr<SmallVector<int64_t>> reducedDims(OpTy op) {
  return normalizeAxes(std::nullopt, op.getAxes(),
                       op.getX().getType().getRank());
}

/// A reduction that reduces nothing, or only dims of static size 1 that it
/// keeps, returns its input unchanged when the types agree.
template <typename OpTy> static Value foldTrivialReduction(OpTy op) {
  if (op.getX().getType() != op.getType())
    return {};
  auto dims = reducedDims(op);
  if (failed(dims))
    return {};
  for (int64_t d : *dims)
    if (op.getX().getType().getDimSize(d) != 1)
      return {};
  return op.getX();
}

namespace {
enum class FoldKind { Sum, Prod, Max, Min };
} // namespace

/// Folds a reduction of a constant with a static, small shape. Floats
/// accumulate in the type the lowering uses (f32 for f16/bf16) and in the
/// same order (ascending row-major position), so the folded value is the one
/// the compiled code computes.
template <typename OpTy>
static Attribute foldConstantReduction(OpTy op, Attribute input,
                                       FoldKind kind) {
  auto dense = dyn_cast_or_null<DenseElementsAttr>(input);
  auto xt = op.getX().getType();
  auto rt = dyn_cast<RankedTensorType>(op.getType());
  if (!dense || !xt.hasStaticShape() || !rt || !rt.hasStaticShape() ||
      xt.getNumElements() == 0 || xt.getNumElements() > kMaxFoldElements)
    return {};
  auto dims = reducedDims(op);
  if (failed(dims))
    return {};

  // Output position of each input position: the row-major index over the
  // kept dims (the same with or without keepdims).
  int64_t rank = xt.getRank(), n = xt.getNumElements();
  auto outIndex = [&](int64_t linear) {
    int64_t out = 0, stride = 1;
    for (int64_t d = rank - 1; d >= 0; --d) {
      int64_t size = xt.getDimSize(d), idx = linear % size;
      linear /= size;
      if (llvm::is_contained(*dims, d))
        continue;
      out += idx * stride;
      stride *= size;
    }
    return out;
  };
  int64_t numOut = rt.getNumElements();
  SmallVector<bool> seen(numOut, false);

  if (auto ft = dyn_cast<FloatType>(xt.getElementType())) {
    const llvm::fltSemantics &sem = ft.isF16() || ft.isBF16()
                                        ? APFloat::IEEEsingle()
                                        : ft.getFloatSemantics();
    SmallVector<APFloat> acc(numOut, APFloat(sem));
    auto values = dense.getValues<APFloat>();
    for (int64_t i = 0; i < n; ++i) {
      APFloat v = dense.isSplat() ? dense.getSplatValue<APFloat>() : values[i];
      bool lost;
      v.convert(sem, APFloat::rmNearestTiesToEven, &lost);
      int64_t o = outIndex(i);
      if (!seen[o]) {
        seen[o] = true;
        acc[o] = v;
        continue;
      }
      switch (kind) {
      case FoldKind::Sum:
        acc[o].add(v, APFloat::rmNearestTiesToEven);
        break;
      case FoldKind::Prod:
        acc[o].multiply(v, APFloat::rmNearestTiesToEven);
        break;
      case FoldKind::Max:
        acc[o] = llvm::maximum(acc[o], v);
        break;
      case FoldKind::Min:
        acc[o] = llvm::minimum(acc[o], v);
        break;
      }
    }
    for (APFloat &a : acc) {
      bool lost;
      a.convert(ft.getFloatSemantics(), APFloat::rmNearestTiesToEven, &lost);
    }
    return DenseElementsAttr::get(rt, acc);
  }

  unsigned width = xt.getElementType().getIntOrFloatBitWidth();
  SmallVector<APInt> acc(numOut, APInt(width, 0));
  auto values = dense.getValues<APInt>();
  for (int64_t i = 0; i < n; ++i) {
    APInt v = dense.isSplat() ? dense.getSplatValue<APInt>() : values[i];
    int64_t o = outIndex(i);
    if (!seen[o]) {
      seen[o] = true;
      acc[o] = v;
      continue;
    }
    switch (kind) {
    case FoldKind::Sum:
      acc[o] += v; // wraps, as the lowering's arith.addi
      break;
    case FoldKind::Prod:
      acc[o] *= v;
      break;
    case FoldKind::Max:
      acc[o] = llvm::APIntOps::smax(acc[o], v);
      break;
    case FoldKind::Min:
      acc[o] = llvm::APIntOps::smin(acc[o], v);
      break;
    }
  }
  return DenseElementsAttr::get(rt, acc);
}

//===----------------------------------------------------------------------===//
// Folders
//===----------------------------------------------------------------------===//

#define PADDLE_FOLD_REDUCTION(OP, KIND)                                        \
  OpFoldResult OP::fold(FoldAdaptor adaptor) {                                 \
    if (Value v = foldTrivialReduction(*this))                                 \
      return v;                                                                \
    return foldConstantReduction(*this, adaptor.getX(), FoldKind::KIND);       \
  }
PADDLE_FOLD_REDUCTION(ReduceSumOp, Sum)
PADDLE_FOLD_REDUCTION(ReduceProdOp, Prod)
PADDLE_FOLD_REDUCTION(ReduceMaxOp, Max)
PADDLE_FOLD_REDUCTION(ReduceMinOp, Min)
#undef PADDLE_FOLD_REDUCTION

OpFoldResult ReduceMeanOp::fold(FoldAdaptor) {
  return foldTrivialReduction(*this);
}

/// argmax along a dim of static size 1 is 0 everywhere.
OpFoldResult ArgmaxOp::fold(FoldAdaptor) {
  auto xt = getX().getType();
  auto rt = dyn_cast<RankedTensorType>(getType());
  auto axis = normalizeAxis(std::nullopt, getAxis(), xt.getRank());
  if (failed(axis) || xt.getDimSize(*axis) != 1 || !rt || !rt.hasStaticShape())
    return {};
  return DenseElementsAttr::get(rt, APInt(64, 0));
}

//===----------------------------------------------------------------------===//
// Verifiers: reductions without an identity
//===----------------------------------------------------------------------===//

/// max, min and argmax of nothing have no value: numpy raises, and so does
/// the verifier for a static dim of size 0 (the lowering checks dynamic
/// ones at run time).
static LogicalResult
verifyReducesSomething(Operation *op, RankedTensorType xt,
                       std::optional<ArrayRef<int64_t>> axes, StringRef what) {
  // Invalid axes are the type inference's error, reported before this.
  auto dims = normalizeAxes(std::nullopt, axes, xt.getRank());
  if (failed(dims))
    return success();
  for (int64_t d : *dims)
    if (xt.getDimSize(d) == 0)
      return op->emitOpError()
             << "reduces dim " << d << " of size 0, which has no " << what
             << " (numpy raises)";
  return success();
}

LogicalResult ReduceMaxOp::verify() {
  if (getAllowEmpty())
    return success();
  return verifyReducesSomething(*this, getX().getType(), getAxes(), "maximum");
}

LogicalResult ReduceMinOp::verify() {
  if (getAllowEmpty())
    return success();
  return verifyReducesSomething(*this, getX().getType(), getAxes(), "minimum");
}

LogicalResult ArgmaxOp::verify() {
  int64_t axis = getAxis();
  return verifyReducesSomething(*this, getX().getType(), ArrayRef(axis),
                                "largest element");
}
