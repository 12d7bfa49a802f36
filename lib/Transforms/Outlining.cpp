//===- Outlining.cpp - move ops into functions of their own ---------------===//

#include "Outlining.h"

#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/DenseSet.h"
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

std::pair<func::FuncOp, func::CallOp>
paddle::outlineIntoFunction(ArrayRef<Operation *> ops, ModuleOp module,
                            StringRef name,
                            llvm::function_ref<bool(Value)> cloneIntoCallee) {
  Block *block = ops.front()->getBlock();
  llvm::DenseSet<Operation *> moved(ops.begin(), ops.end());
  llvm::SetVector<Value> used;
  for (Operation *op : ops) {
    used.insert(op->operand_begin(), op->operand_end());
    getUsedValuesDefinedAbove(op->getRegions(), used);
  }
  SmallVector<Value> clones, inputs;
  for (Value value : used) {
    Operation *def = value.getDefiningOp();
    if (def && moved.contains(def))
      continue;
    if (isConstantValue(value) && cloneIntoCallee(value))
      clones.push_back(value);
    else
      inputs.push_back(value);
  }
  SmallVector<Value> outputs;
  for (Operation *op : ops)
    for (Value result : op->getResults())
      if (llvm::any_of(result.getUsers(), [&](Operation *user) {
            return !moved.contains(block->findAncestorOpInBlock(*user));
          }))
        outputs.push_back(result);

  Location loc = ops.front()->getLoc();
  auto b = OpBuilder::atBlockEnd(module.getBody());
  auto func =
      func::FuncOp::create(b, loc, name,
                           b.getFunctionType(ValueRange(inputs).getTypes(),
                                             ValueRange(outputs).getTypes()));
  func.setPrivate();
  Block *entry = func.addEntryBlock();
  b.setInsertionPoint(ops.front());
  auto call = func::CallOp::create(b, loc, func, inputs);

  IRMapping mapping;
  mapping.map(inputs, entry->getArguments());
  b.setInsertionPointToStart(entry);
  for (Value value : clones)
    mapping.map(value,
                b.clone(*value.getDefiningOp())
                    ->getResult(cast<OpResult>(value).getResultNumber()));
  for (Operation *op : ops)
    op->moveBefore(entry, entry->end());
  // Only the moved ops' operands are visited: a value used all over the
  // caller (a weight every layer reads) costs nothing per outlining.
  for (Operation *op : ops)
    op->walk([&](Operation *inner) {
      for (OpOperand &operand : inner->getOpOperands())
        if (Value to = mapping.lookupOrNull(operand.get()))
          operand.set(to);
    });
  for (auto [output, result] : llvm::zip_equal(outputs, call.getResults()))
    output.replaceUsesWithIf(result, [&](OpOperand &use) {
      return !func->isAncestor(use.getOwner());
    });
  b.setInsertionPointToEnd(entry);
  func::ReturnOp::create(b, loc, outputs);
  for (Value value : clones)
    if (value.use_empty())
      value.getDefiningOp()->erase();
  return {func, call};
}
