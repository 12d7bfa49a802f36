//===- Outlining.cpp - move ops into functions of their own ---------------===//

#include "Outlining.h"

#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/SetVector.h"

using namespace mlir;

paddle::SymbolNamer::SymbolNamer(ModuleOp module) {
  for (Operation &op : *module.getBody())
    if (auto name =
            op.getAttrOfType<StringAttr>(SymbolTable::getSymbolAttrName()))
      taken.insert(name.getValue());
}

std::string paddle::SymbolNamer::unique(StringRef base) {
  if (taken.insert(base).second)
    return base.str();
  unsigned &next = nextSuffix[base];
  for (;;) {
    std::string name = (base + "_" + Twine(next++)).str();
    if (taken.insert(name).second)
      return name;
  }
}

func::FuncOp paddle::outlineIntoFunction(Operation *op, ModuleOp module,
                                         StringRef name) {
  llvm::SetVector<Value> used(op->operand_begin(), op->operand_end());
  getUsedValuesDefinedAbove(op->getRegions(), used);
  SmallVector<Value> constants, captures;
  for (Value value : used) {
    Operation *def = value.getDefiningOp();
    if (def && def->getNumOperands() == 0 &&
        def->hasTrait<OpTrait::ConstantLike>())
      constants.push_back(value);
    else
      captures.push_back(value);
  }

  Location loc = op->getLoc();
  auto b = OpBuilder::atBlockEnd(module.getBody());
  auto func = func::FuncOp::create(
      b, loc, name,
      b.getFunctionType(ValueRange(captures).getTypes(), op->getResultTypes()));
  func.setPrivate();
  Block *entry = func.addEntryBlock();
  IRMapping mapping;
  mapping.map(captures, entry->getArguments());
  b.setInsertionPointToStart(entry);
  for (Value value : constants)
    b.clone(*value.getDefiningOp(), mapping);
  Operation *clone = b.clone(*op, mapping);
  func::ReturnOp::create(b, loc, clone->getResults());

  b.setInsertionPoint(op);
  auto call = func::CallOp::create(b, loc, func, captures);
  op->replaceAllUsesWith(call.getResults());
  op->erase();
  // Constants only `op` used would otherwise stay behind unused.
  for (Value value : constants)
    if (value.use_empty())
      value.getDefiningOp()->erase();
  return func;
}
