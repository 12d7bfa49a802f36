//===- SplitFunctions.cpp - long functions as a sequence of parts ---------===//
//
// One-shot bufferization (and empty tensor elimination, which runs its
// analysis) checks each tensor operand against every use of the operand's
// aliases: a tensor used by n ops costs O(n^2). A long function that reads
// one weight in every layer (an unrolled recurrence, tied weights, the
// 10,000-op chain of docs/compile-time.md) took seconds. Before those
// passes this one cuts such a function into consecutive parts, each moved
// into a private function and called in order; paddle-inline-parts puts
// them back right after bufferization. A weight read in every layer is
// then an argument of each part, used there by its few ops only.
//
// A cut must not change what bufferization decides, so a tensor crosses
// one only where its buffer is as it would be without the cut: a function
// argument, a constant, or a value whose buffer is a new allocation (the
// result of an op writing into a `tensor.empty`, or a reshape of such a
// value), which no later op writes into or inserts, directly or through a
// view (empty tensor elimination pairs those with their producers).
//
//===----------------------------------------------------------------------===//

#include "dialects/Paddle/IR/PaddleOps.h"
#include "paddle/Transforms/Passes.h"

#include "Outlining.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Interfaces/CallInterfaces.h"
#include "mlir/Interfaces/DestinationStyleOpInterface.h"

#define DEBUG_TYPE "paddle-split-functions"

namespace mlir::paddle {
#define GEN_PASS_DEF_SPLITFUNCTIONSPASS
#include "paddle/Transforms/Passes.h.inc"
} // namespace mlir::paddle

using namespace mlir;

/// Whether `value`'s buffer will be a new allocation, a function argument or
/// a constant: what bufferization makes of it whether or not it crosses a
/// call.
static bool hasOwnBuffer(Value value, Block *entry) {
  for (;;) {
    if (auto arg = dyn_cast<BlockArgument>(value))
      return arg.getOwner() == entry;
    Operation *def = value.getDefiningOp();
    if (def->hasTrait<OpTrait::ConstantLike>() ||
        isa<tensor::EmptyOp, bufferization::AllocTensorOp>(def))
      return true;
    auto result = cast<OpResult>(value);
    if (auto dps = dyn_cast<DestinationStyleOpInterface>(def)) {
      OpOperand *init = dps.getTiedOpOperand(result);
      if (!init)
        return false;
      value = init->get();
    } else if (auto forall = dyn_cast<scf::ForallOp>(def)) {
      value = forall.getTiedOpOperand(result)->get();
    } else if (isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp>(def)) {
      value = def->getOperand(0);
    } else {
      return false;
    }
  }
}

/// Whether an op writes into `value` or a view of it, or inserts it into
/// another tensor: bufferization may then share its buffer with an op that
/// is in another part.
static bool isWrittenOrInserted(Value value) {
  SmallVector<Value> worklist{value};
  while (!worklist.empty()) {
    Value current = worklist.pop_back_val();
    for (OpOperand &use : current.getUses()) {
      Operation *user = use.getOwner();
      if (isa<tensor::ExtractSliceOp, tensor::ExpandShapeOp,
              tensor::CollapseShapeOp, tensor::CastOp>(user)) {
        worklist.push_back(user->getResult(0));
        continue;
      }
      auto dps = dyn_cast<DestinationStyleOpInterface>(user);
      if ((dps && dps.isDpsInit(&use)) ||
          isa<tensor::InsertSliceOp, tensor::ParallelInsertSliceOp,
              bufferization::MaterializeInDestinationOp, CallOpInterface,
              RegionBranchOpInterface>(user))
        return true;
    }
  }
  return false;
}

/// Whether a cut may separate `value`'s definition from its uses.
static bool mayCross(Value value, Block *entry) {
  if (!isa<TensorType>(value.getType()))
    return true;
  // A function argument's buffer is the caller's whatever the cut; the part
  // that writes into a donated one gets its `bufferization.writable`.
  if (auto arg = dyn_cast<BlockArgument>(value))
    return arg.getOwner() == entry;
  return hasOwnBuffer(value, entry) && !isWrittenOrInserted(value);
}

/// Values a part uses as a copy of their own op: scalar constants (index
/// constants keep offsets and trip counts static).
static bool isClonedIntoParts(Value value) {
  return paddle::isConstantValue(value) && !isa<TensorType>(value.getType());
}

