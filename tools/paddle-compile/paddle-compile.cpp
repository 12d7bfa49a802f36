//===- paddle-compile.cpp - ahead-of-time compilation ---------------------===//
//
//   paddle-compile IN.mlir -o OUT [--emit so|exe|obj|mlir] [--target cpu]
//                  [--weights embed|sidecar] [--sidecar-threshold BYTES]
//
// The command line of paddle::compileAheadOfTime (include/paddle/Execution/
// Aot.h, which says what each --emit kind holds), with the compile options
// as flags (--device, --library, ...; ToolFlags.h).
//
//===----------------------------------------------------------------------===//

#include "ToolFlags.h"

#include "paddle/Execution/Aot.h"
#include "paddle/Execution/InitTool.h"
#include "paddle/Execution/SourceModule.h"
#include "paddle/InitAll.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/CommandLine.h"

using namespace mlir;
namespace cl = llvm::cl;

static cl::opt<std::string> inputFile(cl::Positional, cl::desc("<input .mlir>"),
                                      cl::Required);
static cl::opt<std::string> outputFile("o", cl::desc("Output file"),
                                       cl::Required);
static cl::opt<std::string> emit("emit", cl::desc("so | exe | obj | mlir"),
                                 cl::init("so"));
static cl::opt<std::string> target("target", cl::desc("cpu (the host CPU)"),
                                   cl::init("cpu"));
static cl::opt<std::string>
    weights("weights",
            cl::desc("embed (constants in the artifact) | sidecar (large "
                     "constants in OUT.weights, loaded at run time)"),
            cl::init("embed"));
static cl::opt<std::string> symbolPrefix(
    "symbol-prefix",
    cl::desc("Prefix of the C names a shared object exports for its "
             "functions (default: the output's name, e.g. 'mlp_' for "
             "libmlp.so, so function main is mlp_main)"),
    cl::init(""));
static cl::opt<uint64_t> sidecarThreshold(
    "sidecar-threshold",
    cl::desc("with --weights sidecar: constants of at least this many bytes "
             "move to the weights file"),
    cl::init(256));
namespace {

int fail(const llvm::Twine &message) {
  llvm::errs() << "paddle-compile: error: " << message << "\n";
  return 1;
}

} // namespace

int main(int argc, char **argv) {
  paddle::InitTool init(argc, argv);
  paddle::registerCompileFlags();
  // --mlir-print-ir-after=PASS and the other pass manager flags.
  paddle::registerAllPasses();
  registerPassManagerCLOptions();
  cl::ParseCommandLineOptions(argc, argv,
                              "paddle-compile: ahead-of-time compilation\n");
  paddle::AotOptions options;
  std::optional<paddle::ArtifactKind> kind = paddle::parseArtifactKind(emit);
  if (!kind)
    return fail("--emit must be one of so, exe, obj, mlir; got '" + emit + "'");
  options.kind = *kind;
  if (target != "cpu")
    return fail("--target '" + target + "' is not supported (only cpu)");
  if (weights != "embed" && weights != "sidecar")
    return fail("--weights must be embed or sidecar; got '" + weights + "'");
  options.sidecarWeights = weights == "sidecar";
  options.sidecarThreshold = sidecarThreshold;
  if (symbolPrefix.getNumOccurrences())
    options.symbolPrefix = symbolPrefix;
  options.passManagerFlags = true;
  if (llvm::Error error = paddle::checkAotOptions(options, outputFile))
    return fail(llvm::toString(std::move(error)));
  paddle::CompileOptions compileOptions;
  if (llvm::Error error = paddle::readCompileFlags(compileOptions))
    return fail(llvm::toString(std::move(error)));

  DialectRegistry registry;
  paddle::registerAllDialects(registry);
  MLIRContext context(registry);
  context.loadAllAvailableDialects();
  auto source = paddle::SourceModule::load(inputFile, context);
  if (!source)
    return fail(llvm::toString(source.takeError()));
  if (llvm::Error error = paddle::compileAheadOfTime(
          (*source)->get(), compileOptions, options, outputFile))
    return fail(llvm::toString(std::move(error)));
  return 0;
}
