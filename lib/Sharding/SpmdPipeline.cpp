//===- SpmdPipeline.cpp - user shardings to one program per device --------===//

#include "paddle/Sharding/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/Dialect/Shard/Transforms/Passes.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

bool mlir::paddle::isShardedModule(Operation *module) {
  for (Region &region : module->getRegions())
    for (Block &block : region)
      for (Operation &op : block)
        if (isa<shard::GridOp>(op))
          return true;
  return false;
}

void mlir::paddle::buildSpmdPipeline(OpPassManager &pm) {
  // Functions marked paddle.auto_shard get their shardings from the cost
  // model first.
  AutoShardPassOptions autoShard;
  autoShard.markedOnly = true;
  pm.addPass(createAutoShardPass(autoShard));
  pm.addNestedPass<func::FuncOp>(shard::createShardingPropagation());
  pm.addPass(createCompleteShardingPass());
  pm.addNestedPass<func::FuncOp>(shard::createPartition());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createLowerCollectivesPass());
  pm.addPass(createCSEPass());
}

namespace mlir::paddle {
#define GEN_PASS_DEF_PARTITIONPASS
#include "paddle/Sharding/Passes.h.inc"
} // namespace mlir::paddle

namespace {

struct PartitionPass : paddle::impl::PartitionPassBase<PartitionPass> {
  void getDependentDialects(DialectRegistry &registry) const override {
    OpPassManager pm(ModuleOp::getOperationName());
    paddle::buildSpmdPipeline(pm);
    pm.getDependentDialects(registry);
  }

  void runOnOperation() override {
    if (!paddle::isShardedModule(getOperation()))
      return;
    OpPassManager pm(ModuleOp::getOperationName());
    paddle::buildSpmdPipeline(pm);
    if (failed(runPipeline(pm, getOperation())))
      signalPassFailure();
  }
};

} // namespace