namespace {
struct SplitFunctionsPass
    : paddle::impl::SplitFunctionsPassBase<SplitFunctionsPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<func::FuncOp> funcs;
    for (auto func : module.getOps<func::FuncOp>())
      if (!func.isExternal() && func.getBody().hasOneBlock() &&
          llvm::count_if(func.front(), [](Operation &op) {
            return !paddle::isConstant(&op);
          }) > 2 * opsPerPart)
        funcs.push_back(func);
    paddle::SymbolNamer namer(module);
    for (func::FuncOp func : funcs)
      split(func, namer);
  }

  void split(func::FuncOp func, paddle::SymbolNamer &namer) {
    // Constants stay where they are: the parts use clones of scalar ones and
    // tensor ones as arguments, so that their globals are made in the
    // function's order (the order parts are bufferized in is not fixed).
    Block *entry = &func.front();
    SmallVector<Operation *> ops, constants;
    llvm::DenseMap<Operation *, int64_t> position;
    for (Operation &op : entry->without_terminator()) {
      if (paddle::isConstant(&op)) {
        constants.push_back(&op);
        continue;
      }
      position[&op] = ops.size();
      ops.push_back(&op);
    }
    int64_t n = ops.size();
    // Over the cut before ops[p]: blocked[p] values that may not cross it
    // and across[p] values passed from a part to a later one (both as
    // differences: the prefix sums count them).
    SmallVector<int64_t> blocked(n + 2, 0), across(n + 2, 0);
    auto lastUse = [&](Value value) {
      int64_t last = -1;
      for (Operation *user : value.getUsers()) {
        Operation *top = entry->findAncestorOpInBlock(*user);
        auto it = position.find(top);
        last = std::max(last, it == position.end() ? n : it->second);
      }
      return last;
    };
    auto block = [&](Value value, int64_t def) {
      if (isClonedIntoParts(value))
        return;
      int64_t last = lastUse(value);
      if (last <= def)
        return;
      SmallVector<int64_t> &counts = mayCross(value, entry) ? across : blocked;
      ++counts[def + 1];
      --counts[last + 1];
    };
    for (BlockArgument arg : entry->getArguments())
      block(arg, -1);
    for (Operation *constant : constants)
      block(constant->getResult(0), -1);
    for (auto [i, op] : llvm::enumerate(ops))
      for (Value result : op->getResults())
        block(result, i);

    // Cuts at least opsPerPart apart, the last part as long too, where at
    // most maxValuesAcross values cross: bufferizing a call is quadratic in
    // its operands and results (a training step's activations, all live
    // from the forward to the backward pass, made a 24-layer step's
    // bufferization 10 s instead of 0.4).
    SmallVector<int64_t> cuts{0};
    int64_t open = 0, passed = 0;
    for (int64_t p = 0; p <= n - opsPerPart; ++p) {
      open += blocked[p];
      passed += across[p];
      if (open == 0 && passed <= maxValuesAcross &&
          p - cuts.back() >= opsPerPart)
        cuts.push_back(p);
    }
    if (cuts.size() < 2)
      return;
    cuts.push_back(n);
    for (size_t i = 0; i + 1 < cuts.size(); ++i)
      outlinePart(func, ArrayRef(ops).slice(cuts[i], cuts[i + 1] - cuts[i]),
                  namer.unique((func.getSymName() + "_part").str()));
  }

  /// Moves `part` (consecutive ops of `func`'s body but its constants)
  /// into a new private function, with a call in their place.
  void outlinePart(func::FuncOp func, ArrayRef<Operation *> part,
                   StringRef name) {
    auto [callee, call] = paddle::outlineIntoFunction(
        part, func->getParentOfType<ModuleOp>(), name, isClonedIntoParts);
    callee->setAttr(paddle::PaddleDialect::PartAttrHelper::getNameStr(),
                    UnitAttr::get(func.getContext()));
    // A donated argument stays writable where the part writes into it, a
    // constant read-only.
    StringRef writableAttr =
        bufferization::BufferizationDialect::kWritableAttrName;
    for (auto [i, value] : llvm::enumerate(call.getOperands())) {
      if (auto arg = dyn_cast<BlockArgument>(value)) {
        if (Attribute writable =
                func.getArgAttr(arg.getArgNumber(), writableAttr))
          callee.setArgAttr(i, writableAttr, writable);
      } else if (paddle::isConstantValue(value)) {
        callee.setArgAttr(i, writableAttr,
                          BoolAttr::get(func.getContext(), false));
      }
    }
  }
};
} // namespace
