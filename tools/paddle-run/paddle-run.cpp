//===- paddle-run.cpp - JIT-compile a paddle module and run it ------------===//
//
//   paddle-run FILE.mlir [--function F] --input a.npy ... [--output-dir D]
//              [--bench N] [--threads N]
//
// Compiles FILE with paddle-cpu-pipeline, reads the inputs, calls the
// function through the runtime and writes each result as D/<F>_<i>.npy (or
// prints small results when no directory is given). Every failure is a
// message on stderr and exit code 1.
//
//===----------------------------------------------------------------------===//

#include "paddle/Execution/Jit.h"
#include "paddle/Execution/SourceModule.h"
#include "paddle/InitAll.h"
#include "paddle_runtime/runtime.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <vector>

using namespace mlir;
namespace cl = llvm::cl;

static cl::opt<std::string> inputFile(cl::Positional,
                                      cl::desc("<module .mlir or .mlirbc>"),
                                      cl::Required);
static cl::opt<std::string>
    functionName("function",
                 cl::desc("Function to run (optional when the module has "
                          "one public function)"),
                 cl::init(""));
static cl::list<std::string> inputs("input",
                                    cl::desc("An input .npy file, in order"));
static cl::opt<std::string>
    outputDir("output-dir",
              cl::desc("Write results as <dir>/<function>_<i>.npy"),
              cl::init(""));
static cl::opt<unsigned>
    benchRuns("bench", cl::desc("Run N more times and print median and min ms"),
              cl::init(0));
// libMLIR already registers a hidden cl::opt named "threads", so --threads
// is taken out of argv before LLVM parses it (see takeThreadsFlag).
static cl::extrahelp
    threadsHelp("\n  --threads N  Threads for parallel loops (default: "
                "PADDLE_NUM_THREADS, else the number of cores)\n");

namespace {

int fail(const llvm::Twine &message) {
  llvm::errs() << "paddle-run: error: " << message << "\n";
  return 1;
}

/// Frees runtime tensors on every exit path.
struct TensorList {
  std::vector<paddle_tensor_t> tensors;
  ~TensorList() {
    for (auto &t : tensors)
      paddle_tensor_free(&t);
  }
};

void printTensor(const paddle_tensor_t &t, unsigned index) {
  llvm::outs() << "result " << index << ": " << paddle_dtype_name(t.dtype)
               << " [";
  for (int32_t d = 0; d < t.rank; ++d)
    llvm::outs() << (d ? ", " : "") << t.shape[d];
  llvm::outs() << "]";
  int64_t n = paddle_tensor_num_elements(&t);
  if (n > 64) {
    llvm::outs() << " (" << n << " elements; use --output-dir to save)\n";
    return;
  }
  llvm::outs() << " = {";
  for (int64_t i = 0; i < n; ++i) {
    if (i)
      llvm::outs() << ", ";
    switch (t.dtype) {
    case PADDLE_F32:
      llvm::outs() << ((float *)t.data)[i];
      break;
    case PADDLE_F64:
      llvm::outs() << ((double *)t.data)[i];
      break;
    case PADDLE_I1:
      llvm::outs() << (((uint8_t *)t.data)[i] ? "true" : "false");
      break;
    case PADDLE_I8:
      llvm::outs() << (int)((int8_t *)t.data)[i];
      break;
    case PADDLE_I32:
      llvm::outs() << ((int32_t *)t.data)[i];
      break;
    case PADDLE_I64:
      llvm::outs() << ((int64_t *)t.data)[i];
      break;
    default:
      llvm::outs() << "?";
      break;
    }
  }
  llvm::outs() << "}\n";
}

/// Removes `--threads N` / `--threads=N` (or one dash) from argv and sets
/// the runtime's thread count; returns false after printing an error.
bool takeThreadsFlag(int &argc, char **argv) {
  int out = 1;
  for (int i = 1; i < argc; ++i) {
    llvm::StringRef arg = argv[i];
    if (arg == "--") {
      while (i < argc)
        argv[out++] = argv[i++];
      break;
    }
    llvm::StringRef flag = arg.starts_with("--")  ? arg.drop_front(2)
                           : arg.starts_with("-") ? arg.drop_front(1)
                                                  : llvm::StringRef();
    std::string value;
    if (flag == "threads") {
      if (i + 1 >= argc) {
        fail("--threads expects a count");
        return false;
      }
      value = argv[++i];
    } else if (flag.consume_front("threads=")) {
      value = flag.str();
    } else {
      argv[out++] = argv[i];
      continue;
    }
    int n = 0;
    if (llvm::StringRef(value).getAsInteger(10, n) || n < 1) {
      fail("--threads expects a count of at least 1, got '" + value + "'");
      return false;
    }
    if (paddle_status_t s = paddle_set_num_threads(n)) {
      std::string m = paddle_status_message(s);
      paddle_status_free(s);
      fail("--threads: " + m);
      return false;
    }
  }
  argc = out;
  argv[argc] = nullptr;
  return true;
}

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  if (!takeThreadsFlag(argc, argv))
    return 1;
  cl::ParseCommandLineOptions(argc, argv,
                              "paddle-run: JIT-compile and run a paddle "
                              "module on the CPU\n");

