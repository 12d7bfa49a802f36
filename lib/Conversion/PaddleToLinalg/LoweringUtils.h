//===- LoweringUtils.h - helpers shared by the paddle lowerings --*- C++
//-*-===//
//
// Building blocks for lowering paddle ops to linalg on tensors: result sizes
// of broadcasting ops, elementwise linalg.generic with NumPy broadcasting, and
// scalar constants. Used by every category of the PaddleToLinalg patterns.
//
//===----------------------------------------------------------------------===//

#ifndef PADDLE_LIB_CONVERSION_PADDLETOLINALG_LOWERINGUTILS_H
#define PADDLE_LIB_CONVERSION_PADDLETOLINALG_LOWERINGUTILS_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Value.h"

namespace mlir::paddle {

/// Body of an elementwise computation: scalar operands in, one scalar out.
using ScalarBody =
    function_ref<Value(OpBuilder &b, Location loc, ValueRange scalars)>;

/// The run-time sizes of the dynamic dims of `resultType`, the NumPy
/// broadcast of `operands` (each a ranked tensor). Where an operand's dim is
/// dynamic and must equal the result's, a cf.assert checks it at run time.
SmallVector<Value> getBroadcastDynamicSizes(OpBuilder &b, Location loc,
                                            RankedTensorType resultType,
                                            ValueRange operands);

/// A linalg.generic computing `body` over the broadcast of `operands` into a
/// fresh tensor of `resultType`. Dims of size 1 broadcast; leading dims an
/// operand lacks broadcast too.
Value buildBroadcastElementwise(OpBuilder &b, Location loc,
                                RankedTensorType resultType,
                                ValueRange operands, ScalarBody body);

/// `tensor.empty` of `type`, with dynamic sizes taken from `like` dims of the
/// same position (which must have the same rank).
Value buildEmptyLike(OpBuilder &b, Location loc, RankedTensorType type,
                     Value like);

/// `tensor.empty` of `type` with `dynamicSizes` for its dynamic dims, after
/// buildSizeChecks: every tensor the lowering makes goes through here.
Value buildEmpty(OpBuilder &b, Location loc, RankedTensorType type,
                 ValueRange dynamicSizes);

/// Run-time checks that the dynamic sizes of a tensor of `type` are
/// non-negative and that its byte size fits in 63 bits (the verifier bounded
/// the static part), so no allocation or loop bound wraps around. Omitted
/// where the sizes are provably fine: dims of one existing tensor that is
/// no smaller.
void buildSizeChecks(OpBuilder &b, Location loc, RankedTensorType type,
                     ValueRange dynamicSizes);

/// A run-time check: when `condition` is false the call fails with
/// "<file:line:col of loc>: <paddle op>: <message>" (see
/// paddle-lower-runtime-checks), naming the paddle op at the builder's
/// insertion point: the op being lowered.
void buildRuntimeCheck(OpBuilder &b, Location loc, Value condition,
                       const Twine &message);

/// Checks at run time that two sizes agree; nothing is emitted when both are
/// static (the verifier compared those).
void buildSameSizeCheck(OpBuilder &b, Location loc, OpFoldResult x,
                        OpFoldResult y, const Twine &message);

/// An elementwise linalg.generic applying `fn` to each element of `v`,
/// giving elements of type `elementType`.
Value buildMap(OpBuilder &b, Location loc, Value v, Type elementType,
               function_ref<Value(OpBuilder &, Location, Value)> fn);

/// The number of elements of `x` over `dims`, as a scalar of float `type`.
Value buildCount(OpBuilder &b, Location loc, Value x, ArrayRef<int64_t> dims,
                 Type type);

/// Expands `v`, a tensor of the dims of `x` not in `dims`, back to the rank
/// of x with size 1 at `dims` (keepdims, or to broadcast against x).
Value buildExpandReducedDims(OpBuilder &b, Location loc, Value v, Value x,
                             ArrayRef<int64_t> dims);

/// A scalar constant of int or float type `type` holding `value`.
Value buildScalarConstant(OpBuilder &b, Location loc, Type type, double value);

/// Converts a scalar between element types with the semantics of paddle.cast.
Value buildScalarCast(OpBuilder &b, Location loc, Value v, Type to);

/// f16 and bf16 math runs in f32; returns f32 for those, else `type`.
Type getComputeType(Type type);

/// All the sizes of a ranked tensor value, static ones as constants.
SmallVector<OpFoldResult> getMixedSizes(OpBuilder &b, Location loc, Value v);

/// The neutral value of a reduction of element type `type`: the lowest or
/// highest finite-or-infinite value (for max / min), 0 or 1 (sum / product).
enum class ReductionKind { Sum, Prod, Max, Min };
Value buildReductionInit(OpBuilder &b, Location loc, Type type,
                         ReductionKind kind);
/// Combines two scalars of a reduction (NaN propagates through max/min).
Value buildReductionCombine(OpBuilder &b, Location loc, Value acc, Value v,
                            ReductionKind kind);

} // namespace mlir::paddle

#endif
