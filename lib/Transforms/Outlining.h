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

/// Moves `op` into a new private function `name`, created at the end of
/// `module`, and leaves a call to it in its place (its results are the
/// function's). Constants `op` uses are cloned into the function rather
/// than passed (loop bounds stay static there); every other value it uses
/// from above becomes an argument.
func::FuncOp outlineIntoFunction(Operation *op, ModuleOp module,
                                 StringRef name);

} // namespace mlir::paddle

#endif // PADDLE_LIB_TRANSFORMS_OUTLINING_H
