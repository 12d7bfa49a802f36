//===- SourceModule.cpp - load a module file for the tools ----------------===//

#include "paddle/Execution/SourceModule.h"

#include "mlir/Parser/Parser.h"
#include "mlir/Support/FileUtilities.h"

using namespace mlir;
using namespace mlir::paddle;

llvm::Expected<std::unique_ptr<SourceModule>>
SourceModule::load(llvm::StringRef path, MLIRContext &context) {
  auto error = [](const llvm::Twine &message) {
    return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
  };
  std::string errorMessage;
  auto file = openInputFile(path, &errorMessage);
  if (!file)
    return error(errorMessage);
  std::unique_ptr<SourceModule> source(new SourceModule());
  source->sourceMgr.AddNewSourceBuffer(std::move(file), llvm::SMLoc());
  source->handler =
      std::make_unique<SourceMgrDiagnosticHandler>(source->sourceMgr, &context);
  source->module = parseSourceFile<ModuleOp>(source->sourceMgr, &context);
  if (!source->module)
    return error("cannot parse '" + path + "'");
  if (failed(source->module->verify()))
    return error("'" + path + "' does not verify");
  return source;
}
