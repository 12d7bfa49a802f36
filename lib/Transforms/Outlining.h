//===- Outlining.h - move ops into functions of their own -------*- C++ -*-===//
//
// Shared by the passes that split a long function into small ones, so that
// the passes after them work on many small functions (compile time linear
// in the op count; docs/compile-time.md, "Scaling with the op count").
//
//===----------------------------------------------------------------------===//

#ifndef PADDLE_LIB_TRANSFORMS_OUTLINING_H
#define PADDLE_LIB_TRANSFORMS_OUTLINING_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"

namespace mlir::paddle {

/// Symbol names unique in one module, handed out as SymbolTable::insert
/// would (`base`, then `base_0`, `base_1`, ...), but with one counter per
/// base kept for the whole pass: SymbolTable builds a table of the whole
/// module and probes suffixes from 0 on every insertion, O(functions) each.
class SymbolNamer {
public:
  /// Starts with every symbol defined at the top level of `module` taken.
  explicit SymbolNamer(ModuleOp module);

  /// A name no symbol of the module has, nor any name returned before.
  std::string unique(StringRef base);

private:
  llvm::StringSet<> taken;
  llvm::StringMap<unsigned> nextSuffix;
};

/// Whether `op` is a constant: constant-like and without operands.
inline bool isConstant(Operation *op) {
  return op->hasTrait<OpTrait::ConstantLike>() && op->getNumOperands() == 0;
}

/// Whether `value` is the result of a constant (isConstant).
inline bool isConstantValue(Value value) {
  Operation *def = value.getDefiningOp();
  return def && isConstant(def);
}

/// Moves `ops`, consecutive ops of one block, into a new private function
/// `name` created at the end of `module`, and leaves a call to it in their
/// place. The values they use from above are the function's arguments (the
/// call's operands, in order of first use), except the constants
/// `cloneIntoCallee` accepts, which the function uses a clone of (e.g. to
/// keep loop bounds static) and which are erased where nothing else uses
/// them. Their results used after them are the function's results. Linear
/// in the size of `ops` and the uses of their results.
std::pair<func::FuncOp, func::CallOp>
outlineIntoFunction(ArrayRef<Operation *> ops, ModuleOp module, StringRef name,
                    llvm::function_ref<bool(Value)> cloneIntoCallee);

} // namespace mlir::paddle

#endif // PADDLE_LIB_TRANSFORMS_OUTLINING_H
