//===- ToolFlags.cpp - the compile options as command-line flags ----------===//

#include "ToolFlags.h"

#include "llvm/Support/CommandLine.h"

#include <memory>
#include <vector>

using namespace mlir;
using namespace mlir::paddle;
namespace cl = llvm::cl;

namespace {

/// One flag per compile option: booleans as
/// booleans (--fuse, --fuse=0; llvm::cl checks the value), every other
/// option as its text. The flags' names and descriptions point into
/// `names`, which lives as long as the process.
struct CompileFlags {
  CompileOptions names;
  std::vector<std::unique_ptr<cl::opt<bool>>> booleans;
  std::vector<std::unique_ptr<cl::opt<std::string>>> values;
};

CompileFlags &getFlags() {
  static CompileFlags flags;
  return flags;
}

} // namespace

void mlir::paddle::registerCompileFlags() {
  CompileFlags &state = getFlags();
  if (!state.booleans.empty() || !state.values.empty())
    return;
  state.names.forEachOption([&](StringRef name, StringRef help, bool isFlag) {
    if (isFlag)
      state.booleans.push_back(
          std::make_unique<cl::opt<bool>>(name, cl::desc(help)));
    else
      state.values.push_back(std::make_unique<cl::opt<std::string>>(
          name, cl::desc(help), cl::ValueRequired));
  });
}

std::string mlir::paddle::getCompileFlagsText() {
  CompileFlags &state = getFlags();
  std::string text;
  auto append = [&](StringRef name, StringRef value) {
    if (!text.empty())
      text += ' ';
    // Option text separates options by spaces: quote a value with one.
    bool quote = value.contains(' ');
    text += (name + "=" + (quote ? "\"" + value + "\"" : value)).str();
  };
  for (const auto &flag : state.booleans)
    if (flag->getNumOccurrences())
      append(flag->ArgStr, *flag ? "true" : "false");
  for (const auto &flag : state.values)
    if (flag->getNumOccurrences())
      append(flag->ArgStr, flag->getValue());
  return text;
}

llvm::Error mlir::paddle::readCompileFlags(CompileOptions &options) {
  // In option text an empty value keeps the module's; on a command line
  // `--precision=` is a mistake.
  for (const auto &flag : getFlags().values)
    if (flag->getNumOccurrences() && flag->getValue().empty())
      return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                     "--" + flag->ArgStr + " needs a value");
  if (llvm::Error error = options.parse(getCompileFlagsText()))
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "--" + llvm::toString(std::move(error)));
  return llvm::Error::success();
}