  DialectRegistry registry;
  paddle::registerAllDialects(registry);
  MLIRContext context(registry);
  context.loadAllAvailableDialects();

  auto source = paddle::SourceModule::load(inputFile, context);
  if (!source)
    return fail(llvm::toString(source.takeError()));
  ModuleOp module = (*source)->get();

  auto jit = paddle::JitModule::create(module);
  if (!jit)
    return fail(llvm::toString(jit.takeError()));
  auto fn = (*jit)->lookup(functionName);
  if (!fn)
    return fail(llvm::toString(fn.takeError()));
  const paddle::JitFunction &f = **fn;

  if (inputs.size() != f.inputs.size())
    return fail("function '" + f.name + "' takes " +
                llvm::Twine(f.inputs.size()) + " inputs, " +
                llvm::Twine(inputs.size()) + " given with --input");
  TensorList args;
  for (const std::string &path : inputs) {
    paddle_tensor_t t{};
    if (paddle_status_t s = paddle_npy_read(path.c_str(), &t)) {
      std::string m = paddle_status_message(s);
      paddle_status_free(s);
      return fail(m);
    }
    args.tensors.push_back(t);
  }

  TensorList results;
  results.tensors.resize(f.outputs.size());
  auto call = [&]() -> paddle_status_t {
    for (auto &t : results.tensors)
      paddle_tensor_free(&t);
    return paddle_invoke(f.entry, &f.signature, args.tensors.data(),
                         args.tensors.size(), results.tensors.data());
  };
  if (paddle_status_t s = call()) {
    std::string m = paddle_status_message(s);
    paddle_status_free(s);
    return fail(m);
  }

  if (benchRuns > 0) {
    std::vector<double> ms;
    for (unsigned i = 0; i < benchRuns; ++i) {
      auto start = std::chrono::steady_clock::now();
      paddle_status_t s = call();
      auto end = std::chrono::steady_clock::now();
      if (s) {
        std::string m = paddle_status_message(s);
        paddle_status_free(s);
        return fail(m);
      }
      ms.push_back(
          std::chrono::duration<double, std::milli>(end - start).count());
    }
    std::sort(ms.begin(), ms.end());
    double median = ms.size() % 2
                        ? ms[ms.size() / 2]
                        : (ms[ms.size() / 2 - 1] + ms[ms.size() / 2]) / 2;
    llvm::outs() << llvm::format(
        "bench %s: %u runs, median %.4f ms, min %.4f ms\n", f.name.c_str(),
        benchRuns.getValue(), median, ms.front());
  }

  if (!outputDir.empty()) {
    if (std::error_code ec = llvm::sys::fs::create_directories(outputDir))
      return fail("cannot create '" + outputDir + "': " + ec.message());
    for (size_t i = 0; i < results.tensors.size(); ++i) {
      llvm::SmallString<256> path(outputDir);
      llvm::sys::path::append(path, f.name + "_" + std::to_string(i) + ".npy");
      if (paddle_status_t s =
              paddle_npy_write(path.c_str(), &results.tensors[i])) {
        std::string m = paddle_status_message(s);
        paddle_status_free(s);
        return fail(m);
      }
    }
  } else if (benchRuns == 0) {
    for (size_t i = 0; i < results.tensors.size(); ++i)
      printTensor(results.tensors[i], i);
  }
  return 0;
}
