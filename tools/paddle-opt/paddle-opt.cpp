//===- paddle-opt.cpp - the paddle pass driver ----------------------------===//
//
// mlir-opt's driver (MlirOptMain) over every paddle and upstream pass, with
// the input read the way every tool reads modules (SourceModule.h): a
// device node or an endless stream is refused, text nesting is bounded
// before the parser recurses, and bytecode is read by the upstream reader
// in a child process first.
//
//===----------------------------------------------------------------------===//

#include "paddle/Execution/InitTool.h"
#include "paddle/Execution/SourceModule.h"
#include "paddle/InitAll.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;

int main(int argc, char **argv) {
  paddle::InitTool init(argc, argv);
  DialectRegistry registry;
  paddle::registerAllDialects(registry);
  paddle::registerAllPasses();
  auto [inputFile, outputFile] = registerAndParseCLIOptions(
      argc, argv, "Paddle-MLIR optimizer driver\n", registry);
  MlirOptMainConfig config = MlirOptMainConfig::createFromCLOptions();
  if (config.shouldShowDialects()) {
    llvm::outs() << "Available Dialects: ";
    llvm::interleave(registry.getDialectNames(), llvm::outs(), ",");
    llvm::outs() << "\n";
    return 0;
  }
  if (config.shouldListPasses()) {
    printRegisteredPasses();
    return 0;
  }
  auto fail = [](llvm::Error err) {
    llvm::errs() << "paddle-opt: error: " << llvm::toString(std::move(err))
                 << "\n";
    return 1;
  };
  auto file = paddle::readModuleFile(inputFile);
  if (!file)
    return fail(file.takeError());
  auto buffer = paddle::sanitizeModuleBuffer(std::move(*file), registry);
  if (!buffer)
    return fail(buffer.takeError());
  std::string error;
  std::unique_ptr<llvm::ToolOutputFile> output =
      openOutputFile(outputFile, &error);
  if (!output) {
    llvm::errs() << "paddle-opt: error: " << error << "\n";
    return 1;
  }
  if (failed(MlirOptMain(output->os(), std::move(*buffer), registry, config)))
    return 1;
  output->keep();
  return 0;
}
