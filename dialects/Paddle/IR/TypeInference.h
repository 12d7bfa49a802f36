//===- TypeInference.h - shapes of paddle op results ------------*- C++ -*-===//
//
// Result-type inference shared by the verifiers, the builders that take no
// result type, and the Python tracer, so that all three agree. Each function
// emits an error at `loc` (when given) naming what is wrong and fails.
//
//===----------------------------------------------------------------------===//

#ifndef PADDLE_DIALECT_PADDLE_IR_TYPEINFERENCE_H
#define PADDLE_DIALECT_PADDLE_IR_TYPEINFERENCE_H

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Location.h"
#include "mlir/IR/Operation.h"
#include "mlir/IR/TypeRange.h"
#include "llvm/ADT/SmallVector.h"
#include <optional>

namespace mlir::paddle {

/// True when the written result types `written` may stand for the inferred
/// ones: same element types and ranks, and equal sizes where both are static.
bool areCompatibleReturnTypes(TypeRange inferred, TypeRange written);

/// As areCompatibleReturnTypes, except that an f32 result may also stand
/// where f16 or bf16 is inferred: matmul and conv2d may return their f32
/// accumulator unrounded (bf16 x bf16 -> f32, as AMX and oneDNN compute).
bool areCompatibleAccumulatorReturnTypes(TypeRange inferred, TypeRange written);

/// The number of bytes of one element of `type` as stored in memory (i1 takes
/// a byte); 0 for types without a fixed size.
int64_t getElementByteSize(Type type);

/// Checks that the static part of `type`, a ranked tensor or memref, fits in
/// memory arithmetic: the product of its static sizes (a dim of size 0 makes
/// it 0) times the element size is at most 2^63 - 1 bytes, so element counts,
/// strides and byte sizes computed from it never overflow. Dynamic dims are
/// checked at run time (buildEmpty in the lowering). Otherwise reports
/// through `emitError` that `what` (e.g. "result #0") is too large.
LogicalResult verifyTensorSize(function_ref<InFlightDiagnostic()> emitError,
                               Type type, const Twine &what);

/// verifyTensorSize for every operand and result of `op`: the check shared
/// by all paddle ops (the SizedTensors trait) and by the lowering's check of
/// function signatures.
LogicalResult verifyTensorSizes(Operation *op);

/// The NumPy broadcast of two shapes, or failure with a message at `loc`.
/// A dynamic dim against a static 1 gives the dynamic dim; a dynamic dim
/// against a static size N > 1 gives N; two dynamic dims give a dynamic dim
/// (the sizes must then be equal at run time).
FailureOr<SmallVector<int64_t>> broadcastShapes(std::optional<Location> loc,
                                                ArrayRef<int64_t> lhs,
                                                ArrayRef<int64_t> rhs);

/// Broadcast result of a binary op; the element type is `resultElementType`
/// or, when null, the operands' (which must agree).
LogicalResult inferBroadcastBinary(std::optional<Location> loc, Type lhs,
                                   Type rhs, Type resultElementType,
                                   SmallVectorImpl<Type> &inferred);

/// Result of `select`: the broadcast of all three shapes, the element type of
/// `onTrue` (which must equal that of `onFalse`).
LogicalResult inferSelect(std::optional<Location> loc, Type cond, Type onTrue,
                          Type onFalse, SmallVectorImpl<Type> &inferred);

/// Normalizes `axis` (negative counts from the end) against `rank`, or fails
/// with a message naming `what`.
FailureOr<int64_t> normalizeAxis(std::optional<Location> loc, int64_t axis,
                                 int64_t rank, StringRef what = "axis");

/// Normalizes a list of distinct axes; an empty optional means all axes.
FailureOr<SmallVector<int64_t>>
normalizeAxes(std::optional<Location> loc,
              std::optional<ArrayRef<int64_t>> axes, int64_t rank);

//===----------------------------------------------------------------------===//
// Shape ops
//===----------------------------------------------------------------------===//

/// Result of `reshape` to `shape` (entries >= 0, at most one -1).
LogicalResult inferReshape(std::optional<Location> loc, Type x,
                           ArrayRef<int64_t> shape,
                           SmallVectorImpl<Type> &inferred);

/// Result of `broadcast_to` to `shape` (-1 keeps the aligned dim of `x`).
LogicalResult inferBroadcastTo(std::optional<Location> loc, Type x,
                               ArrayRef<int64_t> shape,
                               SmallVectorImpl<Type> &inferred);

/// Result of `transpose` by the permutation `perm`.
LogicalResult inferTranspose(std::optional<Location> loc, Type x,
                             ArrayRef<int64_t> perm,
                             SmallVectorImpl<Type> &inferred);

/// The number of elements of `x[start:limit:stride]` along a dim of static
/// size `size` (numpy clamping; all arguments valid for `slice`).
int64_t sliceDimSize(int64_t start, int64_t limit, int64_t stride,
                     int64_t size);

/// Result of `slice`: one start, limit (both >= 0) and stride (> 0) per dim.
LogicalResult inferSlice(std::optional<Location> loc, Type x,
                         ArrayRef<int64_t> start, ArrayRef<int64_t> limit,
                         ArrayRef<int64_t> stride,
                         SmallVectorImpl<Type> &inferred);

/// Result of `concat` of `inputs` along `axis` (may be negative).
LogicalResult inferConcat(std::optional<Location> loc, TypeRange inputs,
                          int64_t axis, SmallVectorImpl<Type> &inferred);

/// Result of `pad` by `low` and `high` (non-negative, one per dim).
LogicalResult inferPad(std::optional<Location> loc, Type x,
                       ArrayRef<int64_t> low, ArrayRef<int64_t> high,
                       SmallVectorImpl<Type> &inferred);

/// Result of `gather`: x.shape[:axis] + indices.shape + x.shape[axis+1:].
LogicalResult inferGather(std::optional<Location> loc, Type x, Type indices,
                          int64_t axis, SmallVectorImpl<Type> &inferred);

/// Result of `scatter_add` (the type of `x`), after checking that `updates`
/// has the shape gather would give and the element type of `x`.
LogicalResult inferScatterAdd(std::optional<Location> loc, Type x, Type indices,
                              Type updates, int64_t axis,
                              SmallVectorImpl<Type> &inferred);

// (end of shape section)

//===----------------------------------------------------------------------===//
// Reduction and normalization ops
//===----------------------------------------------------------------------===//

/// Result of a reduction of `x` over `axes` (absent: all axes; negative
/// counts from the end; a repeated axis is an error). Reduced dims are dropped,
/// or kept with size 1 when `keepdims`. The element type is
/// `resultElementType` or, when null, that of `x`.
LogicalResult inferReduction(std::optional<Location> loc, Type x,
                             std::optional<ArrayRef<int64_t>> axes,
                             bool keepdims, Type resultElementType,
                             SmallVectorImpl<Type> &inferred);

/// Result of softmax / log_softmax: the type of `x`, once `axis` is checked.
LogicalResult inferSoftmax(std::optional<Location> loc, Type x, int64_t axis,
                           SmallVectorImpl<Type> &inferred);

/// Result of layer_norm: the type of `x`. `axes` must be non-empty, in range
/// and distinct; `scale` and `bias` (null when absent) must broadcast to the
/// shape of `x` without changing it.
LogicalResult inferLayerNorm(std::optional<Location> loc, Type x, Type scale,
                             Type bias, ArrayRef<int64_t> axes,
                             SmallVectorImpl<Type> &inferred);

/// Result of batch_norm_inference: the type of `x` ([N, C, ...], rank >= 2);
/// each of `params` (scale, bias, mean, variance) must be 1-D of size C.
LogicalResult inferBatchNormInference(std::optional<Location> loc, Type x,
                                      ArrayRef<Type> params,
                                      SmallVectorImpl<Type> &inferred);

// (end of reduction and normalization section)

//===----------------------------------------------------------------------===//
// NN ops
//===----------------------------------------------------------------------===//

/// Result of `matmul` (NumPy matmul): rank-1 operands are promoted to
/// matrices and the added dim dropped again; batch dims broadcast.
LogicalResult inferMatmul(std::optional<Location> loc, Type lhs, Type rhs,
                          SmallVectorImpl<Type> &inferred);

/// Result of `conv2d` (NCHW input, OIHW filter); checks the attribute sizes
/// and values, the group divisibility and that the output is not empty.
LogicalResult inferConv2D(std::optional<Location> loc, Type input, Type filter,
                          ArrayRef<int64_t> strides, ArrayRef<int64_t> padding,
                          ArrayRef<int64_t> dilations, int64_t groups,
                          SmallVectorImpl<Type> &inferred);

/// Result of `max_pool2d` / `avg_pool2d` (NCHW), PyTorch output sizes.
LogicalResult inferPool2D(std::optional<Location> loc, Type input,
                          ArrayRef<int64_t> kernel, ArrayRef<int64_t> strides,
                          ArrayRef<int64_t> padding, bool ceilMode,
                          SmallVectorImpl<Type> &inferred);

/// PyTorch pooling output size of one dim: `size` (the input, >= 0),
/// padded by `padBefore` and `padAfter`, windows `kernel` wide every
/// `stride`. May be <= 0 when the input is too small; INT64_MAX when it
/// does not fit in 64 bits.
int64_t poolOutputSize(int64_t size, int64_t kernel, int64_t stride,
                       int64_t padBefore, int64_t padAfter, bool ceilMode);

// (end of nn section)

} // namespace mlir::paddle

#endif // PADDLE_DIALECT_PADDLE_IR_TYPEINFERENCE_H
