//===- InlineParts.cpp - put the parts of a split function back -----------===//

#include "dialects/Paddle/IR/PaddleOps.h"
#include "paddle/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#define DEBUG_TYPE "paddle-inline-parts"

namespace mlir::paddle {
#define GEN_PASS_DEF_INLINEPARTSPASS
#include "paddle/Transforms/Passes.h.inc"
} // namespace mlir::paddle

using namespace mlir;

namespace {
struct InlinePartsPass : paddle::impl::InlinePartsPassBase<InlinePartsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    llvm::DenseMap<StringAttr, func::FuncOp> parts;
    for (auto func : module.getOps<func::FuncOp>())
      if (func->hasAttr(paddle::PaddleDialect::PartAttrHelper::getNameStr()))
        parts[func.getSymNameAttr()] = func;
    if (parts.empty())
      return;
    SmallVector<std::pair<func::CallOp, func::FuncOp>> calls;
    llvm::DenseMap<Operation *, int> callCount;
    module.walk([&](func::CallOp call) {
      if (func::FuncOp part = parts.lookup(call.getCalleeAttr().getAttr())) {
        calls.push_back({call, part});
        ++callCount[part];
      }
    });
    for (auto [call, part] : calls) {
      // paddle-split-functions calls each part once, and bufferization
      // keeps a part one block and its call's types the part's.
      if (!part.getBody().hasOneBlock() || callCount[part] != 1 ||
          call.getOperandTypes() != part.getArgumentTypes() ||
          call.getResultTypes() != part.getResultTypes()) {
        part.emitOpError("is not a part paddle-inline-parts can inline");
        return signalPassFailure();
      }
      Block &body = part.front();
      auto ret = cast<func::ReturnOp>(body.getTerminator());
      call.replaceAllUsesWith(ret.getOperands());
      for (auto [arg, operand] :
           llvm::zip_equal(body.getArguments(), call.getOperands()))
        arg.replaceAllUsesWith(operand);
      ret.erase();
      call->getBlock()->getOperations().splice(call->getIterator(),
                                               body.getOperations());
      call.erase();
      part.erase();
    }
  }
};
} // namespace
