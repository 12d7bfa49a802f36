//===- GradientUtils.h - building blocks of the gradient rules ---*- C++
//-*-===//
//
// A small builder of paddle ops with inferred result types, plus the shape
// plumbing every category of gradient rules needs: zeros, reshaping to a
// given type, and un-broadcasting (summing a gradient back to the shape of
// an operand that was broadcast). Used only by the Gradient*.cpp files.
//
//===----------------------------------------------------------------------===//

#ifndef PADDLE_DIALECT_PADDLE_IR_GRADIENTUTILS_H
#define PADDLE_DIALECT_PADDLE_IR_GRADIENTUTILS_H

#include "dialects/Paddle/IR/PaddleOps.h"

namespace mlir::paddle {

/// Builds paddle ops at one location; every method infers the result type.
/// Methods returning FailureOr emit an error at the location when the
/// shapes do not allow the rewrite (dynamic dims where static sizes are
/// needed).
struct GradBuilder {
  OpBuilder &b;
  Location loc;

  /// A rank-0 constant with the element type of `like` (a tensor value).
  Value scalar(Value like, double value);
  /// Zeros of `type`; dynamic dims take their sizes from the same dims of
  /// `like` (a value of a compatible shape; unused for static types).
  Value zeros(RankedTensorType type, Value like);
  Value zerosLike(Value like) {
    return zeros(cast<RankedTensorType>(like.getType()), like);
  }

  Value add(Value x, Value y) { return AddOp::create(b, loc, x, y); }
  Value sub(Value x, Value y) { return SubOp::create(b, loc, x, y); }
  Value mul(Value x, Value y) { return MulOp::create(b, loc, x, y); }
  Value div(Value x, Value y) { return DivOp::create(b, loc, x, y); }
  Value mul(Value x, double c) { return mul(x, scalar(x, c)); }
  Value neg(Value x) { return NegOp::create(b, loc, x); }
  Value compare(CompareDirection d, Value x, Value y) {
    return CompareOp::create(b, loc, d, x, y);
  }
  Value select(Value c, Value t, Value f) {
    return SelectOp::create(b, loc, c, t, f);
  }
  Value convert(Value x, Type elementType);

  Value reduceSum(Value x, ArrayRef<int64_t> axes, bool keepdims);
  Value reduceMean(Value x, ArrayRef<int64_t> axes, bool keepdims);
  Value transpose(Value x, ArrayRef<int64_t> perm);
  Value slice(Value x, ArrayRef<int64_t> start, ArrayRef<int64_t> limit,
              ArrayRef<int64_t> stride);
  Value pad(Value x, ArrayRef<int64_t> low, ArrayRef<int64_t> high,
            double value = 0.0);
  Value matmul(Value x, Value y) { return MatmulOp::create(b, loc, x, y); }
  /// A rank-1 i64 constant.
  Value indices(ArrayRef<int64_t> values);

  /// `paddle.reshape` to `shape`, which may hold at most one dynamic dim
  /// (written as -1); fails otherwise. Returns `x` when it already has it.
  FailureOr<Value> reshape(Value x, ArrayRef<int64_t> shape);
  /// Broadcasts `x` to the shape of `like` (NumPy rules; x's dims are 1 or
  /// equal). Static targets use `paddle.broadcast_to`; dynamic ones add
  /// zeros of `like`'s shape, which broadcasts at run time.
  Value broadcastLike(Value x, Value like);
  /// Sums `grad` (the shape of a broadcast result) back to the type of
  /// `operand`: over the leading dims `operand` lacks and over the dims
  /// where `operand` has size 1. Needs a static size-1 pattern in
  /// `operand`; a dynamic operand dim is taken as not broadcast.
  FailureOr<Value> unbroadcast(Value grad, Value operand);
  /// The inverse of a reduction: `grad` (the reduction's result) reshaped to
  /// keep the reduced `axes` (when the reduction dropped them) and
  /// broadcast to the shape of `x`.
  FailureOr<Value> expandReduced(Value grad, Value x, ArrayRef<int64_t> axes,
                                 bool keepdims);
  /// Gradient of `paddle.slice`: `grad` placed at the sliced positions of a
  /// zero tensor of type `xType`. Strides > 1 interleave zeros by padding a
  /// new unit dim and folding it back (static sizes only).
  FailureOr<Value> unslice(Value grad, RankedTensorType xType,
                           ArrayRef<int64_t> start, ArrayRef<int64_t> limit,
                           ArrayRef<int64_t> stride);
  /// `x` with `factor - 1` zeros between neighbours along each dim
  /// (interior padding; the result has `(n - 1) * factor + 1` elements).
  FailureOr<Value> interleaveZeros(Value x, ArrayRef<int64_t> factors);
};

/// The normalized axes of a reduction with optional `axes` over rank `rank`.
SmallVector<int64_t> reductionAxes(std::optional<ArrayRef<int64_t>> axes,
                                   int64_t rank);

/// Attach the gradient rules of each category (called when the dialect is
/// initialized).
void attachElementwiseGradients(MLIRContext *ctx);
void attachShapeGradients(MLIRContext *ctx);
void attachReductionGradients(MLIRContext *ctx);
void attachNNGradients(MLIRContext *ctx);
void attachNormalizationGradients(MLIRContext *ctx);

/// External model forwarding the interface to a free function
/// `LogicalResult gradientOf(OpTy, GradBuilder &, ArrayRef<Value>,
/// SmallVectorImpl<Value> &)`, found by argument-dependent lookup in the
/// file that attaches the model (one file per category of ops).
template <typename OpTy>
struct GradientModel
    : PaddleGradientOpInterface::ExternalModel<GradientModel<OpTy>, OpTy> {
  LogicalResult buildGradient(Operation *op, OpBuilder &b,
                              ArrayRef<Value> resultGrads,
                              SmallVectorImpl<Value> &operandGrads) const {
    GradBuilder gb{b, op->getLoc()};
    return gradientOf(cast<OpTy>(op), gb, resultGrads, operandGrads);
  }
};

template <typename... OpTys> void attachGradientModels(MLIRContext *ctx) {
  (OpTys::template attachInterface<GradientModel<OpTys>>(*ctx), ...);
}

} // namespace mlir::paddle

#endif // PADDLE_DIALECT_PADDLE_IR_GRADIENTUTILS_H
