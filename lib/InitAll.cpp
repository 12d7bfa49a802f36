//===- InitAll.cpp - one registration entry point for every tool ----------===//

#include "paddle/InitAll.h"

#include "dialects/Paddle/IR/PaddleOps.h"
#include "paddle/Conversion/Passes.h"
#include "paddle/CostModel/Passes.h"
#include "paddle/Pipelines/Pipelines.h"
#include "paddle/Sharding/Passes.h"
#include "paddle/Sharding/ShardingInterfaceImpl.h"
#include "paddle/Transforms/Passes.h"

#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"

void mlir::paddle::registerAllDialects(DialectRegistry &registry) {
  registry.insert<PaddleDialect>();
  registerShardingInterfaceExternalModels(registry);
  mlir::registerAllDialects(registry);
  mlir::registerAllExtensions(registry);
  registerBuiltinDialectTranslation(registry);
  registerLLVMDialectTranslation(registry);
}

void mlir::paddle::registerAllPasses() {
  mlir::registerAllPasses();
  registerPaddleConversionPasses();
  registerPaddleTransformsPasses();
  registerPaddleCostModelPasses();
  registerPaddleShardingPasses();
  registerPipelines();
}
