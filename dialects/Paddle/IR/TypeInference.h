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
#include "mlir/IR/Location.h"
#include "mlir/IR/TypeRange.h"
#include "llvm/ADT/SmallVector.h"
#include <optional>

namespace mlir::paddle {

/// True when the written result types `written` may stand for the inferred
/// ones: same element types and ranks, and equal sizes where both are static.
bool areCompatibleReturnTypes(TypeRange inferred, TypeRange written);

/// The NumPy broadcast of two shapes, or failure with a message at `loc`.
/// A dynamic dim against a static 1 gives the dynamic dim; a dynamic dim
/// against a static size N > 1 gives N; two dynamic dims give a dynamic dim
/// (the sizes must then be equal at run time).
FailureOr<SmallVector<int64_t>>
broadcastShapes(std::optional<Location> loc, ArrayRef<int64_t> lhs,
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

// (end of shape section)

//===----------------------------------------------------------------------===//
// Reduction and normalization ops
//===----------------------------------------------------------------------===//

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
/// `stride`. May be <= 0 when the input is too small.
int64_t poolOutputSize(int64_t size, int64_t kernel, int64_t stride,
                       int64_t padBefore, int64_t padAfter, bool ceilMode);

// (end of nn section)

} // namespace mlir::paddle

#endif // PADDLE_DIALECT_PADDLE_IR_TYPEINFERENCE_H
