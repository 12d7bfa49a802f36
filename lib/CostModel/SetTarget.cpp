//===- SetTarget.cpp - attach the module's target -------------------------===//

#include "paddle/CostModel/Passes.h"

#include "dialects/Paddle/IR/Target.h"

#include "mlir/IR/BuiltinOps.h"

namespace mlir::paddle {
#define GEN_PASS_DEF_SETTARGETPASS
#include "paddle/CostModel/Passes.h.inc"
} // namespace mlir::paddle

using namespace mlir;
using namespace mlir::paddle;

namespace {

struct SetTargetPass : paddle::impl::SetTargetPassBase<SetTargetPass> {
  SetTargetPass() : target(*this) {}
  SetTargetPass(const SetTargetPass &other) : Base(other), target(*this) {}

  void runOnOperation() override {
    ModuleOp module = getOperation();
    llvm::Expected<TargetAttr> result =
        applyTargetChanges(getTargetOrDefault(module), target.getChanges());
    if (!result) {
      module.emitError() << "paddle-set-target: "
                         << llvm::toString(result.takeError());
      return signalPassFailure();
    }
    module->setAttr(PaddleDialect::TargetAttrHelper::getNameStr(), *result);
  }

  /// The target options (Target.h), registered as this pass's options.
  TargetOptions<Pass> target;
};

} // namespace

std::unique_ptr<Pass>
mlir::paddle::createSetTargetPass(const TargetChanges &changes) {
  auto pass = std::make_unique<SetTargetPass>();
  pass->target.setChanges(changes);
  return pass;
}
