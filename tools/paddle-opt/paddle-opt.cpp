//===- paddle-opt.cpp - the paddle pass driver ----------------------------===//

#include "paddle/InitAll.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  mlir::paddle::registerAllDialects(registry);
  mlir::paddle::registerAllPasses();
  return mlir::asMainReturnCode(mlir::MlirOptMain(
      argc, argv, "Paddle-MLIR optimizer driver\n", registry));
}
