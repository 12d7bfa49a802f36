//===- FoldUtils.h - constant folding helpers for paddle ops ----*- C++ -*-===//
//
// Elementwise constant folding on dense attributes, used by the folders of
// the elementwise ops. Folding is skipped for tensors above kMaxFoldElements
// so a large constant is never duplicated in the IR.
//
//===----------------------------------------------------------------------===//

#ifndef PADDLE_DIALECT_PADDLE_IR_FOLDUTILS_H
#define PADDLE_DIALECT_PADDLE_IR_FOLDUTILS_H

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/APFloat.h"
#include "llvm/ADT/APInt.h"

namespace mlir::paddle {

constexpr int64_t kMaxFoldElements = 1 << 16;

using FloatFn1 = function_ref<double(double)>;
using IntFn1 = function_ref<APInt(const APInt &)>;
using FloatFn2 = function_ref<double(double, double)>;
using IntFn2 = function_ref<APInt(const APInt &, const APInt &)>;
/// Compare functions give a boolean.
using FloatCmp = function_ref<bool(double, double)>;
using IntCmp = function_ref<bool(const APInt &, const APInt &)>;

/// Folds a unary elementwise op; a null function means "not foldable for
/// this element kind".
Attribute foldUnary(Attribute operand, Type resultType, FloatFn1 floatFn,
                    IntFn1 intFn);

/// Folds a binary elementwise op whose operands are constants that are
/// splats or already have the (static) result shape.
Attribute foldBinary(Attribute lhs, Attribute rhs, Type resultType,
                     FloatFn2 floatFn, IntFn2 intFn);

/// Same for comparisons, which give i1.
Attribute foldCompare(Attribute lhs, Attribute rhs, Type resultType,
                      FloatCmp floatFn, IntCmp intFn);

/// True when `attr` is a dense splat equal to `value` (integer or float).
bool isSplatValue(Attribute attr, double value);

} // namespace mlir::paddle

#endif // PADDLE_DIALECT_PADDLE_IR_FOLDUTILS_H
