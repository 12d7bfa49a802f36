//===- paddle-run.cpp - run a paddle module: JIT or compiled library ------===//
//
//   paddle-run FILE(.mlir|.mlirbc|.so) [run flags] [compile flags]
//
// Compiles FILE with paddle-cpu-pipeline (or loads a `paddle-compile --emit
// so` library) and hands it to the runtime's command line
// (paddle_cli_run, shared with compiled executables), which takes the run
// flags (--function, --input, --output-dir, --bench, --threads, --trace,
// --memory-limit, --concurrency), runs the function and writes the
// results. Every failure is a message on stderr and exit code 1.
//
//===----------------------------------------------------------------------===//

#include "ToolFlags.h"
#include "paddle/Execution/InitTool.h"
#include "paddle/Execution/Jit.h"
#include "paddle/Execution/SourceModule.h"
#include "paddle/InitAll.h"
#include "paddle/Transforms/Donation.h"
#include "paddle_runtime/runtime.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <sys/stat.h>
#include <thread>
#include <vector>

using namespace mlir;
namespace cl = llvm::cl;

static cl::opt<std::string>
    inputFile(cl::Positional, cl::desc("<module .mlir, .mlirbc or .so>"),
              cl::Required);
static cl::opt<unsigned> compileThreads(
    "compile-threads",
    cl::desc("Threads LLVM compiles the module on, each taking a part of it "
             "(default 0: one per core)"),
    cl::init(0));

namespace {

int fail(const llvm::Twine &message) {
  llvm::errs() << "paddle-run: error: " << message << "\n";
  return 1;
}

std::string takeMessage(paddle_status_t s) {
  std::string m = paddle_status_message(s);
  paddle_status_free(s);
  return m;
}

/// True for an ELF file (a `paddle-compile --emit so` library); anything
/// else is parsed as MLIR. Only a regular file is looked at: reading the
/// start of a stream (a FIFO) would take it from the module's parser.
bool isSharedObject(const std::string &path) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode))
    return false;
  char magic[4] = {};
  FILE *f = fopen(path.c_str(), "rb");
  if (!f)
    return false;
  size_t n = fread(magic, 1, sizeof magic, f);
  fclose(f);
  return n == 4 && memcmp(magic,
                          "\x7f"
                          "ELF",
                          4) == 0;
}

/// The host of paddle_cli_run: the module and the compile flags.
int makeExecutable(void *, int argc, char **argv,
                   const paddle_cli_run_options_t *runOptions,
                   paddle_executable_t *out) {
  paddle::registerCompileFlags();
  // --mlir-print-ir-after=PASS and the other pass manager flags, which the
  // JIT's pass manager applies (the passes registered, to be named).
  paddle::registerAllPasses();
  registerPassManagerCLOptions();
  cl::ParseCommandLineOptions(argc, argv,
                              "paddle-run: JIT-compile and run a paddle "
                              "module on the CPU\n");
  paddle::CompileOptions compileOptions;
  if (llvm::Error error = paddle::readCompileFlags(compileOptions))
    return fail(llvm::toString(std::move(error)));

  if (isSharedObject(inputFile)) {
    // A library is compiled already: its target and options were chosen
    // then.
    std::string given = paddle::getCompileFlagsText();
    if (!given.empty())
      return fail("compile options (" + given +
                  ") apply when compiling a module; '" + inputFile +
                  "' is a compiled library (give them to paddle-compile)");
    if (paddle_status_t s = paddle_executable_load(inputFile.c_str(), out))
      return fail(takeMessage(s));
    return 0;
  }
  DialectRegistry registry;
  paddle::registerAllDialects(registry);
  MLIRContext context(registry);
  context.loadAllAvailableDialects();
  auto source = paddle::SourceModule::load(inputFile, context);
  if (!source)
    return fail(llvm::toString(source.takeError()));
  // paddle-run writes every result, and --bench and --concurrency call the
  // function repeatedly on the same inputs: run without donation.
  paddle::dropDonationRequests((*source)->get());
  if (runOptions->trace)
    compileOptions.instrumentKernels = true;
  paddle::JitOptions options;
  options.compileThreads = compileThreads;
  options.passManagerFlags = true;
  auto jit =
      paddle::JitModule::create((*source)->get(), compileOptions, options);
  if (!jit)
    return fail(llvm::toString(jit.takeError()));
  auto executable = paddle::JitModule::toExecutable(std::move(*jit));
  if (!executable)
    return fail(llvm::toString(executable.takeError()));
  *out = *executable;
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  paddle::InitTool init(argc, argv);
  // The run flags (--input, --bench, --threads, ...) and the loop that runs
  // the function are the runtime's, shared with compiled executables.
  return paddle_cli_run(argc, argv, makeExecutable, nullptr);
}
